#!/usr/bin/env bash
# Traces every example training program (calibrate/workloads/examples/) unmodified with
# `colo calibrate trace --cmd`, on the GPU machine, into calibrate/data/h200/byo/traces/.
# Programs whose trace exists are skipped (resumable). Usage (repo root):
#   bash calibrate/data/h200/byo/trace_examples.sh [COLO] [OUT_TAR]
set -uo pipefail
COLO=${1:-target/release/colo}
OUT_TAR=${2:-}
DIR=calibrate/data/h200/byo/traces
EX=calibrate/workloads/examples
mkdir -p "$DIR"
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
trace() { # NAME COMMAND [extra colo args]
  local name=$1 cmd=$2; shift 2
  echo "=== $name: $cmd"
  "$COLO" calibrate trace --cmd "$cmd" --name "$name" --out "$DIR" --warmup-s 5 --window-s 4 \
    --step-timeout-s 240 "$@" 2>&1 | grep -v '^\s*$' | tail -n 25
}
trace bert_mlm "python3 $EX/bert_mlm.py"
trace hf_gpt2 "python3 $EX/hf_trainer_gpt2.py"
trace lora_llama "python3 $EX/lora_peft.py"
trace lm_accum "python3 $EX/lm_grad_accum.py"
trace timm_amp_cl "python3 $EX/timm_amp_channels_last.py"
trace lightning_r50 "python3 $EX/lightning_resnet50.py"
trace data_bound "python3 $EX/dataloader_bound.py"
trace ddp_r50 "torchrun --standalone --nproc_per_node 1 $EX/ddp_torchrun.py"
trace compile_vit "python3 $EX/compile_vit.py"
trace compile_cg "python3 $EX/compile_cudagraphs.py"
[ -n "$OUT_TAR" ] && tar czf "$OUT_TAR" -C calibrate/data/h200/byo traces
echo "=== index"
python3 - "$DIR/index.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(f"{r['point'] or '-':24} {r['status']:8} {r.get('unprofiled_samples_per_s') or 0:10.1f} {r.get('n_kernels') or 0:7} {r.get('trace_s') or 0:6.1f}s {(r.get('error') or '')[:150]!r}")
PY
