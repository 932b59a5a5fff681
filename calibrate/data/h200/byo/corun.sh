#!/usr/bin/env bash
# Runs the sets of plan.txt between two "# Run" markers with `colo calibrate profile
# --step-hook` (each program unmodified, stopped together after --run-s), one store file per
# set in calibrate/data/h200/byo/store/; a set already in the store is skipped (resumable).
# Usage (repo root): bash calibrate/data/h200/byo/corun.sh RUN_NUMBER [COLO] [OUT_TAR]
set -uo pipefail
RUN=$1
COLO=${2:-target/release/colo}
OUT_TAR=${3:-}
HERE=calibrate/data/h200/byo
STORE=$HERE/store
EX=calibrate/workloads/examples
mkdir -p "$STORE"
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
declare -A CMD=(
  [bert_mlm]="python3 $EX/bert_mlm.py" [hf_gpt2]="python3 $EX/hf_trainer_gpt2.py"
  [lora_llama]="python3 $EX/lora_peft.py" [lm_accum]="python3 $EX/lm_grad_accum.py"
  [timm_amp_cl]="python3 $EX/timm_amp_channels_last.py"
  [lightning_r50]="python3 $EX/lightning_resnet50.py" [data_bound]="python3 $EX/dataloader_bound.py"
)
declare -A SPS=([bert_mlm]=32 [hf_gpt2]=8 [lora_llama]=8 [lm_accum]=16 [timm_amp_cl]=64 [lightning_r50]=64 [data_bound]=256)
awk -v run="# Run $RUN" '$0 == run {on=1; next} /^# Run/ {on=0} on && !/^#/ && NF' $HERE/plan.txt |
while read -r id mode sm programs; do
  [ -s "$STORE/$id.jsonl" ] && { echo "=== $id: in the store, skipped"; continue; }
  args=(calibrate profile --step-hook --run-s 38 --warmup-s 27 --once --timeout-s 150
        --out "$STORE" --name "$id")
  colo_mode=$mode; [ "$mode" = exclusive ] && colo_mode=timeslice
  args+=(--mode "$colo_mode")
  [ "$sm" != - ] && for p in ${sm//,/ }; do args+=(--sm-percent "$p"); done
  sps=()
  for prog in $programs; do
    if [[ $prog == zoo:* ]]; then
      args+=(--cmd "python3 $EX/zoo_point.py ${prog#zoo:}"); b=${prog#zoo:*:}; sps+=(${b%%:*})
    else
      args+=(--cmd "${CMD[$prog]}"); sps+=(${SPS[$prog]})
    fi
  done
  args+=(--samples-per-step "$(IFS=,; echo "${sps[*]}")")
  echo "=== $id ($mode $sm): $programs"
  "$COLO" "${args[@]}" < /dev/null 2>&1 | grep -v '^\s*$' | tail -n 6
done
[ -n "$OUT_TAR" ] && tar czf "$OUT_TAR" -C $HERE store
nvidia-smi --query-gpu=uuid --format=csv,noheader
