#!/usr/bin/env bash
# Issue 32 item 1 on the H200: DRAM bytes read and written per kernel, one training iteration of
# each point, measured with Nsight Compute (--clock-control none: the card's clocks are left as
# they are), as calibrate/data/h100/dram/measure.sh did on an H100. Resumes: a point whose raw
# CSV is already there is skipped. Starts no point with less than 150 s of SECONDS left.
# Usage (repo root, on the GPU host): bash calibrate/data/h200/dram/measure.sh SECONDS OUTDIR POINT...
set -uo pipefail
BUDGET=$1; OUTDIR=$2; shift 2; T0=$(date +%s)
mkdir -p "$OUTDIR/raw" "$OUTDIR/traffic"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0)
echo "$GPU; $(ncu --version | tail -1)"
for p in "$@"; do
  name=${p//:/_}
  [ -s "$OUTDIR/raw/$name.csv.gz" ] && continue
  if [ $(( BUDGET - ($(date +%s) - T0) )) -lt 150 ]; then echo "$p: not started (time)"; continue; fi
  timeout 120 ncu --clock-control none --profile-from-start off \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
    --csv --log-file "$OUTDIR/raw/$name.csv" \
    python3 calibrate/workloads/dram_traffic.py --points "$p" > "$OUTDIR/raw/$name.log" 2>&1
  echo "$p: ncu exit $? after $(( $(date +%s) - T0 )) s"
  grep -m3 -iE "error|ERR_" "$OUTDIR/raw/$name.log" "$OUTDIR/raw/$name.csv" 2>/dev/null
  python3 calibrate/workloads/dram_traffic.py --summarize "$OUTDIR/raw/$name.csv" --point "$p" \
    --out "$OUTDIR/traffic" --gpu "$GPU" && gzip -f "$OUTDIR/raw/$name.csv"
done
