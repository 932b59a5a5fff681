#!/bin/bash
# usage: zoo.sh SECONDS [PLAN] -- runs calibrate/plans/PLAN.ron (default h200-zoo) on GPU 0,
# resuming from the store in calibrate/data/h200, finishing within SECONDS; the store and logs
# come back in $OUT.
set -u
cd "$(dirname "$0")/../../../.."
T0=$(date +%s); BUDGET=$1; PLAN=${2:-h200-zoo}
cp "calibrate/data/h200/$PLAN.jsonl" "$OUT"/ 2>/dev/null
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=index,uuid,mig.mode.current,compute_mode,driver_version --format=csv; } > "$OUT/zoo-host.txt" 2>&1
./target/release/colo calibrate run "calibrate/plans/$PLAN.ron" --out "$OUT" --gpu 0 \
  --worker "python3 calibrate/workloads/train.py" --time-limit-s $((BUDGET - 40)) --tmp /tmp/zoo > "$OUT/zoo.log" 2>&1
echo "colo exit $? after $(( $(date +%s) - T0 )) s" | tee -a "$OUT/zoo-host.txt"
./target/release/colo calibrate summary "$OUT" > "$OUT/zoo-summary.txt" 2>&1
tail -3 "$OUT/zoo.log"; grep -v "^ *$" "$OUT/zoo-summary.txt" | tail -70
