#!/usr/bin/env python3
"""Writes predictions.csv: the committed kernel model's prediction (fraction of alone speed) of
every job of every co-run set in plan.txt, from this session's traces alone
(`colo predict --gpu GPU --traces traces/`), before the sets run.

mig-emulated sets get two predictions: `predicted_fraction` from `--mode mps --sm-pct` with the
percentages the runner gives the slices (the same MPS processes, the blind prediction) and
`mig_path_fraction` from `--mode mig --layout` (isolated slices).
Usage (repo root): predict_plan.py COLO GPU [OUT]   (GPU: h200 or h100-80gb)
       predict_plan.py COLO GPU --set ID        appends set ID's rows to predictions.csv, right
                                                before the set runs (nothing if it has rows)
       predict_plan.py --samples-per-step PROGRAM   (from its trace's point)"""
import csv
import gzip
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRACES = os.path.join(HERE, "traces")
# Slices 3g and 4g of the GPU and the MPS percentages the runner emulates them with
# (calibrate::plan::emulated_sm_percent: 60 and 64 of 132 SMs on both GPUs).
SLICES = {"h200": ("3g.71gb,4g.71gb", "45,48"), "h100-80gb": ("3g.40gb,4g.40gb", "45,48")}


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


def predict(colo, gpu, mode, jobs, extra):
    cmd = [colo, "predict", "--gpu", gpu, "--traces", TRACES, "--mode", mode, "--format", "json", *jobs, *extra]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def rows_of(colo, gpu, set_id, mode, programs, known):
    layout, percents = SLICES[gpu]
    jobs = [known[p] for p in programs]
    mig_path = None
    if mode == "mig-emulated":
        answer = predict(colo, gpu, "mps", jobs, ["--sm-pct", percents])
        mig_path = predict(colo, gpu, "mig", jobs, ["--layout", layout])["jobs"]
    else:
        answer = predict(colo, gpu, mode, jobs, [])
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return [{
        "set": set_id, "mode": mode, "slices": layout if mode == "mig-emulated" else "-",
        "rank": rank, "program": program, "point": f"{job['model']}:{job['batch']}:{job['image']}",
        "predicted_fraction": job["fraction_of_exclusive"],
        "mig_path_fraction": mig_path[rank]["fraction_of_exclusive"] if mig_path else "",
        "predicted_samples_per_s": job["samples_per_s"], "uncertainty_pct": job.get("uncertainty_pct"),
        "model": answer.get("perf_model"), "gpu": gpu, "equal_share": 1.0 / len(programs),
        "predicted_at": at,
    } for rank, (program, job) in enumerate(zip(programs, answer["jobs"]))]


def main():
    if sys.argv[1] == "--samples-per-step":
        print(points()[sys.argv[2]].split(":")[1])
        return
    colo, gpu = sys.argv[1], sys.argv[2]
    known = points()
    if len(sys.argv) > 4 and sys.argv[3] == "--set":
        # One set, appended just before it runs; a set that already has rows keeps them.
        out = os.path.join(HERE, "predictions.csv")
        done = {r["set"] for r in csv.DictReader(open(out))} if os.path.exists(out) else set()
        if sys.argv[4] in done:
            return
        (set_id, mode, _, programs), = [s for s in sets() if s[0] == sys.argv[4]]
        rows = rows_of(colo, gpu, set_id, mode, programs, known)
        new = not os.path.exists(out)
        with open(out, "a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            if new:
                writer.writeheader()
            writer.writerows(rows)
    else:
        rows = [row for set_id, mode, _, programs in sets() if mode != "exclusive"
                for row in rows_of(colo, gpu, set_id, mode, programs, known)]
        out = sys.argv[3] if len(sys.argv) > 3 else os.path.join(HERE, "predictions.csv")
        with open(out, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    for r in rows:
        print(f"{r['set']:18} {r['program']:14} {r['predicted_fraction']:.3f} {r['mig_path_fraction'] or ''} ({r['predicted_at']})")

if __name__ == "__main__":
    main()
