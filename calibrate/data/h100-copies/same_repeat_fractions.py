#!/usr/bin/env python3
"""Per-process fractions of the same repeat's alone run for the sets of h200-copies.jsonl
(README's table): python3 calibrate/data/h100-copies/same_repeat_fractions.py"""
import collections
import json
import os
import statistics

here = os.path.dirname(os.path.abspath(__file__))
records = [json.loads(line) for line in open(os.path.join(here, 'h200-copies.jsonl'))]
alone = {(r['point'], r['repeat']): r['samples_per_s'] for r in records if r['mode'] == 'exclusive'}
sets = collections.defaultdict(list)
for r in records:
    if r['mode'] != 'exclusive':
        sets[(r['mode'], r['point'], r['n_procs'])].append(r['samples_per_s'] / alone[(r['point'], r['repeat'])])
for (mode, point, n), fractions in sorted(sets.items()):
    print(f"{mode:9} {point} x{n}: {' '.join(f'{f:.3f}' for f in sorted(fractions))}  median {statistics.median(fractions):.3f}")
