#!/usr/bin/env python3
"""Scores predictions.csv (committed before the runs) against the co-runs in store/.

Per job: measured fraction of alone = its samples/s in the set / its samples/s alone in the
same session on the same GPU (the a_* sets); predicted fraction from predictions.csv; the
error is |predicted - measured| / measured. Beside it, equal share (1/n). Each set ran once
(`--once`): no repeat noise floor; the alone runs of the session against the traces' unprofiled
windows (another H200, earlier the same day) are printed as the cross-GPU spread.
Writes score.csv and prints the tables. Usage: python3 calibrate/data/h200/byo/score.py"""
import csv
import gzip
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COLO = sys.argv[1] if len(sys.argv) > 1 else "target/release/colo"


def anchored(set_rows, points, alone):
    """The committed model's prediction with each job's trace anchored to its alone run of this
    session (`colo predict --alone-rate`): alone measurements only, no co-run data."""
    first = set_rows[0]
    cmd = [COLO, "predict", "--traces", os.path.join(HERE, "traces"), "--mode", first["mode"],
           "--format", "json", *points]
    if first["sm_pct"] != "-":
        cmd += ["--sm-pct", first["sm_pct"]]
    for r, point in zip(set_rows, points):
        cmd += ["--alone-rate", f"{point}={alone[r['program']]}"]
    answer = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return [j["fraction_of_exclusive"] for j in answer["jobs"]]


def program_of(command):
    cmd = command.split("; ")[-1]
    if "zoo_point.py" in cmd:
        return "zoo:" + cmd.split()[-1]
    return {
        "bert_mlm.py": "bert_mlm", "hf_trainer_gpt2.py": "hf_gpt2", "lora_peft.py": "lora_llama",
        "lm_grad_accum.py": "lm_accum", "timm_amp_channels_last.py": "timm_amp_cl",
        "lightning_resnet50.py": "lightning_r50", "dataloader_bound.py": "data_bound",
    }[os.path.basename(cmd.split()[1])]


def measured():
    rates = {}
    for name in sorted(os.listdir(os.path.join(HERE, "store"))):
        for line in open(os.path.join(HERE, "store", name)):
            r = json.loads(line)
            rates[(r["plan"], r["rank"])] = (program_of(r["command"]), r["samples_per_s"], r["status"], r["gpu_uuid"])
    return rates


def trace_rates():
    out = {}
    traces = os.path.join(HERE, "traces")
    for name in os.listdir(traces):
        if name.endswith(".trace.json.gz"):
            with gzip.open(os.path.join(traces, name), "rt") as f:
                t = json.load(f)
            out[t["model"]] = t["unprofiled"]["samples_per_s"]
    return out


def mape(rows, key):
    return 100 * statistics.mean(abs(r[key] - r["measured_fraction"]) / r["measured_fraction"] for r in rows)


def main():
    rates = measured()
    alone = {prog: rate for (plan, _), (prog, rate, status, _) in rates.items() if plan.startswith("a_") and status == "ok"}
    rows = []
    for p in csv.DictReader(open(os.path.join(HERE, "predictions.csv"))):
        prog, rate, status, gpu = rates[(p["set"], int(p["rank"]))]
        assert prog == p["program"], (p, prog)
        frac = rate / alone[prog]
        pred, equal = float(p["predicted_fraction"]), float(p["equal_share"])
        rows.append({
            "set": p["set"], "mode": p["mode"], "sm_pct": p["sm_pct"], "program": prog,
            "measured_samples_per_s": rate, "alone_samples_per_s": alone[prog],
            "measured_fraction": frac, "predicted_fraction": pred, "equal_share": equal,
            "error_pct": 100 * (pred - frac) / frac, "gpu_uuid": gpu,
        })
    by_set, points = {}, {}
    for p in csv.DictReader(open(os.path.join(HERE, "predictions.csv"))):
        by_set.setdefault(p["set"], []).append(p["point"])
    for set_id, pts in by_set.items():
        set_rows = [r for r in rows if r["set"] == set_id]
        for r, frac in zip(set_rows, anchored(set_rows, pts, alone)):
            r["anchored_fraction"] = frac
            r["anchored_error_pct"] = 100 * (frac - r["measured_fraction"]) / r["measured_fraction"]
    with open(os.path.join(HERE, "score.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{'set':20} {'program':22} {'measured':>8} {'blind':>7} {'error':>7} {'anchored':>8} {'error':>7}")
    for r in rows:
        print(f"{r['set']:20} {r['program']:22} {r['measured_fraction']:8.3f} {r['predicted_fraction']:7.3f} "
              f"{r['error_pct']:+6.1f}% {r['anchored_fraction']:8.3f} {r['anchored_error_pct']:+6.1f}%")
    print()
    classes = [("MPS (pairs and sets of 3)", lambda r: r["mode"] == "mps" and r["sm_pct"] == "-"),
               ("time-sliced pairs", lambda r: r["mode"] == "timeslice"),
               ("MPS SM budgets (pairs)", lambda r: r["sm_pct"] != "-")]
    print("MAPE of the fraction of alone speed (signed: mean error); blind = predictions.csv as")
    print("committed (traces' own alone speed); anchored = the same model, each trace anchored to")
    print("its alone run of this session on this GPU (--alone-rate)")
    print(f"{'class':28} {'jobs':>4} {'blind':>7} {'signed':>7} {'anchored':>8} {'signed':>7} {'equal share':>11}")
    for label, keep in classes + [("all", lambda r: True)]:
        sel = [r for r in rows if keep(r)]
        print(f"{label:28} {len(sel):4} {mape(sel, 'predicted_fraction'):6.1f}% "
              f"{statistics.mean(r['error_pct'] for r in sel):+6.1f}% {mape(sel, 'anchored_fraction'):7.1f}% "
              f"{statistics.mean(r['anchored_error_pct'] for r in sel):+6.1f}% {mape(sel, 'equal_share'):10.1f}%")
    print()
    traced = trace_rates()
    print("alone: this session's run vs the trace's unprofiled window (another H200, same day)")
    for prog, rate in sorted(alone.items()):
        if prog in traced:
            print(f"  {prog:16} alone {rate:9.1f}  trace {traced[prog]:9.1f}  {100 * (traced[prog] - rate) / rate:+6.1f}%")


if __name__ == "__main__":
    main()
