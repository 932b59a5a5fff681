#!/usr/bin/env python3
"""Scores predictions.csv (written on the GPU machine before any set ran, by the model committed
before the session) against the sets in store/.

Per job: measured fraction of alone = its samples/s in the set / its samples/s alone in this
session (the a_* sets, same GPU); error = (predicted - measured) / measured. Beside it, equal
share (1/n), and for mig-emulated sets the isolated-slice MIG path. Each set ran once: no
repeat noise floor. Also prints each program's trace (unprofiled window) against its alone run,
issue 31's "trace's alone rate within 3%" check. Writes score.csv, prints the tables.
Usage (repo root): python3 calibrate/data/byo-v2/score.py"""
import csv
import gzip
import json
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = {
    "bert_mlm.py": "bert_mlm", "hf_trainer_gpt2.py": "hf_gpt2", "lora_peft.py": "lora_llama",
    "lm_grad_accum.py": "lm_accum", "timm_amp_channels_last.py": "timm_amp_cl",
    "lightning_resnet50.py": "lightning_r50", "dataloader_bound.py": "data_bound", "zoo_point.py": "zoo_r50",
}


def program_of(command):
    return PROGRAMS[os.path.basename(command.split("; ")[-1].split()[1])]


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
    return 100 * statistics.mean(abs(float(r[key]) - r["measured_fraction"]) / r["measured_fraction"] for r in rows)


def signed(rows, key):
    return 100 * statistics.mean((float(r[key]) - r["measured_fraction"]) / r["measured_fraction"] for r in rows)


def main():
    rates = measured()
    alone = {prog: rate for (plan, _), (prog, rate, status, _) in rates.items()
             if plan.startswith("a_") and status == "ok" and rate}
    rows, skipped = [], []
    for p in csv.DictReader(open(os.path.join(HERE, "predictions.csv"))):
        got = rates.get((p["set"], int(p["rank"])))
        if got is None or got[2] != "ok" or not got[1] or p["program"] not in alone:
            skipped.append(f"{p['set']} {p['program']}: {'not run' if got is None else got[2]}")
            continue
        prog, rate, _, gpu = got
        assert prog == p["program"], (p, prog)
        frac = rate / alone[prog]
        pred = float(p["predicted_fraction"])
        rows.append({
            "set": p["set"], "mode": p["mode"], "slices": p["slices"], "program": prog,
            "measured_samples_per_s": rate, "alone_samples_per_s": alone[prog],
            "measured_fraction": frac, "predicted_fraction": pred, "mig_path_fraction": p["mig_path_fraction"],
            "equal_share": float(p["equal_share"]), "error_pct": 100 * (pred - frac) / frac, "gpu_uuid": gpu,
        })
    with open(os.path.join(HERE, "score.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{'set':18} {'program':14} {'measured':>8} {'blind':>7} {'error':>7} {'mig path':>8}")
    for r in rows:
        mig = f"{float(r['mig_path_fraction']):8.3f}" if r["mig_path_fraction"] else f"{'':8}"
        print(f"{r['set']:18} {r['program']:14} {r['measured_fraction']:8.3f} {r['predicted_fraction']:7.3f} "
              f"{r['error_pct']:+6.1f}% {mig}")
    for s in skipped:
        print(f"skipped: {s}")
    print()
    classes = [("MPS (pairs and sets of 3)", lambda r: r["mode"] == "mps"),
               ("time-sliced pairs", lambda r: r["mode"] == "timeslice"),
               ("emulated MIG 3g+4g (MPS budgets)", lambda r: r["mode"] == "mig-emulated")]
    print("MAPE of the fraction of alone speed (signed: mean error), blind: predictions.csv")
    print(f"{'class':34} {'jobs':>4} {'blind':>7} {'signed':>7} {'equal share':>11} {'mig path':>8}")
    for label, keep in classes + [("all", lambda r: True)]:
        sel = [r for r in rows if keep(r)]
        if not sel:
            continue
        mig = [r for r in sel if r["mig_path_fraction"]]
        mig_txt = f"{mape(mig, 'mig_path_fraction'):7.1f}%" if mig else f"{'-':>8}"
        print(f"{label:34} {len(sel):4} {mape(sel, 'predicted_fraction'):6.1f}% "
              f"{signed(sel, 'predicted_fraction'):+6.1f}% {mape(sel, 'equal_share'):10.1f}% {mig_txt}")
    print()
    traced = trace_rates()
    print("alone: the trace's unprofiled window vs the same program's alone run, same GPU, same session")
    gaps = []
    for prog, rate in sorted(alone.items()):
        if prog in traced:
            gaps.append(100 * (traced[prog] - rate) / rate)
            print(f"  {prog:14} alone {rate:9.1f}  trace {traced[prog]:9.1f}  {gaps[-1]:+6.1f}%")
    if gaps:
        print(f"  within 3%: {sum(abs(g) <= 3 for g in gaps)} of {len(gaps)}, mean |gap| {statistics.mean(abs(g) for g in gaps):.1f}%")


if __name__ == "__main__":
    main()
