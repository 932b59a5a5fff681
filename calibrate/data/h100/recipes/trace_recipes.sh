#!/usr/bin/env bash
# Issue 31 item 4: zoo points traced by colo's built-in worker under each recipe
# (MODEL+RECIPE: fp32-sgd by default, +bf16-adamw, +fp16-amp-adamw; calibrate/workloads/train.py),
# into calibrate/data/h100/recipes/traces/. Resumable (a traced point is skipped).
# Usage (repo root): bash calibrate/data/h100/recipes/trace_recipes.sh [COLO]
set -uo pipefail
COLO=${1:-target/release/colo}
HERE=calibrate/data/h100/recipes
POINTS=()
for m in resnet50:64:224 vit_b_16:32:224 lm_medium:16:512 convnext_tiny:64:224; do
  model=${m%%:*}; rest=${m#*:}
  POINTS+=("$m" "$model+bf16-adamw:$rest" "$model+fp16-amp-adamw:$rest")
done
"$COLO" calibrate trace "${POINTS[@]}" --out "$HERE/traces" < /dev/null 2>&1 | grep -v '^\s*$' | tail -n 16
[ -n "${OUT:-}" ] && tar czf "$OUT/recipes.tgz" -C "$HERE" traces
