"""Prints, per program, the trace's unprofiled rate beside the same command's alone run on the
same GPU (calibrate/data/h100/byo-alone-check/, or the folder given), and with --write-csv
writes compare.csv there. Run from the repo root."""
import csv
import gzip
import json
import statistics
import sys
from pathlib import Path

ARGS = [a for a in sys.argv[1:] if a != "--write-csv"]
HERE = Path(ARGS[0] if ARGS else "calibrate/data/h100/byo-alone-check")
rows = []
for trace_file in sorted((HERE / "traces").glob("cmd_*.trace.json.gz")):
    trace = json.loads(gzip.open(trace_file).read())
    name = trace_file.name[len("cmd_"):-len(".trace.json.gz")]
    store = HERE / "store" / f"a_{name}.jsonl"
    if not store.exists():
        continue
    runs = [json.loads(line) for line in store.read_text().splitlines() if line.strip()]
    ok = [r for r in runs if r.get("status") == "ok" and r.get("samples_per_s")]
    if not ok:
        print(f"{name}: no alone rate in {store} (the run recorded no samples in its window); left out")
        continue
    alone = ok[-1]["samples_per_s"]
    traced = trace["unprofiled"]["samples_per_s"]
    profiled = trace["profiled"]["samples_per_s"]
    rows.append({
        "program": name,
        "point": trace["point"],
        "gpu_uuid_trace": trace.get("gpu_uuid"),
        "gpu_uuid_alone": ok[-1].get("gpu_uuid"),
        "trace_unprofiled_samples_per_s": round(traced, 2),
        "trace_profiled_samples_per_s": round(profiled, 2),
        "alone_run_samples_per_s": round(alone, 2),
        "alone_window_s": round(ok[-1].get("window_s") or 0, 2),
        "trace_vs_alone_pct": round(100 * (traced / alone - 1), 2),
    })
if rows and "--write-csv" in sys.argv:
    with open(HERE / "compare.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
print(f"{'program':16} {'trace unprof':>12} {'trace prof':>10} {'alone run':>10} {'trace/alone':>11}")
for r in rows:
    print(f"{r['program']:16} {r['trace_unprofiled_samples_per_s']:12.1f} {r['trace_profiled_samples_per_s']:10.1f} "
          f"{r['alone_run_samples_per_s']:10.1f} {r['trace_vs_alone_pct']:+10.1f}%")
if rows:
    errs = [abs(r["trace_vs_alone_pct"]) for r in rows]
    print(f"|trace/alone - 1|: mean {statistics.mean(errs):.1f}%, median {statistics.median(errs):.1f}%, "
          f"max {max(errs):.1f}%, within 3%: {sum(e <= 3 for e in errs)} of {len(errs)}")
