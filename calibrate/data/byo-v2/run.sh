#!/usr/bin/env bash
# Issue 31's second blind test on ONE GPU (see plan.txt). Resumable: each call goes on where the
# last stopped (traces, predictions and store records already here are kept), and stops
# starting work once DEADLINE_S seconds have passed since it began.
# For each set of plan.txt, in order:
#   1. traces each of its programs not yet traced, with `colo calibrate trace --cmd` at its
#      defaults;
#   2. for a co-run set, appends its predictions to predictions.csv (predict_plan.py --set, the
#      committed model, from this session's traces only), before the set runs (the rows and the
#      log give the time);
#   3. runs the set with `colo calibrate profile --step-hook`.
# Usage (repo root, on the GPU machine): bash calibrate/data/byo-v2/run.sh [COLO]
# With $OUT set, leaves everything gathered in $OUT/byo-v2.tgz.
set -uo pipefail
COLO=${1:-target/release/colo}
HERE=calibrate/data/byo-v2
EX=calibrate/workloads/examples
DEADLINE_S=${DEADLINE_S:-540}
START=$(date +%s)
left() { echo $(( DEADLINE_S - ($(date +%s) - START) )); }
mkdir -p "$HERE/traces" "$HERE/store"
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
declare -A CMD=(
  [bert_mlm]="python3 $EX/bert_mlm.py" [hf_gpt2]="python3 $EX/hf_trainer_gpt2.py"
  [lora_llama]="python3 $EX/lora_peft.py" [lm_accum]="python3 $EX/lm_grad_accum.py"
  [timm_amp_cl]="python3 $EX/timm_amp_channels_last.py"
  [lightning_r50]="python3 $EX/lightning_resnet50.py" [data_bound]="python3 $EX/dataloader_bound.py"
  [zoo_r50]="python3 $EX/zoo_point.py resnet50:64:224"
)
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)" in
  *H200*) GPU=h200; SLICE=(3g.71gb 4g.71gb) ;;
  *H100*) GPU=h100-80gb; SLICE=(3g.40gb 4g.40gb) ;;
  *) echo "unknown GPU: $(nvidia-smi -L)"; exit 1 ;;
esac
echo "$GPU $(nvidia-smi --query-gpu=uuid,driver_version --format=csv,noheader) $(date -u +%FT%TZ)" >> "$HERE/gpu.txt"
finish() {
  [ -n "${OUT:-}" ] && tar czf "$OUT/byo-v2.tgz" -C "$HERE" traces store gpu.txt $(cd "$HERE" && ls predictions.csv run-*.log 2>/dev/null)
  exit 0
}
trace() { # program: traces it unless its trace is here; fails if it could not be traced
  local name=$1
  [ -s "$HERE/traces/cmd_$name.trace.json.gz" ] && return 0
  echo "=== trace $name ($(date -u +%T))"
  "$COLO" calibrate trace --cmd "${CMD[$name]}" --name "$name" --out "$HERE/traces" --step-timeout-s 200 \
    < /dev/null 2>&1 | grep -v '^\s*$' | tail -n 4
  [ -s "$HERE/traces/cmd_$name.trace.json.gz" ] && return 0
  touch "$HERE/traces/cmd_$name.failed"  # tried once: later sets that need it are skipped
  return 1
}
grep -v '^#' "$HERE/plan.txt" | awk 'NF' | while read -r id mode sm programs; do
  [ -s "$HERE/store/$id.jsonl" ] && continue
  [ "$(left)" -lt 50 ] && { echo "=== out of time before $id"; break; }
  for prog in $programs; do
    [ -s "$HERE/traces/cmd_$prog.trace.json.gz" ] && continue
    [ -e "$HERE/traces/cmd_$prog.failed" ] && { echo "=== $prog failed to trace: $id not run"; continue 2; }
    [ "$(left)" -lt 90 ] && { echo "=== out of time before tracing $prog for $id"; break 2; }
    trace "$prog" || { echo "=== $prog could not be traced: $id not run"; continue 2; }
  done
  [ "$(left)" -lt 50 ] && { echo "=== out of time before $id"; break; }
  if [ "$mode" != exclusive ]; then
    python3 "$HERE/predict_plan.py" "$COLO" "$GPU" --set "$id" || { echo "=== no prediction: $id not run"; continue; }
  fi
  args=(calibrate profile --step-hook --run-s 34 --warmup-s 24 --once --timeout-s 120
        --out "$HERE/store" --name "$id" --gpu-type "$GPU")
  case $mode in
    exclusive) args+=(--mode timeslice) ;;
    mig-emulated) args+=(--mode mig-emulated --mig-profile "${SLICE[0]}" --mig-profile "${SLICE[1]}") ;;
    *) args+=(--mode "$mode") ;;
  esac
  sps=()
  for prog in $programs; do
    args+=(--cmd "${CMD[$prog]}")
    sps+=("$(python3 "$HERE/predict_plan.py" --samples-per-step "$prog")")
  done
  args+=(--samples-per-step "$(IFS=,; echo "${sps[*]}")")
  echo "=== $id ($mode $sm): $programs ($(date -u +%T))"
  "$COLO" "${args[@]}" < /dev/null 2>&1 | grep -v '^\s*$' | tail -n 4
done
finish
