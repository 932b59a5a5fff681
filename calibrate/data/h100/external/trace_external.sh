#!/usr/bin/env bash
# Issue 33 item 2: Gavel's and MISO's workloads, reproduced as `py.MODULE` points
# (calibrate/workloads/external/), traced alone on the H200 by colo's tracer, at the batch sizes
# their published tables hold. Writes calibrate/data/h100/external/traces/; resumable (a traced
# point is skipped). Usage (repo root): bash calibrate/data/h100/external/trace_external.sh
set -uo pipefail
HERE=calibrate/data/h100/external
TRACES=${TRACES:-$HERE/traces}  # the device run writes straight under $OUT
export PYTHONPATH="$PWD/calibrate/workloads/external${PYTHONPATH:+:$PYTHONPATH}"
POINTS=()
for b in 16 32 64 128 256; do POINTS+=("py.gavel_resnet18:$b:32"); done
for b in 16 32 64 128; do POINTS+=("py.gavel_resnet50:$b:224"); done
for b in 16 32 64 128 256; do POINTS+=("py.gavel_transformer:$b:30"); done
for b in 5 10 20 40 80; do POINTS+=("py.gavel_lm:$b:35"); done
POINTS+=("py.gavel_cyclegan:1:256")
for b in 64 128 256 512; do POINTS+=("py.miso_resnet50:$b:32" "py.miso_mobilenet:$b:32"); done
for b in 16 32 64 128; do POINTS+=("py.miso_transformer:$b:500"); done
for b in 2 4 6 8; do POINTS+=("py.miso_bert:$b:512"); done
# ONLY=gavel keeps Gavel's points (the V100 has no TF32: TRACE_ARGS=--no-tf32 traces them so).
[ "${ONLY:-}" = gavel ] && POINTS=($(printf '%s\n' "${POINTS[@]}" | grep gavel_))
LIST=$(IFS=,; echo "${POINTS[*]}")
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
python3 calibrate/workloads/trace.py --points "$LIST" --out "$TRACES" ${TRACE_ARGS:-} 2>&1 \
  | python3 -c "
import json, sys
for line in sys.stdin:
    try:
        r = json.loads(line)
    except ValueError:
        print(line.rstrip()[:300]); continue
    u = r.get('unprofiled') or {}
    print('%-34s %-7s %10.1f %6.1fs %s' % (r.get('point'), r.get('status'), u.get('samples_per_s', 0), r.get('trace_s') or 0, str(r.get('error') or '')[:120]))
"
exit 0
