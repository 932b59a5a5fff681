#!/bin/bash
# usage: device.sh -- quiet-machine benchmarks, run on the `device` machine (16 cores, nothing else
# running) with the colo release binary carried there: colo bench's kernel, anchors, scale and sweep
# cases, then synthgen_1m as an MPS cluster (parametric model, 4 jobs per GPU) under each packing
# placement rule, summary output only, 3 runs each (LeastSlowdown asked the model about every open
# GPU per decision until 2026-12-05: 293 s for one run on the 16-core device, 2026-12-01; it now
# asks once per distinct set: 2.0 s on the 2-core development machine).
# Everything lands in $OUT; docs/bench/device-* keeps past outputs.
set -u
cd "$(dirname "$0")/../.."
B=./target/release/colo
{ date -u; nproc; grep -m1 'model name' /proc/cpuinfo; free -g | head -2; } > "$OUT/host.txt" 2>&1
$B bench --case kernel,anchors,scale,sweep > "$OUT/bench.txt" 2>&1
TIMEFORMAT='%R'
for rule in BestFit Spread LeastSlowdown; do
  sed -e 's/mode: Exclusive)/mode: Mps)/' -e 's/perf_model: Exclusive/perf_model: Parametric/' \
      -e "s/placement: Exclusive, max_jobs_per_gpu: 1/placement: $rule, max_jobs_per_gpu: 4/" \
      -e "s/name: \"synthgen_1m\"/name: \"synthgen_1m_$rule\"/" \
      scenarios/bench/synthgen_1m.ron > "scenarios/bench/placement_$rule.ron"
  for i in 1 2 3; do
    s=$( { time $B simulate "scenarios/bench/placement_$rule.ron" --outputs summary --out "/tmp/pl_$rule" > /dev/null 2>&1; } 2>&1 )
    echo "synthgen_1m mps $rule run $i: $s s" >> "$OUT/placement.txt"
  done
  grep -h '"events"\|"makespan_s"' "/tmp/pl_$rule/summary.json" >> "$OUT/placement.txt"
  rm -f "scenarios/bench/placement_$rule.ron"
done
cat "$OUT/host.txt" "$OUT/bench.txt" "$OUT/placement.txt"
