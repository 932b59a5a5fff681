#!/usr/bin/env python3
"""Score the pre-registered predictions of h200-ts-same against its store (issue 32).

Fraction of alone, two ways: "medians" (a job's median samples/s over the median of the same
point's alone runs, as blind-score.py does) and "same repeat" (each repeat's co-run over the
alone run of the same repeat, which ran minutes before it, then the median over repeats).
Error = predicted fraction / measured fraction - 1. A point is launch-bound when its alone runs
kept the GPU busy less than 80% of the time (NVML utilisation, median over repeats). The noise
floor of a job is half the spread (max - min) of its same-repeat fractions over their median.
usage (from the repository root):
  python3 calibrate/data/h200-ts-same/score.py [PREDICTIONS.csv] [STORE.jsonl]"""
import collections
import csv
import json
import os
import statistics as st
import sys

here = os.path.dirname(os.path.abspath(__file__))
predictions = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, 'predictions-5b3565e.csv')
store = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, 'h200-ts-same.jsonl')
records = [json.loads(line) for line in open(store)]
ok = [r for r in records if r['status'] == 'ok']
gpus = sorted({r['gpu_uuid'] for r in ok})
alone = {(r['gpu_uuid'], r['point'], r['repeat']): r for r in ok if r['mode'] == 'exclusive'}
alone_rates = collections.defaultdict(list)
alone_util = collections.defaultdict(list)
for (gpu, point, _), r in alone.items():
    alone_rates[(gpu, point)].append(r['samples_per_s'])
    alone_util[(gpu, point)].append((r.get('gpu') or {}).get('util_pct') or 0.0)
corun = collections.defaultdict(list)
for r in ok:
    if r['mode'] != 'exclusive':
        corun[(r['gpu_uuid'], r['group'], r['set_index'], r['rank'])].append(r)
predicted = {(p['group'], int(p['set_index']), int(p['rank'])): p for p in csv.DictReader(open(predictions))}

print(f"{len(records)} records, {len(ok)} ok, on {len(gpus)} GPU(s): {' '.join(g[:12] for g in gpus)}")
print("alone runs (samples/s per repeat, spread = (max - min) / median, GPU busy %):")
for (gpu, point), rates in sorted(alone_rates.items()):
    spread = (max(rates) - min(rates)) / st.median(rates)
    print(f"  {point:26s} {' '.join(f'{x:8.1f}' for x in rates)}  spread {100 * spread:5.1f}%"
          f"  busy {st.median(alone_util[(gpu, point)]):5.1f}%")

jobs = []
for (gpu, group, index, rank), runs in sorted(corun.items()):
    p = predicted.get((group, index, rank))
    if p is None:
        continue
    point = p['point']
    pairs = [(r['samples_per_s'], alone[(gpu, point, r['repeat'])]['samples_per_s'])
             for r in runs if (gpu, point, r['repeat']) in alone]
    if not pairs:
        continue
    same = [c / a for c, a in pairs]
    medians = st.median(r['samples_per_s'] for r in runs) / st.median(alone_rates[(gpu, point)])
    fraction = float(p['predicted_fraction_of_alone'])
    n = len(p['set'].split(' + '))
    jobs.append({
        'group': group, 'index': index, 'rank': rank, 'point': point, 'mode': p['mode'], 'n': n,
        'launch_bound': st.median(alone_util[(gpu, point)]) < 80.0,
        'predicted': fraction, 'same': st.median(same), 'medians': medians,
        'noise': (max(same) - min(same)) / 2 / st.median(same), 'repeats': len(same),
        'fractions': sorted(same),
    })

print("\nper job (fractions of alone; error = predicted / measured - 1):")
print(f"  {'set':16s} {'job':26s} {'lb':2s} {'pred':>6s} {'same':>6s} {'err':>7s} {'medians':>7s} {'err':>7s} {'noise':>6s}  same-repeat fractions")
for j in jobs:
    print(f"  {j['group'] + '/' + str(j['index']):16s} {j['point']:26s} {'lb' if j['launch_bound'] else '  '} "
          f"{j['predicted']:6.3f} {j['same']:6.3f} {100 * (j['predicted'] / j['same'] - 1):+6.1f}% "
          f"{j['medians']:7.3f} {100 * (j['predicted'] / j['medians'] - 1):+6.1f}% {100 * j['noise']:5.1f}%  "
          + ' '.join(f"{f:.3f}" for f in j['fractions']))

def row(name, js):
    if not js:
        return
    e_same = [j['predicted'] / j['same'] - 1 for j in js]
    e_med = [j['predicted'] / j['medians'] - 1 for j in js]
    e_eq = [(1 / j['n']) / j['same'] - 1 for j in js]
    print(f"  {name:34s} {len(js):4d} {100 * st.mean(map(abs, e_same)):6.1f}% {100 * st.mean(e_same):+6.1f}%"
          f" {100 * st.mean(map(abs, e_med)):7.1f}% {100 * st.mean(map(abs, e_eq)):7.1f}%"
          f" {100 * st.mean(j['noise'] for j in js):6.1f}%")

print("\nclasses (mean |error|, same repeat; bias; medians; equal share; mean noise floor):")
print(f"  {'class':34s} {'jobs':>4s} {'MAPE':>7s} {'bias':>7s} {'medians':>8s} {'equal':>8s} {'noise':>7s}")
ts3 = [j for j in jobs if j['mode'] == 'Timeslice' and j['n'] >= 3]
row('time-sliced sets of 3+', ts3)
row('  launch-bound', [j for j in ts3 if j['launch_bound']])
row('  GPU-bound', [j for j in ts3 if not j['launch_bound']])
row('time-sliced pair', [j for j in jobs if j['mode'] == 'Timeslice' and j['n'] == 2])
mps = [j for j in jobs if j['mode'] == 'Mps']
row('MPS sets of 3+', mps)
row('  launch-bound', [j for j in mps if j['launch_bound']])
row('  GPU-bound', [j for j in mps if not j['launch_bound']])

h1 = [j for j in jobs if j['group'] == 'same-sets-ts' and j['index'] == 0 and j['rank'] in (0, 1)]
if h1:
    verdict = ('holds' if all(j['same'] > 1.10 for j in h1) else
               'fails (drift, not co-location)' if all(j['same'] <= 1.05 for j in h1) else 'not settled')
    print("\nH1 (set 0's launch-bound jobs keep > 1.10 of alone): "
          + ', '.join(f"{j['point']} {j['same']:.3f}" for j in h1) + f": {verdict}")

# Per set size, and each set's GPU throughput: the sum of its jobs' fractions of alone (same
# repeat), measured and predicted (h200-ts-seven's H3 compares 7 copies with 4).
print("\nby set size:")
for mode, label in (('Timeslice', 'time-sliced'), ('Mps', 'MPS')):
    for n in sorted({j['n'] for j in jobs if j['mode'] == mode}):
        row(f'{label} sets of {n}', [j for j in jobs if j['mode'] == mode and j['n'] == n])
print("\nsets (sum of fractions of alone: measured same repeat, predicted):")
sets = collections.defaultdict(list)
for j in jobs:
    sets[(j['group'], j['index'])].append(j)
for (group, index), js in sorted(sets.items()):
    print(f"  {group + '/' + str(index):16s} {len(js)} jobs  measured {sum(j['same'] for j in js):6.3f}"
          f"  predicted {sum(j['predicted'] for j in js):6.3f}")
seven = [j for j in jobs if j['group'] == 'seven-ts']
if seven:
    e = [j['predicted'] / j['same'] - 1 for j in seven]
    mean = st.mean(e)
    verdict = ('drift (within +-5%)' if abs(mean) <= 0.05 else
               'an effect growing with the processes (above +8%)' if mean > 0.08 else 'not settled')
    print(f"\nH3 (7-copy time-sliced sets' mean signed error): {100 * mean:+.1f}% over {len(e)} jobs: {verdict}")

# h100-mps-mixed's hypotheses (M1: the MPS rule given the alone speed; M2: many MPS copies).
sets3 = [j for j in jobs if j['group'] == 'same-sets-mps']
if sets3:
    e = [j['predicted'] / j['same'] - 1 for j in sets3]
    mape, bias = st.mean(map(abs, e)), st.mean(e)
    verdict = 'holds' if mape <= 0.05 and abs(bias) <= 0.02 else 'fails: the error lies in the sharing rule'
    print(f"\nM1 (MPS sets of 3: mean |error| <= 5%, bias within +-2%): {100 * mape:.1f}%, {100 * bias:+.1f}% over {len(e)} jobs: {verdict}")
    copies = [j for j in jobs if j['group'] == 'seven-mps']
    if copies:
        mean = st.mean(j['predicted'] / j['same'] - 1 for j in copies)
        verdict = ('under-counts the overlap of launch-bound copies (below -8%)' if mean < -0.08 else
                   'that set was particular (within +-5%)' if abs(mean) <= 0.05 else 'not settled')
        print(f"M2 (7 MPS copies' mean signed error): {100 * mean:+.1f}% over {len(copies)} jobs: {verdict}")
