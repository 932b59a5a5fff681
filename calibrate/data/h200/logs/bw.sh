#!/bin/bash
# usage: bw.sh SECONDS PLAN -- issue 32, parts O and P, in one device call: traces the points of
# trace-points.txt not yet traced, measures the DRAM traffic of the plan's eight points not yet
# measured (dram/measure.sh), then runs calibrate/plans/PLAN.ron (zoo.sh) in the time left.
# Each step resumes from what is committed, so calls repeat until done. Everything comes back
# in $OUT: traces.tar, dram.tar, the store file, logs.
set -u
cd "$(dirname "$0")/../../../.."
T0=$(date +%s); BUDGET=$1; PLAN=$2
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
bash calibrate/data/h200/logs/trace.sh 200 > "$OUT/trace-table.txt" 2>&1
tail -6 "$OUT/trace-table.txt"
bash calibrate/data/h200/dram/measure.sh $(( $(left) - 200 )) calibrate/data/h200/dram \
  lm_medium+bf16-adamw:16:512 vit_b_16+bf16-adamw:32:224 convnext_tiny+bf16-adamw:64:224 \
  resnet50+bf16-adamw:64:224 resnet18:128:32 resnet50:64:224 convnext_tiny:64:224 lm_medium:16:512 \
  > "$OUT/dram.txt" 2>&1
cat "$OUT/dram.txt"; tar -cf "$OUT/dram.tar" -C calibrate/data/h200/dram raw traffic
bash calibrate/data/h200/logs/zoo.sh "$(left)" "$PLAN"
