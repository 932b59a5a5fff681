#!/usr/bin/env python3
"""Pre-registered predictions for a blind-test plan (h200-zoo3, h200-zoo4): `colo predict` (kernel
model, shipped profile) for every co-run set of the plan, written before the plan runs on a GPU.
usage (from the repository root):
  python3 calibrate/data/h200/logs/blind-predict.py PLAN COLO OUT.csv [GPU ARGS...]
GPU ARGS replace `--gpu h200`, e.g. `--gpu h100 --traces calibrate/data/h200/traces` (traces
transferred to a GPU without a profile)."""
import csv, json, re, subprocess, sys

plan_name, colo, out = sys.argv[1], sys.argv[2], sys.argv[3]
gpu_args = sys.argv[4:] or ["--gpu", "h200"]
plan = open(f"calibrate/plans/{plan_name}.ron").read()
# emulated MIG slices run as MPS clients at these SM percentages (the plan's dry run prints them)
mig_pct = {"2g.35gb": 24, "3g.71gb": 45}
rows = []
for gid, mode, rest in re.findall(r'\(id: "([^"]+)", mode: (\w+),(.*?)\),\n', plan, re.S):
    if mode == "Exclusive":
        continue
    profiles = re.findall(r'mig_profiles: \[([^\]]*)\]', rest)
    profiles = re.findall(r'"([^"]+)"', profiles[0]) if profiles else []
    sets_src = rest[rest.index("sets:"):]
    for index, members in enumerate(re.findall(r'\[("[^\[\]]*")\]', sets_src)):
        jobs = re.findall(r'"([^"]+)"', members)
        args = [colo, "predict", *gpu_args, "--format", "json"]
        if mode == "Mps":
            args += ["--mode", "mps"]
        elif mode == "Timeslice":
            args += ["--mode", "timeslice"]
        elif mode == "MigEmulated":
            args += ["--mode", "mps", "--sm-pct", ",".join(str(mig_pct[p]) for p in profiles)]
        answer = json.loads(subprocess.run(args + jobs, check=True, capture_output=True, text=True).stdout)
        for rank, job in enumerate(answer["jobs"]):
            rows.append({
                "group": gid, "set_index": index, "mode": mode, "rank": rank,
                "point": f'{job["model"]}:{job["batch"]}:{job["image"]}',
                "set": " + ".join(jobs),
                "perf_model": answer["perf_model"],
                "predicted_fraction_of_alone": f'{job["fraction_of_exclusive"]:.4f}',
                "predicted_samples_per_s": f'{job["samples_per_s"]:.1f}',
                "profile_alone_samples_per_s": f'{job["exclusive_samples_per_s"]:.1f}',
                # None where colo gives no band (e.g. traces taken on the GPU asked about).
                "uncertainty_pct": '' if job["uncertainty_pct"] is None else f'{job["uncertainty_pct"]:.1f}',
            })
with open(out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader(); w.writerows(rows)
print(f"{len(rows)} predicted jobs -> {out}")
