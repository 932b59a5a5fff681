"""Checks of docs/trust/kill-pass.sh after a complete run.

kill_check.py run OUT SUMMARY_TXT SUMMARY_STDERR   (the store OUT/kill.jsonl of kill-pass.sh's plan)
kill_check.py trace DIR N_POINTS                   (a `colo calibrate trace` folder)
Prints what is wrong and exits 1, or exits 0.
"""

import gzip
import json
import os
import sys
from collections import Counter

PROBLEMS = []


def problem(text):
    PROBLEMS.append(text)
    print("  " + text)


def hidden_files(folder):
    """Temporaries (write_atomic's .NAME.tmpPID) left anywhere under folder."""
    for root, _, files in os.walk(folder):
        for name in files:
            if name.startswith("."):
                problem(f"temporary left: {os.path.join(root, name)}")


def check_traces(folder, n_points, failing=()):
    index = os.path.join(folder, "index.jsonl")
    entries = []
    with open(index, "rb") as f:
        for n, line in enumerate(f.read().split(b"\n"), 1):
            if not line.strip():
                continue
            try:
                entries.append(json.loads(line))
            except ValueError as e:
                problem(f"{index}:{n}: unreadable index line ({e})")
    ok = Counter(e["file"] for e in entries if e["status"] == "ok")
    on_disk = {f for f in os.listdir(folder) if f.endswith(".trace.json.gz")}
    for f, count in ok.items():
        if count > 1:
            problem(f"{f}: {count} ok index lines")
        if f not in on_disk:
            problem(f"{f}: indexed ok but no file")
    for f in sorted(on_disk - set(ok)):
        problem(f"{f}: file without an ok index line")
    for f in on_disk:
        try:
            with gzip.open(os.path.join(folder, f)) as g:
                json.load(g)
        except Exception as e:  # noqa: BLE001 - any unreadable file is a finding
            problem(f"{f}: unreadable trace file ({e})")
    if len(on_disk) != n_points:
        problem(f"{len(on_disk)} trace files, expected {n_points}")
    for point in failing:
        if not any(e["point"] == point and e["status"] != "ok" for e in entries):
            problem(f"{point}: no failure line in the index")
    hidden_files(folder)


def check_run(out, summary_txt, summary_err):
    store = os.path.join(out, "kill.jsonl")
    keys = Counter()
    bad = []
    with open(store, "rb") as f:
        for n, line in enumerate(f.read().split(b"\n"), 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except ValueError:
                bad.append(n)
                continue
            if r["status"] == "ok":
                keys[(r["group"], r["set_index"], r["repeat"], r["rank"])] += 1
    expected = set()
    for group, sets, ranks in [("alone", 3, 1), ("pairs", 2, 2), ("mps", 1, 2)]:
        for s in range(sets):
            for rep in range(3):
                for rank in range(ranks):
                    expected.add((group, s, rep, rank))
    for k in sorted(expected - set(keys)):
        problem(f"record lost: {k}")
    for k in sorted(set(keys) - expected):
        problem(f"unexpected record: {k}")
    dups = sum(c - 1 for c in keys.values())
    if dups and "duplicate" not in summary_err:
        problem(f"{dups} duplicate records, not reported by summary")
    for n in bad:
        if f"kill.jsonl:{n}:" not in summary_err:
            problem(f"torn line {n} not reported as kill.jsonl:{n}: ({summary_err!r})")
    rows = 0
    with open(summary_txt) as f:
        for line in f:
            cols = line.split()
            if len(cols) > 5 and cols[4].isdigit():
                rows += 1
                if cols[4] != "3" or cols[5] != "0":
                    problem(f"summary row with ok={cols[4]} fail={cols[5]}: {line.strip()}")
    if rows != 9:
        problem(f"summary has {rows} rows, expected 9")
    print(f"  store: {sum(keys.values())} ok records, {dups} duplicates, {len(bad)} torn lines")
    check_traces(os.path.join(out, "traces"), 3)
    hidden_files(out)


def main():
    if sys.argv[1] == "run":
        check_run(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        check_traces(sys.argv[2], int(sys.argv[3]) - 2, failing=("crash:1:1", "oom:1:1"))
    sys.exit(1 if PROBLEMS else 0)


main()
