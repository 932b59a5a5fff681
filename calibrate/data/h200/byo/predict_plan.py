#!/usr/bin/env python3
"""Writes predictions.csv: colo's kernel-model prediction (fraction of alone speed) of every job
of every set in plan.txt, from the traces alone (`colo predict --traces`), before the runs.
Usage (repo root): python3 calibrate/data/h200/byo/predict_plan.py [COLO] [OUT]
OUT (default predictions.csv, the blind file committed before the runs) names another file for
a later model's predictions of the same sets, which are post hoc, not blind."""
import csv
import gzip
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COLO = sys.argv[1] if len(sys.argv) > 1 else "target/release/colo"
TRACES = os.path.join(HERE, "traces")


def points():
    out = {}
    for name in os.listdir(TRACES):
        if name.startswith("cmd_") and name.endswith(".trace.json.gz"):
            with gzip.open(os.path.join(TRACES, name), "rt") as f:
                point = json.load(f)["point"]
            out[point.split(":")[0]] = point
    return out


def sets():
    for line in open(os.path.join(HERE, "plan.txt")):
        line = line.split("#")[0].split()
        if line:
            yield line[0], line[1], line[2], line[3:]


def main():
    known = points()
    rows = []
    for set_id, mode, sm, programs in sets():
        if mode == "exclusive":
            continue
        jobs = [p[4:] if p.startswith("zoo:") else known[p] for p in programs]
        cmd = [COLO, "predict", "--traces", TRACES, "--mode", mode, "--format", "json", *jobs]
        if sm != "-":
            cmd += ["--sm-pct", sm]
        answer = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        for rank, (program, job) in enumerate(zip(programs, answer["jobs"])):
            rows.append({
                "set": set_id, "mode": mode, "sm_pct": sm, "rank": rank, "program": program,
                "point": f"{job['model']}:{job['batch']}:{job['image']}", "predicted_fraction": job["fraction_of_exclusive"],
                "predicted_samples_per_s": job["samples_per_s"], "uncertainty_pct": job.get("uncertainty_pct"),
                "model": answer.get("perf_model"), "equal_share": 1.0 / len(programs),
            })
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "predictions.csv")
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    for r in rows:
        print(f"{r['set']:20} {r['program']:22} {r['predicted_fraction']:.3f}  {r['model']}")


if __name__ == "__main__":
    main()
