#!/usr/bin/env bash
# Issue 32 item 1: DRAM bytes read and written per kernel, one training iteration of each point,
# measured with Nsight Compute (--clock-control none), into calibrate/data/h100/dram/.
# Usage (repo root, on the GPU host): bash calibrate/data/h100/dram/measure.sh [OUTDIR]
set -uo pipefail
OUTDIR=${1:-calibrate/data/h100/dram}
mkdir -p "$OUTDIR/raw"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0)
echo "$GPU; $(ncu --version | tail -1)"
for p in resnet50:64:224 vit_b_16:32:224 lm_medium:16:512 convnext_tiny:64:224 resnet18:128:32 \
         lm_medium+bf16-adamw:16:512 convnext_tiny+bf16-adamw:64:224 vit_b_16+bf16-adamw:32:224; do
  name=${p//:/_}
  [ -s "$OUTDIR/raw/$name.csv.gz" ] && continue
  timeout 120 ncu --clock-control none --profile-from-start off \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
    --csv --log-file "$OUTDIR/raw/$name.csv" \
    python3 calibrate/workloads/dram_traffic.py --points "$p" > "$OUTDIR/raw/$name.log" 2>&1
  echo "$p: ncu exit $?"; grep -m3 -iE "error|ERR_" "$OUTDIR/raw/$name.log" "$OUTDIR/raw/$name.csv" 2>/dev/null
  python3 calibrate/workloads/dram_traffic.py --summarize "$OUTDIR/raw/$name.csv" --point "$p" \
    --out "$OUTDIR/traffic" --gpu "$GPU" && gzip -f "$OUTDIR/raw/$name.csv"
done
