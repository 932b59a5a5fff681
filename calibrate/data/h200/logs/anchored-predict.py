#!/usr/bin/env python3
"""Predictions anchored to a session's own alone runs (issue 32): blind-predict.py for PLAN
with `--alone-rate POINT=RATE` added for every point measured alone in STORE (the median of its
alone runs there), which rescales each trace's host time to that speed. Nothing is fitted;
the co-runs of STORE are not read. Post hoc when STORE is the run being scored.
usage (from the repository root):
  python3 calibrate/data/h200/logs/anchored-predict.py STORE PLAN COLO OUT.csv [GPU ARGS...]"""
import collections, json, os, statistics, subprocess, sys

store, plan, colo, out = sys.argv[1:5]
alone = collections.defaultdict(list)
for line in open(store):
    r = json.loads(line)
    if r.get('status') == 'ok' and r['mode'] == 'exclusive':
        alone[r['point']].append(r['samples_per_s'])
args = [a for p, v in sorted(alone.items()) for a in ('--alone-rate', f'{p}={statistics.median(v):.1f}')]
here = os.path.dirname(os.path.abspath(__file__))
sys.exit(subprocess.call([sys.executable, os.path.join(here, 'blind-predict.py'), plan, colo, out,
                          *(sys.argv[5:] or ['--gpu', 'h200']), *args]))
