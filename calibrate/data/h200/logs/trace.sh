#!/bin/bash
# usage: trace.sh SECONDS -- traces every point of trace-points.txt alone (calibrate/workloads/trace.py),
# resuming from the traces already in calibrate/data/h200/traces, and returns them as one tar in $OUT.
set -u
cd "$(dirname "$0")/../../../.."
BUDGET=$1; T0=$(date +%s)
DIR=calibrate/data/h200/traces
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=index,uuid,mig.mode.current,compute_mode,driver_version,clocks.sm,power.limit --format=csv; nproc; } > "$OUT/trace-host.txt" 2>&1
POINTS=$(grep -v '^#' calibrate/data/h200/logs/trace-points.txt | tr -s ' \n' ',,')
PYTHONUNBUFFERED=1 timeout $((BUDGET - 25)) python3 calibrate/workloads/trace.py --points "$POINTS" --out "$DIR" > "$OUT/trace-log.jsonl" 2> "$OUT/trace-stderr.txt"
echo "tracer exit $? after $(( $(date +%s) - T0 )) s" | tee -a "$OUT/trace-host.txt"
tar -cf "$OUT/traces.tar" -C "$DIR" .
python3 - "$OUT/trace-log.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    u = (r.get("unprofiled") or {}).get("samples_per_s"); p = (r.get("profiled") or {}).get("samples_per_s")
    print(f'{r["point"]:32} {r["status"]:7} {r.get("trace_s") or 0:5.1f}s kernels={r.get("n_kernels")} unprof={u and round(u,1)} prof={p and round(p,1)} {(r.get("error") or "")[:80]}')
PY
ls -la "$OUT"
