"""Reads torch.profiler's chrome trace into colo's kernel-trace columns.

Shared by trace.py (colo's own tracer) and inject/colo_trace.py (the tracer injected into a
user's command), so both write the same "colo-kernel-trace" format. A kernel launched from a
CUDA graph (torch.compile mode "reduce-overhead") carries the correlation id of its
cudaGraphLaunch call, so every kernel of a graph is tied to that one launch: the host time
between them is zero, as it is on the GPU.
"""
import json

SYNC_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy", "cudaStreamWaitEvent")
LAUNCH_CALLS = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx", "cudaMemsetAsync", "cudaMemcpyAsync", "cudaLaunchCooperativeKernel",
                "cudaGraphLaunch", "cuGraphLaunch")


def columns(events, t0_us):
    """GPU activities of a chrome trace as columns; names deduplicated."""
    names, index = [], {}
    cols = {k: [] for k in ("name", "kind", "start_ns", "dur_ns", "grid", "block", "regs", "smem",
                            "occupancy_pct", "blocks_per_sm", "stream", "correlation")}
    for ev in events:
        a = ev.get("args", {})
        name = ev["name"]
        if name not in index:
            index[name] = len(names)
            names.append(name)
        cols["name"].append(index[name])
        cols["kind"].append({"kernel": 0, "gpu_memset": 1, "gpu_memcpy": 2}[ev["cat"]])
        cols["start_ns"].append(round((ev["ts"] - t0_us) * 1000))
        cols["dur_ns"].append(round(ev.get("dur", 0) * 1000))
        cols["grid"].append(a.get("grid", [0, 0, 0]))
        cols["block"].append(a.get("block", [0, 0, 0]))
        cols["regs"].append(a.get("registers per thread", 0))
        cols["smem"].append(a.get("shared memory", 0))
        cols["occupancy_pct"].append(a.get("est. achieved occupancy %", 0))
        cols["blocks_per_sm"].append(a.get("blocks per SM", 0))
        cols["stream"].append(a.get("stream", 0))
        cols["correlation"].append(a.get("correlation", -1))
    return names, cols


def read_chrome_trace(path, stats=None):
    """(names, kernel columns, syncs) from torch.profiler's chrome trace; `stats`, a dict if
    given, receives `graph_launches` (cudaGraphLaunch calls)."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    gpu = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy") and e.get("ph") == "X"),
                 key=lambda e: e["ts"])
    runtime = [e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("ph") == "X"]
    t0 = gpu[0]["ts"] if gpu else 0.0
    names, cols = columns(gpu, t0)
    launches = {e["args"].get("correlation"): e for e in runtime if e["name"] in LAUNCH_CALLS}
    if stats is not None:
        stats["graph_launches"] = sum(1 for e in runtime if e["name"] in ("cudaGraphLaunch", "cuGraphLaunch"))
    cols["launch_ns"], cols["launch_dur_ns"] = [], []
    for corr in cols.pop("correlation"):
        ev = launches.get(corr)
        cols["launch_ns"].append(round((ev["ts"] - t0) * 1000) if ev else -1)
        cols["launch_dur_ns"].append(round(ev.get("dur", 0) * 1000) if ev else -1)
    syncs = sorted(
        ({"name": e["name"], "ts_ns": round((e["ts"] - t0) * 1000), "dur_ns": round(e.get("dur", 0) * 1000)}
         for e in runtime if e["name"] in SYNC_CALLS),
        key=lambda s: s["ts_ns"],
    )
    return names, cols, syncs
