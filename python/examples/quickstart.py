"""colo from Python in four steps: predict a pair, pack four jobs, replay a cluster trace and
plot its job completion times. Run from the repository root after `pip install ./python`:

    python python/examples/quickstart.py

It writes jct_cdf.png (into $COLO_QUICKSTART_OUT, default the current folder). Every figure
is a prediction or a simulation from the fitted H200 profile; the `origin` columns say so.
"""

import os
from pathlib import Path

import matplotlib

if os.environ.get("MPLBACKEND") is None:
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import colo  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

# 1. Two jobs under MPS on one H200: how fast does each run, beside the other?
pair = colo.predict(["resnet50:64:224", "vit_b_16:32:224"], gpu="h200", mode="mps")
columns = ["model", "batch", "samples_per_s", "fraction_of_exclusive", "uncertainty_pct", "origin"]
print(pair[columns].to_string(index=False))
print(f"together {pair.attrs['total_fraction']:.2f} GPUs' worth of work; "
      f"memory {pair.attrs['memory_gib']:.1f} of {pair.attrs['capacity_gib']:.0f} GiB; "
      f"{pair.attrs['power_note']}")

# 2. Four jobs, as few H200s as possible: the best packing beside one job per GPU.
jobs = ["resnet50:64:224", "vit_b_16:32:224@0.5", "resnet18:128:32", "mobilenet_v3_large:128:224"]
packs = colo.pack(jobs, gpu="h200")
best = packs[packs.packing == 0]
print(best[["gpu", "config", "model", "fraction_of_exclusive", "place", "origin"]].to_string(index=False))
print(f"best packing: {best.gpus_used.iloc[0]} GPU(s), "
      f"{best.packing_total_fraction.iloc[0]:.2f} GPUs' worth of work "
      f"({packs.attrs['figures_are']})")

# 3. Replay a Slurm cluster's history (sacct dump) under each sharing mode.
runs = colo.simulate(ROOT / "scenarios" / "traces" / "slurm.ron")
for name, run in runs.items():
    s = run.summary
    print(f"{name:10s} {s['jobs']} jobs, mean JCT {s['jct_s']['mean'] / 3600:.2f} h")

# 4. JCT CDFs from the DataFrames (simulated).
fig, ax = plt.subplots(figsize=(6, 4))
for name, run in runs.items():
    jct_h = run.jobs["jct_s"].sort_values() / 3600
    ax.step(jct_h, [(i + 1) / len(jct_h) for i in range(len(jct_h))], where="post", label=name)
ax.set_xlabel("job completion time (h, simulated)")
ax.set_ylabel("fraction of jobs")
ax.set_title("Slurm example replayed on 16 H200s")
ax.legend()
out = Path(os.environ.get("COLO_QUICKSTART_OUT", ".")) / "jct_cdf.png"
fig.savefig(out, dpi=100, bbox_inches="tight")
print(f"wrote {out}")
