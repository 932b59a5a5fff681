#!/usr/bin/env python3
"""Score the pre-registered zoo3 predictions against the measured part J store.
Fraction of alone: a co-run's median samples/s over the median of the same point alone on the
same GPU (part J ran on two GPUs, one per device call; each call re-ran the alone baselines).
A set whose repeats ran on both GPUs is scored once per GPU, so a "score" is a job on one GPU.
usage (from the repository root): python3 calibrate/data/h200/logs/zoo3-score.py"""
import collections, csv, gzip, json, statistics as st

LOGS = "calibrate/data/h200/logs"
records = [json.loads(l) for l in gzip.open(f"{LOGS}/zoo3-calls/h200-zoo3.jsonl.gz", "rt")]
ok = [r for r in records if r["status"] == "ok"]
alone, corun = collections.defaultdict(list), collections.defaultdict(list)
for r in ok:
    if r["mode"] == "exclusive":
        alone[(r["gpu_uuid"], r["point"])].append(r["samples_per_s"])
    else:
        corun[(r["gpu_uuid"], r["group"], r["set_index"], r["rank"])].append(r["samples_per_s"])
predicted = {(p["group"], int(p["set_index"]), int(p["rank"])): p
             for p in csv.DictReader(open(f"{LOGS}/zoo3-predictions/kernel-d5785bc.csv"))}
errors, jobs = collections.defaultdict(list), []
for (gpu, group, index, rank), rates in sorted(corun.items()):
    p = predicted[(group, index, rank)]
    measured = st.median(rates) / st.median(alone[(gpu, p["point"])])
    error = float(p["predicted_fraction_of_alone"]) / measured - 1
    jobs.append((error, p["point"], group, measured, float(p["predicted_fraction_of_alone"]), len(rates)))
    errors[group].append(error)
    errors[f"all {p['mode']}"].append(error)
print(f"{len(records)} records, {len(ok)} ok, {len(jobs)} job scores "
      f"({len(predicted)} predicted; the rest did not run)")
print(f"{'set':20s} {'scores':>6s} {'MAPE':>6s} {'bias':>7s}")
for name, es in sorted(errors.items()):
    print(f"{name:20s} {len(es):6d} {100 * st.mean(map(abs, es)):5.1f}% {100 * st.mean(es):+6.1f}%")
print("largest misses (error, point, group, measured, predicted fraction, repeats):")
for job in sorted(jobs, key=lambda j: -abs(j[0]))[:8]:
    print(f"  {job[0]:+.3f} {job[1]:30s} {job[2]:16s} {job[3]:.3f} {job[4]:.3f} {job[5]}")
