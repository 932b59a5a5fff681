#!/bin/bash
# usage: run.sh SECONDS [PLAN FILE] -- the plan calibrate/plans/h200-ts-same.ron (or a part of it
# with its name, e.g. calibrate/plans/h200-ts-same-first.ron, or h200-ts-seven.ron) in one device
# call (issue 32: time-sliced sets with alone runs of the same session), resuming its store
# (calibrate/data/NAME/NAME.jsonl, NAME the plan's `name`). The points were traced
# earlier (calibrate/data/h200/traces); nothing is traced here. Everything comes back in $OUT:
# host.txt, the store file, run.log, summary.txt.
set -u
cd "$(dirname "$0")/../../.."
T0=$(date +%s); BUDGET=$1; PLAN_FILE=${2:-calibrate/plans/h200-ts-same.ron}
PLAN=$(sed -n 's/^ *name: "\([^"]*\)".*/\1/p' "$PLAN_FILE")
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=index,uuid,mig.mode.current,compute_mode,driver_version,clocks.sm,power.limit --format=csv; nproc; } > "$OUT/host.txt" 2>&1
cp "calibrate/data/$PLAN/$PLAN.jsonl" "$OUT"/ 2>/dev/null
./target/release/colo calibrate run "$PLAN_FILE" --out "$OUT" --gpu 0 \
  --worker "python3 calibrate/workloads/train.py" --time-limit-s $(( BUDGET - 30 )) --tmp /tmp/tss > "$OUT/run.log" 2>&1
echo "colo exit $? after $(( $(date +%s) - T0 )) s" | tee -a "$OUT/host.txt"
./target/release/colo calibrate summary "$OUT" > "$OUT/summary.txt" 2>&1
tail -3 "$OUT/run.log"; grep -v "^ *$" "$OUT/summary.txt" | tail -30
