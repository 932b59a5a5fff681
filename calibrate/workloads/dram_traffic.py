#!/usr/bin/env python3
"""DRAM traffic per kernel of training points, for the kernel model's bandwidth stage (issue 32).

Run under Nsight Compute, which profiles only the kernels between cudaProfilerStart and Stop:

    ncu --clock-control none --profile-from-start off --metrics dram__bytes_read.sum,\\
        dram__bytes_write.sum,gpu__time_duration.sum --csv --log-file OUT.csv \\
        python3 calibrate/workloads/dram_traffic.py --points resnet50:64:224

Per point: build its training step (train.py: the same model, recipe and data as the tracer),
warm up (cudnn.benchmark settles), then one profiled iteration bracketed by
torch.cuda.profiler.start()/stop(); one point per ncu run, so its CSV is that point's.
`--clock-control none` leaves the GPU's clocks as they are (never lock them on a lent card).

    python3 calibrate/workloads/dram_traffic.py --summarize OUT.csv --point POINT --out DIR

writes DIR/<point>.dram.json.gz: {point, gpu, kernels: {name: {count, read_bytes, write_bytes,
ncu_ns}}} (sums over the iteration's launches of each kernel name).
"""
import argparse
import csv
import gzip
import json
import os
import sys
from collections import defaultdict


def profile(points, warmup):
    import torch

    import train

    torch.backends.cudnn.benchmark = True
    for spec in points:
        model_name, batch, image = spec.split(":")
        step = train.training_step(torch, model_name, int(batch), int(image))
        for _ in range(warmup):
            step()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        step()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        print(json.dumps({"point": spec, "status": "ok"}), flush=True)
        step = None
        torch.cuda.empty_cache()


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def summarize(csv_path, point, out, gpu):
    """One ncu CSV (one point's profiled iteration; rows per kernel launch and metric) as
    OUT/<point>.dram.json.gz."""
    units = {"byte": 1, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "nsecond": 1, "usecond": 1e3, "msecond": 1e6}
    fields = {"dram__bytes_read.sum": "read_bytes", "dram__bytes_write.sum": "write_bytes",
              "gpu__time_duration.sum": "ncu_ns"}
    kernels = defaultdict(lambda: {"count": 0, "read_bytes": 0.0, "write_bytes": 0.0, "ncu_ns": 0.0})
    launches = set()
    with open(csv_path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]
    for row in csv.DictReader(lines):
        name = row.get("Kernel Name", "?")
        entry = kernels[name]
        if row.get("ID") not in launches:
            launches.add(row.get("ID"))
            entry["count"] += 1
        field = fields.get(row.get("Metric Name"))
        if field:
            unit = units.get((row.get("Metric Unit") or "").lower(), 1)
            entry[field] += number(row.get("Metric Value", "0")) * unit
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, point.replace(":", "_").replace("/", "-") + ".dram.json.gz")
    with gzip.open(path, "wt") as f:
        json.dump({"format": "colo-dram-traffic", "version": 1, "point": point, "gpu": gpu,
                   "iterations": 1, "kernels": kernels}, f)
    total = sum(k["read_bytes"] + k["write_bytes"] for k in kernels.values())
    ns = sum(k["ncu_ns"] for k in kernels.values())
    print(f"{point:32} {len(launches):6} launches {len(kernels):5} names {total / 1e9:8.3f} GB {ns / 1e6:8.2f} ms "
          f"{total / max(ns, 1):8.1f} GB/s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", help="comma-separated MODEL:BATCH:IMAGE to profile")
    parser.add_argument("--warmup", type=int, default=5, help="iterations before the profiled one")
    parser.add_argument("--summarize", help="ncu CSV of one point to turn into its file")
    parser.add_argument("--point", help="the point --summarize's CSV is of")
    parser.add_argument("--out", help="folder for <point>.dram.json.gz")
    parser.add_argument("--gpu", default="", help="GPU name recorded in the files")
    args = parser.parse_args()
    if args.summarize:
        summarize(args.summarize, args.point, args.out, args.gpu)
    elif args.points:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        profile([p for p in args.points.split(",") if p], args.warmup)
    else:
        parser.error("give --points (under ncu) or --summarize")


if __name__ == "__main__":
    main()
