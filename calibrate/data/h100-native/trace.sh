#!/bin/bash
# usage: trace.sh -- on an H100: native kernel traces (colo calibrate trace, its defaults) of the
# 13 points of the three same-session H100 runs (h100-ts-mixed, h100-ts-seven, h100-mps-mixed),
# one tracer process, into $OUT/traces.tgz (traces and index.jsonl), with host.txt and trace.log.
set -u
cd "$(dirname "$0")/../../.."
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=index,uuid,mig.mode.current,compute_mode,driver_version,clocks.sm,power.limit --format=csv; nproc; } > "$OUT/host.txt" 2>&1
./target/release/colo calibrate trace --out /tmp/native --gpu 0 --tmp /tmp/native-tmp \
  resnet18:128:32 resnet26:128:32 resnet50:64:224 vit_b_16:32:224 resnet50:128:64 lm_medium:16:512 \
  resnet26:32:32 resnet50:32:64 efficientnet_b0:32:224 convnext_tiny:64:224 \
  shufflenet_v2_x1_0:32:224 resnet18:64:32 vgg16:64:224 > "$OUT/trace.log" 2>&1
echo "colo exit $?" | tee -a "$OUT/host.txt"
tar czf "$OUT/traces.tgz" -C /tmp/native .
tail -20 "$OUT/trace.log"
