#!/usr/bin/env bash
# Issue 31 target "the trace's alone rate within 3% of the same command's unprofiled speed":
# on ONE GPU, back to back, each example program is traced with `colo calibrate trace --cmd`
# and then run alone, unmodified, with `colo calibrate profile --step-hook` (no profiler).
# Resumable: a program whose trace and alone run are both in this folder is skipped.
# Usage (repo root): bash calibrate/data/h100/byo-alone-check/alone_check.sh [COLO] [PROGRAM...]
set -uo pipefail
COLO=${1:-target/release/colo}; shift || true
HERE=${HERE:-calibrate/data/h100/byo-alone-check}
# The tracer's warm-up and window (seconds from the first step; `calibrate trace`'s defaults are 10 and 5).
TRACE_WARMUP_S=${TRACE_WARMUP_S:-5} TRACE_WINDOW_S=${TRACE_WINDOW_S:-4}
EX=calibrate/workloads/examples
mkdir -p "$HERE/traces" "$HERE/store"
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
declare -A CMD=(
  [bert_mlm]="python3 $EX/bert_mlm.py" [hf_gpt2]="python3 $EX/hf_trainer_gpt2.py"
  [lora_llama]="python3 $EX/lora_peft.py" [lm_accum]="python3 $EX/lm_grad_accum.py"
  [timm_amp_cl]="python3 $EX/timm_amp_channels_last.py"
  [lightning_r50]="python3 $EX/lightning_resnet50.py" [data_bound]="python3 $EX/dataloader_bound.py"
  [ddp_r50]="torchrun --standalone --nproc_per_node 1 $EX/ddp_torchrun.py"
  [compile_vit]="python3 $EX/compile_vit.py" [compile_cg]="python3 $EX/compile_cudagraphs.py"
)
declare -A SPS=([bert_mlm]=32 [hf_gpt2]=8 [lora_llama]=8 [lm_accum]=16 [timm_amp_cl]=64
  [lightning_r50]=64 [data_bound]=256 [ddp_r50]=64 [compile_vit]=32 [compile_cg]=128)
# Seconds from start to the end of the alone run, and of warm-up before its window (torch.compile
# programs compile for tens of seconds first).
declare -A RUN_S=([compile_vit]=62 [compile_cg]=62)
declare -A WARM_S=([compile_vit]=50 [compile_cg]=50)
PROGRAMS=("$@")
[ ${#PROGRAMS[@]} -eq 0 ] && PROGRAMS=(bert_mlm hf_gpt2 lora_llama lm_accum timm_amp_cl lightning_r50 data_bound ddp_r50 compile_vit compile_cg)
for name in "${PROGRAMS[@]}"; do
  if [ -s "$HERE/traces/cmd_$name.trace.json.gz" ] && [ -s "$HERE/store/a_$name.jsonl" ]; then
    echo "=== $name: done, skipped"; continue
  fi
  echo "=== $name: trace"
  "$COLO" calibrate trace --cmd "${CMD[$name]}" --name "$name" --out "$HERE/traces" \
    --warmup-s "$TRACE_WARMUP_S" --window-s "$TRACE_WINDOW_S" --step-timeout-s 240 < /dev/null 2>&1 | grep -v '^\s*$' | tail -n 4
  echo "=== $name: alone, unprofiled"
  "$COLO" calibrate profile --step-hook --run-s "${RUN_S[$name]:-26}" --warmup-s "${WARM_S[$name]:-14}" --once --timeout-s 150 \
    --out "$HERE/store" --name "a_$name" --mode timeslice --cmd "${CMD[$name]}" \
    --samples-per-step "${SPS[$name]}" < /dev/null 2>&1 | grep -v '^\s*$' | tail -n 3
done
nvidia-smi --query-gpu=uuid --format=csv,noheader
python3 calibrate/data/h100/byo-alone-check/compare.py "$HERE" --write-csv
[ -n "${OUT:-}" ] && tar czf "$OUT/check.tgz" -C "$HERE" traces store
