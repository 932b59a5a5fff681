#!/bin/bash
# usage: budget-traces.sh SECONDS ["PCT..."] -- traces points under MPS SM budgets (one private MPS daemon,
# CUDA_MPS_ACTIVE_THREAD_PERCENTAGE per tracer process) into budgetPCT/ folders, returned as one
# tar in $OUT (the device tool returns at most 8 files; the first call lost most traces), to see how a budget
# changes kernel grids and durations against the alone traces in calibrate/data/h200/traces.
# Diagnostic data for the kernel model's SM-budget rule; never changes the card's settings.
set -u
cd "$(dirname "$0")/../../../.."
BUDGET=$1; T0=$(date +%s); TRACES=/tmp/colo-budget-traces
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=index,uuid,mig.mode.current,compute_mode,driver_version,clocks.sm,power.limit --format=csv; nproc; } > "$OUT/budget-host.txt" 2>&1
POINTS=lm_small:32:256,vit_b_16:32:224,vgg16:64:224,resnet50:64:224,mobilenet_v3_large:128:224,lm_medium:16:512,resnet152:32:224,densenet121:64:224,efficientnet_b0:64:224,resnet18:128:32
export CUDA_MPS_PIPE_DIRECTORY=/tmp/colo-budget-mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/colo-budget-mps/log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d
trap 'echo quit | nvidia-cuda-mps-control' EXIT
for PCT in ${2:-50 24 12 45}; do
  LEFT=$((BUDGET - ($(date +%s) - T0) - 15))
  [ "$LEFT" -lt 60 ] && { echo "budget $PCT skipped: $LEFT s left" | tee -a "$OUT/budget-host.txt"; continue; }
  mkdir -p "$TRACES/budget$PCT"
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$PCT PYTHONUNBUFFERED=1 timeout "$LEFT" python3 calibrate/workloads/trace.py \
    --points "$POINTS" --out "$TRACES/budget$PCT" > "$TRACES/budget$PCT/log.jsonl" 2> "$TRACES/budget$PCT/stderr.txt"
  echo "budget $PCT: tracer exit $? after $(( $(date +%s) - T0 )) s" | tee -a "$OUT/budget-host.txt"
done
tar -czf "$OUT/budget-traces.tgz" -C "$TRACES" .
python3 - "$TRACES" <<'PY'
import json, sys, glob, gzip
for f in sorted(glob.glob(sys.argv[1] + "/budget*/*.trace.json.gz")):
    r = json.load(gzip.open(f))
    print(f'{f.split("/")[-2]:9} {r["point"]:28} sm_count={r["sm_count"]} unprof={r["unprofiled"]["samples_per_s"]:.1f} trace_s={r.get("trace_s",0):.1f}')
PY
