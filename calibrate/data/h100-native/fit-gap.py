#!/usr/bin/env python3
"""Fit time-slicing's kernel gap (issue 32): the GPU time between a context's back-to-back
kernels that a kernel trace does not count, which a saturated time-sliced GPU loses.

Data: the saturated time-sliced sets of h100-ts-seven (7 and 4 copies of resnet18:128:32,
resnet26:32:32 and resnet50:32:64; 25 jobs), each job's fraction of alone measured as
score.py does (each repeat's co-run over the alone run of the same repeat, median of 3).
Model: `colo predict --gpu h100 --traces calibrate/data/h100-native/traces --mode timeslice`,
each point anchored to the session's alone median (`--alone-rate`), with the shipped H200
profile's other globals and the gap set in a copy of it. The gap minimises the mean squared
log error (golden-section search over 0-3 us, 20 steps). Prints the gap and the per-set sums.
usage (from the repository root): python3 calibrate/data/h100-native/fit-gap.py [COLO]"""
import json, math, os, re, statistics as st, subprocess, sys, tempfile

colo = sys.argv[1] if len(sys.argv) > 1 else 'target/release/colo'
store = [json.loads(l) for l in open('calibrate/data/h100-ts-seven/h100-ts-seven.jsonl')]
alone = {(r['point'], r['repeat']): r['samples_per_s'] for r in store if r['mode'] == 'exclusive'}
medians = {p: st.median(v for (q, _), v in alone.items() if q == p) for p, _ in alone}
runs = {}
for r in store:
    if r['mode'] == 'timeslice':
        runs.setdefault((r['group'], r['set_index'], r['point']), {}).setdefault(r['rank'], []).append(
            r['samples_per_s'] / alone[(r['point'], r['repeat'])])
sets = {}  # (group, index) -> (point, copies, measured fractions per job)
for (group, index, point), ranks in runs.items():
    sets[(group, index)] = (point, len(ranks), [st.median(f) for f in ranks.values()])

profile = open('calibrate/profiles/h200.ron').read()
tmp = tempfile.mkdtemp()
os.symlink(os.path.abspath('calibrate/profiles/h200-kernels.json.gz'), f'{tmp}/h200-kernels.json.gz')

def predicted(gap_us):
    text = re.sub(r'\n( *)timeslice_kernel_gap_us: [0-9.e-]+,', '', profile)
    text = re.sub(r'\n( *)timeslice_wait: ([0-9.e-]+),',
                  lambda m: f'\n{m[1]}timeslice_wait: {m[2]},\n{m[1]}timeslice_kernel_gap_us: {gap_us},', text)
    open(f'{tmp}/h200.ron', 'w').write(text)
    out = {}
    for key, (point, copies, _) in sets.items():
        args = [colo, 'predict', '--profile', f'{tmp}/h200.ron', '--gpu', 'h100', '--traces',
                'calibrate/data/h100-native/traces', '--mode', 'timeslice', '--format', 'json',
                '--alone-rate', f'{point}={medians[point]:.1f}'] + [point] * copies
        answer = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
        out[key] = answer['jobs'][0]['fraction_of_exclusive']
    return out

def loss_of(p):
    errors = [math.log(p[k] / m) for k, (_, _, measured) in sets.items() for m in measured]
    return sum(e * e for e in errors) / len(errors)

def loss(gap_us):
    return loss_of(predicted(gap_us))

lo, hi = 0.0, 3.0
phi = (math.sqrt(5) - 1) / 2
a, b = hi - phi * (hi - lo), lo + phi * (hi - lo)
fa, fb = loss(a), loss(b)
for _ in range(20):
    if fa < fb:
        hi, b, fb = b, a, fa
        a = hi - phi * (hi - lo); fa = loss(a)
    else:
        lo, a, fa = a, b, fb
        b = lo + phi * (hi - lo); fb = loss(b)
gap = round((lo + hi) / 2, 2)
p0, p = predicted(0.0), predicted(gap)
print(f"fitted kernel gap: {gap:.2f} us (rms log error {math.sqrt(loss_of(p)):.4f}; without a gap {math.sqrt(loss_of(p0)):.4f})")
for key, (point, copies, measured) in sorted(sets.items()):
    print(f"  {key[0]}/{key[1]} {copies} x {point}: sum of fractions measured {sum(measured):.3f}, "
          f"predicted {copies * p[key]:.3f} (no gap {copies * p0[key]:.3f})")
