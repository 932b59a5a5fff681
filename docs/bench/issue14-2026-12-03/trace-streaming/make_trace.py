#!/usr/bin/env python3
"""Writes a large colo-format trace and a scenario replaying it, for measuring trace replay memory.

usage: make_trace.py JOBS OUTDIR

The jobs follow synthgen_1m.ron's distribution (Poisson 1498.13 jobs/h, log-normal durations with
median 60 min and sigma 1, GPUs 1/2/4/8/16/32 weighted .70/.10/.10/.07/.02/.01; seed 42, Python's
Mersenne Twister, so not synthgen's own draws). OUTDIR gets trace_JOBS.colo.csv.gz and
trace_JOBS.ron (6,500 exclusive H200s, FIFO with unbounded backfill, as synthgen_1m), whose profile
path points at scenarios/bench/h200.profile.ron of the checkout this script is in.
"""
import gzip
import math
import os
import random
import sys

jobs, out = int(sys.argv[1]), sys.argv[2]
os.makedirs(out, exist_ok=True)
rng = random.Random(42)
rate_s = 1498.13 / 3600.0
gpus, weights = [1, 2, 4, 8, 16, 32], [0.70, 0.10, 0.10, 0.07, 0.02, 0.01]
trace = os.path.join(out, f"trace_{jobs}.colo.csv.gz")
with gzip.open(trace, "wt", compresslevel=1) as f:
    f.write("name,arrival_s,duration_s,gpus\n")
    now = 0.0
    for i in range(jobs):
        now += rng.expovariate(rate_s)
        duration = max(1.0, round(math.exp(math.log(3600.0) + rng.gauss(0.0, 1.0))))
        g = rng.choices(gpus, weights)[0]
        f.write(f"t{i},{now:.3f},{duration:.0f},{g}\n")
profile = os.path.abspath(
    os.path.join(os.path.dirname(__file__), "../../../../scenarios/bench/h200.profile.ron")
)
with open(os.path.join(out, f"trace_{jobs}.ron"), "w") as f:
    f.write(f"""#![enable(implicit_some)]
(
    name: "trace_{jobs}",
    seed: 42,
    profiles: ["{profile}"],
    perf_model: Exclusive,
    cluster: [(gpu: "h200", count: 6500, mode: Exclusive)],
    workload: Trace((
        format: Colo,
        path: "trace_{jobs}.colo.csv.gz",
        strict: true,
        models: Rules([(model: "resnet18:128:32")]),
    )),
    policy: (order: Fifo, backfill: true, backfill_depth: 1000000000, placement: Exclusive, max_jobs_per_gpu: 1),
    on_unplaceable: Error,
)
""")
print(trace)
