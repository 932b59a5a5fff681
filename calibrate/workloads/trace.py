#!/usr/bin/env python3
"""colo kernel tracer: records each point's CUDA kernel trace alone, plus its unprofiled speed.

One process traces a LIST of points (MODEL:BATCH:IMAGE, any model train.py builds) in turn. Per
point: build, 2 iterations (cudnn.benchmark picks algorithms), warm up, time an unprofiled window,
then run torch.profiler (CUDA activity only: kernels, memsets, memcopies and the CUDA runtime calls
that launched them) over a few steady iterations. It writes one gzip'd JSON file per point into
--out (names deduplicated, columns as arrays) and prints one JSON line per point on stdout. A file
that exists already is skipped, so a killed run resumes. A point that fails or runs out of memory
is reported with status "oom"/"error" and the tracer goes on.

Trace file (format "colo-kernel-trace", version 1): point, model, batch, image, GPU (name, uuid,
SM count), driver, torch, CUDA and cuDNN versions; unprofiled {samples_per_s, iterations,
window_s}; profiled {samples_per_s, window_s, n_iterations}; peak memory; names[]; kernels{name,
kind, start_ns, dur_ns, grid, block, regs, smem, occupancy_pct, blocks_per_sm, stream, launch_ns,
launch_dur_ns} (times relative to the first GPU activity; launch_* is the host-side runtime call,
-1 where none was correlated); syncs[] (host calls that wait for the GPU).
"""
import argparse
import gc
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

import train
from kernel_trace_io import read_chrome_trace

def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", required=True, help="comma-separated MODEL:BATCH:IMAGE")
    parser.add_argument("--out", required=True, help="folder for <model>_<batch>_<image>.trace.json.gz")
    parser.add_argument("--warmup-s", type=float, default=1.0, help="warm-up after the first 2 iterations")
    parser.add_argument("--window-s", type=float, default=1.5, help="unprofiled timing window")
    parser.add_argument("--iterations", type=int, default=4, help="profiled steady iterations")
    parser.add_argument(
        "--no-tf32", action="store_true",
        help="fp32 convolutions and matmuls in full fp32, not TF32 (PyTorch lets cuDNN use TF32 by "
        "default): trace so for GPUs without TF32 (V100 and older), whose kernels run that way",
    )
    return parser.parse_args()


def trace_file(out, spec):
    return os.path.join(out, spec.replace(":", "_").replace("/", "-") + ".trace.json.gz")


def driver_version():
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
            capture_output=True, text=True, timeout=20,
        )
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, IndexError):
        return None


def trace_point(torch, spec, args, meta):
    model_name, batch, image = spec.split(":")
    batch, image = int(batch), int(image)
    rec = dict(meta, format="colo-kernel-trace", version=1, point=spec, model=model_name, batch=batch,
               image=image, status="ok")
    t_begin = time.perf_counter()
    try:
        rec["recipe"] = train.point_recipe_record(model_name)
        torch.cuda.reset_peak_memory_stats()
        train_step = train.training_step(torch, model_name, batch, image)

        train.warm_up(torch, train_step, args.warmup_s)
        t0, iters = time.perf_counter(), 0
        while time.perf_counter() - t0 < args.window_s:
            train_step()
            iters += 1
        torch.cuda.synchronize()
        window = time.perf_counter() - t0
        rec["unprofiled"] = {"samples_per_s": iters * batch / window, "iterations": iters, "window_s": window}
        from torch.profiler import ProfilerActivity, profile, schedule

        n = args.iterations
        sched = schedule(wait=1, warmup=1, active=n, repeat=1)
        with profile(activities=[ProfilerActivity.CUDA], schedule=sched) as prof:
            for step in range(2 + n):
                if step == 2:
                    torch.cuda.synchronize()
                    tp = time.perf_counter()
                train_step()
                if step == 1 + n:
                    torch.cuda.synchronize()
                    tp_end = time.perf_counter()
                prof.step()
        rec["profiled"] = {"samples_per_s": n * batch / (tp_end - tp), "window_s": tp_end - tp, "n_iterations": n}
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
            chrome = tmp.name
        try:
            prof.export_chrome_trace(chrome)
            names, cols, syncs = read_chrome_trace(chrome)
        finally:
            os.unlink(chrome)
        rec.update(names=names, kernels=cols, syncs=syncs)
        rec["peak_allocated_mib"] = torch.cuda.max_memory_allocated() / 2**20
        rec["peak_reserved_mib"] = torch.cuda.max_memory_reserved() / 2**20
    except Exception as err:  # noqa: BLE001 - every failure is data, the tracer goes on
        oom = isinstance(err, torch.cuda.OutOfMemoryError) or "out of memory" in str(err).lower()
        rec["status"] = "oom" if oom else "error"
        rec["error"] = f"{type(err).__name__}: {str(err)[:400]}"
        if not oom:
            traceback.print_exc(file=sys.stderr)
    finally:
        train_step = None  # noqa: F841 - drop the model, its inputs and optimiser
        gc.collect()
        torch.cuda.empty_cache()
    rec["trace_s"] = time.perf_counter() - t_begin
    return rec


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    import torch

    torch.backends.cudnn.benchmark = True
    if args.no_tf32:
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    torch.cuda.init()
    props = torch.cuda.get_device_properties(0)
    meta = {
        "gpu_name": props.name,
        "gpu_uuid": str(getattr(props, "uuid", "")),
        "sm_count": props.multi_processor_count,
        "driver": driver_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "env": {k: os.environ.get(k) for k in train.ENV_KEYS},
        "tf32": {"cudnn": torch.backends.cudnn.allow_tf32, "matmul": torch.backends.cuda.matmul.allow_tf32},
    }
    for spec in (p for p in args.points.split(",") if p):
        path = trace_file(args.out, spec)
        if os.path.exists(path):
            print(json.dumps({"point": spec, "status": "skipped", "file": path}), flush=True)
            continue
        rec = trace_point(torch, spec, args, meta)
        summary = {k: rec.get(k) for k in ("point", "status", "error", "trace_s", "unprofiled", "profiled")}
        if rec["status"] == "ok":
            summary["n_kernels"] = len(rec["kernels"]["name"])
            tmp = path + ".tmp"
            with gzip.open(tmp, "wt", compresslevel=9) as f:
                json.dump(rec, f, separators=(",", ":"))
            os.replace(tmp, path)
            summary["file"] = path
        print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
