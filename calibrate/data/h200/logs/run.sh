#!/bin/bash
# usage: run.sh SECONDS PLAN0 PLAN1 -- runs PLAN0 on GPU 0 beside PLAN1 on GPU 1 (or in turn), finishing within SECONDS.
set -u
cd "$(dirname "$0")"
T0=$(date +%s); BUDGET=$1; PLAN0=$2; PLAN1=$3
W="python3 workloads/train.py"
cp store/*.jsonl "$OUT"/ 2>/dev/null
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=index,uuid,mig.mode.current,compute_mode,driver_version --format=csv; nproc; } > "$OUT/host.txt" 2>&1
probe() { ./colo calibrate run plans/mps-probe.ron --out /tmp/probe$1 --gpu $1 --worker "$W" --tmp /tmp/pr$1 > /tmp/probe$1.log 2>&1; }
ok() { grep -c '"status":"ok"' /tmp/probe$1/mps-probe.jsonl 2>/dev/null || echo 0; }
probe 0 & probe 1; wait
O0=$(ok 0); O1=$(ok 1)
echo "probe ok records (of 3): gpu0=$O0 gpu1=$O1" | tee -a "$OUT/host.txt"
cat /tmp/probe0.log /tmp/probe1.log >> "$OUT/host.txt"
left() { echo $(( BUDGET - ($(date +%s) - T0) - $1 )); }
lane() { local p=PLAN$1; ./colo calibrate run plans/${!p}.ron --out "$OUT" --gpu $2 --worker "$W" --time-limit-s $3 --tmp /tmp/g$1 >> "$OUT/lane$1.log" 2>&1; }
if [ "$O0" = 3 ] && [ "$O1" = 3 ]; then
  L=$(left 50); lane 0 0 $L & lane 1 1 $L; wait
else
  G=0; [ "$O0" = 3 ] || G=1
  echo "side-by-side MPS failed: both lanes in turn on GPU $G" | tee -a "$OUT/host.txt"
  lane 0 $G $(( $(left 50) / 2 )); lane 1 $G $(left 50)
fi
./colo calibrate summary "$OUT" > "$OUT/summary.txt" 2>&1
tail -4 "$OUT/lane0.log" "$OUT/lane1.log"; grep -v "^ *$" "$OUT/summary.txt" | tail -60
