#!/bin/bash
# usage: bw.sh SECONDS -- issue 32, part O, in one device call: traces the plan's seven points
# alone where the data folder has no trace of them yet (calibrate/workloads/trace.py skips those
# it has), then runs calibrate/plans/h200-bw.ron in the time left, resuming from the store.
# On an H200 the data folder is calibrate/data/h200 (four fp32 points traced there earlier); on
# an H100 (the lender may give one) it is calibrate/data/h100/bw, seeded with the H100 traces of
# calibrate/data/h100/recipes (six of the seven points). Everything comes back in $OUT:
# traces.tar (the seven points' traces), the store file, logs. DRAM bytes per kernel come from
# calibrate/data/h100/dram (Nsight Compute on an H100; the same sm_90 kernels and 50 MB L2), so
# dram/measure.sh is not called: the plan was cut to fit one call.
set -u
cd "$(dirname "$0")/../../../.."
T0=$(date +%s); BUDGET=$1; PLAN=h200-bw
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0)
case "$GPU" in
  *H200*) DATA=calibrate/data/h200 ;;
  *H100*) DATA=calibrate/data/h100/bw; mkdir -p "$DATA/traces"
          for p in lm_medium+bf16-adamw_16_512 vit_b_16+bf16-adamw_32_224 convnext_tiny+bf16-adamw_64_224 \
                   resnet50_64_224 convnext_tiny_64_224 lm_medium_16_512; do
            cp -n "calibrate/data/h100/recipes/traces/$p.trace.json.gz" "$DATA/traces/"
          done ;;
  *) echo "bw.sh: $GPU is neither an H200 nor an H100; nothing run"; exit 1 ;;
esac
POINTS=lm_medium+bf16-adamw:16:512,vit_b_16+bf16-adamw:32:224,convnext_tiny+bf16-adamw:64:224,resnet18:128:32,resnet50:64:224,convnext_tiny:64:224,lm_medium:16:512
{ date -u; echo "data folder $DATA"; nvidia-smi -L; nvidia-smi --query-gpu=index,uuid,mig.mode.current,compute_mode,driver_version,clocks.sm,power.limit --format=csv; nproc; } > "$OUT/host.txt" 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 calibrate/workloads/trace.py --points "$POINTS" --out "$DATA/traces" > "$OUT/trace-log.jsonl" 2> "$OUT/trace-stderr.txt"
echo "tracer exit $? after $(( $(date +%s) - T0 )) s" | tee -a "$OUT/host.txt"
tar -cf "$OUT/traces.tar" -C "$DATA/traces" $(for p in ${POINTS//,/ }; do echo "${p//:/_}.trace.json.gz"; done) 2>>"$OUT/host.txt"
cp "$DATA/$PLAN.jsonl" "$OUT"/ 2>/dev/null
./target/release/colo calibrate run "calibrate/plans/$PLAN.ron" --out "$OUT" --gpu 0 \
  --worker "python3 calibrate/workloads/train.py" --time-limit-s $(( BUDGET - ($(date +%s) - T0) - 35 )) --tmp /tmp/bw > "$OUT/run.log" 2>&1
echo "colo exit $? after $(( $(date +%s) - T0 )) s" | tee -a "$OUT/host.txt"
./target/release/colo calibrate summary "$OUT" > "$OUT/summary.txt" 2>&1
tail -3 "$OUT/run.log"; grep -v "^ *$" "$OUT/summary.txt" | tail -45
