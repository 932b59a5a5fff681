#!/bin/bash
# usage: zoo7.sh SECONDS -- part N in one device call: traces the points of trace-points.txt not
# yet traced (the six new models), then runs plans/h200-zoo7.ron (zoo.sh) in the time left.
# Everything comes back in $OUT: traces.tar, the store file, logs.
set -u
cd "$(dirname "$0")/../../../.."
T0=$(date +%s); BUDGET=$1
bash calibrate/data/h200/logs/trace.sh 240 > "$OUT/trace-table.txt" 2>&1
tail -8 "$OUT/trace-table.txt"
LEFT=$(( BUDGET - ($(date +%s) - T0) ))
bash calibrate/data/h200/logs/zoo.sh "$LEFT" h200-zoo7
