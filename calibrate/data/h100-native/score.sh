#!/bin/bash
# usage: score.sh -- after trace.sh: the anchored predictions of the three same-session H100
# runs again, from the native H100 traces in calibrate/data/h100-native/traces (the H200's
# sharing globals carried over, each job's alone rate the session's median), scored with
# score.py into score-<run>-<commit>.txt beside this file.
set -eu
cd "$(dirname "$0")/../../.."
HERE=calibrate/data/h100-native
COMMIT=$(git rev-parse --short=7 HEAD)
for RUN in h100-ts-mixed h100-ts-seven h100-mps-mixed; do
  python3 calibrate/data/h200/logs/anchored-predict.py "calibrate/data/$RUN/$RUN.jsonl" "$RUN" \
    target/release/colo "$HERE/predictions-$RUN-$COMMIT.csv" --gpu h100 --traces "$HERE/traces"
  python3 calibrate/data/h200-ts-same/score.py "$HERE/predictions-$RUN-$COMMIT.csv" \
    "calibrate/data/$RUN/$RUN.jsonl" > "$HERE/score-$RUN-$COMMIT.txt"
done
