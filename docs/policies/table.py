"""Prints the table of docs/policies/README.md from the summaries of a philly-policies run
(default: docs/policies/summaries/, the copies committed from the run the page describes):
    colo simulate scenarios/policies/philly-policies.ron --out /tmp/pp
    python3 docs/policies/table.py /tmp/pp          # reads /tmp/pp/<variant>/summary.json
"""
import json
import sys
from pathlib import Path

ORDER = [f"{o}-{p}-{m}" for o in ("fifo", "las", "srtf")
         for p in ("exclusive", "bestfit", "spread", "leastslow") for m in ("mps", "ts")]


def summary(root, variant):
    nested = root / variant / "summary.json"
    return json.loads((nested if nested.exists() else root / f"{variant}.json").read_text())


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/policies/summaries")
    print("| variant | mean JCT h | p95 JCT h | mean wait h | makespan h | utilization | energy MWh | samples/J | preemptions |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for v in ORDER:
        s = summary(root, v)
        e = s["energy"]
        print(f"| {v} | {s['jct_s']['mean'] / 3600:.1f} | {s['jct_s']['p95'] / 3600:.1f} | "
              f"{s['wait_s']['mean'] / 3600:.1f} | {s['makespan_s'] / 3600:.0f} | {s['utilization']:.2f} | "
              f"{e['energy_kwh'] / 1000:.1f} | {e['samples_per_joule']:.3f} | {s['preemptions']:,} |")


if __name__ == "__main__":
    main()
