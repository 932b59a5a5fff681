#!/usr/bin/env python3
"""Bandwidth-bound kernel time under an MPS SM budget: power law against a smooth roofline.

usage (from the repository root): python3 calibrate/data/h200/logs/budget-roofline.py

For each point and budget in calibrate/data/h200/budget-traces, the time per iteration of all
bandwidth-bound kernels (colo's name rule, calibrate/src/trace.rs) measured under the budget is
compared with the time predicted from the point's alone trace (calibrate/data/h200/traces) by
stretching each kernel as colo's kernel model does (waves on the fewer SMs; resident blocks per
SM from the traced occupancy, an approximation of colo's register/shared-memory rule):
  power law      (f/a)^b
  roofline       r sqrt((1 + (k/r)^2) / (1 + k^2)),  r = f/a,  k = knee / waves^omega
Each rule's parameters are chosen on a grid to minimise the mean |log(measured / predicted)|
over the point-budgets; prints that error per rule and each point-budget's ratio.
"""
import glob, gzip, json, math, os

COMPUTE = ["gemm", "conv", "xmma", "fmha", "attention", "wgrad", "dgrad", "fprop", "winograd", "cutlass"]
ROOT = "calibrate/data/h200"
SMS = 132


def kernels(path):
    r = json.load(gzip.open(path))
    k, names = r["kernels"], r["names"]
    out = []
    for i in range(len(k["name"])):
        if k["kind"][i] != 0 or any(c in names[k["name"][i]].lower() for c in COMPUTE):
            continue
        g, b = k["grid"][i], k["block"][i]
        blocks, threads, occ = g[0] * g[1] * g[2], b[0] * b[1] * b[2], k["occupancy_pct"][i]
        resident = max(1, int(occ / 100 * 2048 / threads)) if occ and occ > 0 else 1
        out.append((k["dur_ns"][i], blocks, resident))
    return r, out, r["profiled"]["n_iterations"]


def stretch(blocks, resident, sms, rule):
    waves = blocks / (SMS * resident)
    fill = min(1.0, waves)
    if fill <= sms / SMS:
        return 1.0
    share = fill * math.ceil(waves) / math.ceil(blocks / (sms * resident))
    ratio = fill / share
    if rule[0] == "power":
        return ratio ** rule[1]
    knee = rule[1] / max(1.0, waves) ** rule[2]
    return ratio * math.sqrt((1 + (knee / ratio) ** 2) / (1 + knee * knee))


cases = []
for f in sorted(glob.glob(f"{ROOT}/budget-traces/budget*/*.trace.json.gz")):
    rb, under, it_b = kernels(f)
    _, alone, it_a = kernels(f"{ROOT}/traces/{os.path.basename(f)}")
    cases.append((rb["point"], rb["sm_count"], sum(d for d, _, _ in under) / it_b, alone, it_a))


def ratios(rule):
    return [m / (sum(d * stretch(b, r, sms, rule) for d, b, r in alone) / it) for _, sms, m, alone, it in cases]


def error(rule):
    v = ratios(rule)
    return sum(abs(math.log(x)) for x in v) / len(v)


grids = {
    "power law": [("power", b / 100) for b in range(30, 101, 2)],
    "roofline, knee fixed": [("roof", k / 20, 0.0) for k in range(10, 80)],
    "roofline, knee moves with waves": [("roof", k / 20, w / 100) for k in range(10, 80) for w in range(0, 41, 5)],
}
best = {}
for name, grid in grids.items():
    best[name] = min(grid, key=error)
    print(f"{name:32s} {str(best[name][1:]):18s} mean |log(measured/predicted)| {100 * error(best[name]):5.1f}%")
print(f"{'power law b = 0.587 (colo before)':32s} {'':18s} mean |log(measured/predicted)| {100 * error(('power', 0.587)):5.1f}%")
print("point                          SMs  " + "  ".join(f"{n[:14]:>14s}" for n in best))
cols = [ratios(r) for r in best.values()]
for i, (point, sms, *_) in enumerate(cases):
    print(f"{point:30s} {sms:3d}  " + "  ".join(f"{c[i]:14.2f}" for c in cols))
