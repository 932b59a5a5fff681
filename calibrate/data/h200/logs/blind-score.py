#!/usr/bin/env python3
"""Score a blind test's pre-registered predictions against its measured store.
Fraction of alone: a co-run's median samples/s over the median of the same point alone on the
same GPU (a blind plan runs over several device calls, each on its own GPU, and each call re-runs
the alone baselines). A set whose repeats ran on two GPUs is scored once per GPU, so a "score" is
a job on one GPU. Also scored on samples/s: the predicted samples/s (the fraction times the
profile's alone rate, committed with the predictions) against the co-run's median samples/s as
measured, with no same-GPU alone run in between (launch-bound points' alone runs are unsteady).
usage (from the repository root):
  python3 calibrate/data/h200/logs/blind-score.py PLAN PREDICTIONS.csv [STORE.jsonl]
  e.g. blind-score.py h200-zoo3 calibrate/data/h200/logs/zoo3-predictions/kernel-d5785bc.csv
STORE defaults to calibrate/data/h200/PLAN.jsonl."""
import collections, csv, json, statistics as st, sys

plan, predictions = sys.argv[1], sys.argv[2]
store = sys.argv[3] if len(sys.argv) > 3 else f"calibrate/data/h200/{plan}.jsonl"
records = [json.loads(l) for l in open(store)]
ok = [r for r in records if r["status"] == "ok"]
alone, corun = collections.defaultdict(list), collections.defaultdict(list)
for r in ok:
    if r["mode"] == "exclusive":
        alone[(r["gpu_uuid"], r["point"])].append(r["samples_per_s"])
    else:
        corun[(r["gpu_uuid"], r["group"], r["set_index"], r["rank"])].append(r["samples_per_s"])
predicted = {(p["group"], int(p["set_index"]), int(p["rank"])): p
             for p in csv.DictReader(open(predictions))}
errors, rate_errors, jobs = collections.defaultdict(list), collections.defaultdict(list), []
for (gpu, group, index, rank), rates in sorted(corun.items()):
    p = predicted.get((group, index, rank))
    if p is None or (gpu, p["point"]) not in alone:
        continue
    measured = st.median(rates) / st.median(alone[(gpu, p["point"])])
    error = float(p["predicted_fraction_of_alone"]) / measured - 1
    jobs.append((error, p["point"], group, measured, float(p["predicted_fraction_of_alone"]), len(rates)))
    errors[group].append(error)
    errors[f"all {p['mode']}"].append(error)
    rate_error = float(p["predicted_samples_per_s"]) / st.median(rates) - 1
    rate_errors[group].append(rate_error)
    rate_errors[f"all {p['mode']}"].append(rate_error)
print(f"{len(records)} records, {len(ok)} ok, {len(jobs)} job scores "
      f"({len(predicted)} predicted; the rest did not run)")
print(f"{'set':20s} {'scores':>6s} {'MAPE':>6s} {'bias':>7s} {'rate MAPE':>10s} {'rate bias':>10s}")
for name, es in sorted(errors.items()):
    rs = rate_errors[name]
    print(f"{name:20s} {len(es):6d} {100 * st.mean(map(abs, es)):5.1f}% {100 * st.mean(es):+6.1f}%"
          f" {100 * st.mean(map(abs, rs)):9.1f}% {100 * st.mean(rs):+9.1f}%")
print("largest misses (error, point, group, measured, predicted fraction, repeats):")
for job in sorted(jobs, key=lambda j: -abs(j[0]))[:8]:
    print(f"  {job[0]:+.3f} {job[1]:30s} {job[2]:16s} {job[3]:.3f} {job[4]:.3f} {job[5]}")
