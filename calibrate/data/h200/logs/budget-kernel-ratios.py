#!/usr/bin/env python3
"""Per-kernel slowdown under an MPS SM budget, from the traces in calibrate/data/h200/budget-traces.

usage (from the repository root): python3 calibrate/data/h200/logs/budget-kernel-ratios.py

For every kernel that a point's budget trace and its alone trace (calibrate/data/h200/traces)
both hold with the same name, grid and block, the ratio of median durations; grouped by the
kernel's waves on the whole GPU (blocks / (132 SMs x resident blocks per SM from the traced
occupancy)) and by kind (bandwidth- vs compute-bound, the same name rule as colo's
`calibrate/src/trace.rs`). Prints the time-weighted geometric mean ratio per group, the
SM-proportional ratio beside it, and the exponent b with ratio = (132 / SMs)^b.
"""
import collections, glob, gzip, json, math, os, statistics

COMPUTE = ["gemm", "conv", "xmma", "fmha", "attention", "wgrad", "dgrad", "fprop", "winograd", "cutlass"]
ROOT = "calibrate/data/h200"


def kernels(path):
    r = json.load(gzip.open(path))
    k, names = r["kernels"], r["names"]
    out = collections.defaultdict(list)
    for i in range(len(k["name"])):
        if k["kind"][i] != 0:
            continue
        g, b = k["grid"][i], k["block"][i]
        out[(names[k["name"][i]], g[0] * g[1] * g[2], b[0] * b[1] * b[2])].append((k["dur_ns"][i], k["occupancy_pct"][i]))
    return r, out


for folder in sorted(glob.glob(f"{ROOT}/budget-traces/budget*")):
    rows, sms = [], None
    for f in sorted(glob.glob(f"{folder}/*.trace.json.gz")):
        rb, b = kernels(f)
        sms = rb["sm_count"]
        _, a = kernels(f"{ROOT}/traces/{os.path.basename(f)}")
        for key, runs in a.items():
            if key not in b:
                continue
            name, blocks, threads = key
            occ = runs[0][1]
            resident = max(1, int(occ / 100 * 2048 / threads)) if occ and occ > 0 else 1
            ratio = statistics.median(d for d, _ in b[key]) / statistics.median(d for d, _ in runs)
            memory = not any(c in name.lower() for c in COMPUTE)
            rows.append((memory, blocks / (132 * resident), ratio, sum(d for d, _ in runs)))
    ideal = 132 / sms
    print(f"{os.path.basename(folder)}: {sms} SMs, SM-proportional ratio {ideal:.2f}")
    for memory in (True, False):
        print("  bandwidth-bound" if memory else "  compute-bound")
        for lo, hi in [(0, 0.25), (0.25, 0.5), (0.5, 1), (1, 2), (2, 4), (4, 16), (16, math.inf)]:
            sel = [r for r in rows if r[0] == memory and lo <= r[1] < hi]
            if not sel:
                continue
            w = sum(r[3] for r in sel)
            geo = math.exp(sum(math.log(r[2]) * r[3] for r in sel) / w)
            print(f"    waves {lo:>5}-{hi:<5} kernels {len(sel):4d}  ratio {geo:5.2f}  exponent {math.log(geo) / math.log(ideal):5.2f}")
