#!/usr/bin/env python3
"""Issue 32: how much of the kernel model's error on co-runs of 3+ jobs is the alone denominator?
For every co-run set of 3+ jobs (time-sliced or MPS) in calibrate/data/h200/*.jsonl, each job's
fraction of alone is formed two ways, and the shipped model (`colo predict --traces`, the
shipped globals, no refit) is anchored to the same alone rate (`--alone-rate`, which rescales
the trace's host time) each way:
  gpu:     the median of the point's alone runs on the set's GPU over every store file (as
           `colo calibrate validate` does);
  session: the median of the point's alone runs on the set's GPU in the set's own store file
           (the same plan's call or calls; sets whose file has no alone run of a member are
           left out of both).
Error = predicted fraction / measured fraction - 1; launch-bound: alone NVML busy < 80%.
usage (from the repository root): python3 calibrate/data/h200/logs/same-session-denominators.py COLO"""
import collections, glob, json, os, statistics as st, subprocess, sys

colo = sys.argv[1] if len(sys.argv) > 1 else 'target/release/colo'
records = []
for path in sorted(glob.glob('calibrate/data/h200/*.jsonl')):
    for line in open(path):
        r = json.loads(line)
        if r.get('status') == 'ok':
            r['file'] = os.path.basename(path)
            records.append(r)
alone_gpu = collections.defaultdict(list)
alone_file = collections.defaultdict(list)
busy = collections.defaultdict(list)
for r in records:
    if r['mode'] == 'exclusive':
        alone_gpu[(r['gpu_uuid'], r['point'])].append(r['samples_per_s'])
        alone_file[(r['file'], r['gpu_uuid'], r['point'])].append(r['samples_per_s'])
        busy[r['point']].append((r.get('gpu') or {}).get('util_pct') or 0.0)
sets = collections.defaultdict(lambda: collections.defaultdict(list))
for r in records:
    if r['mode'] in ('timeslice', 'mps') and r.get('n_procs', 1) >= 3 and not r.get('sm_percent'):
        sets[(r['file'], r['gpu_uuid'], r['group'], r['set_index'], r['mode'])][r['rank']].append(r)

def predict(mode, points, rates):
    args = [colo, 'predict', '--gpu', 'h200', '--traces', 'calibrate/data/h200/traces',
            '--mode', mode, '--format', 'json', *points]
    for p, a in rates.items():
        args += ['--alone-rate', f'{p}={a}']
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return [j['fraction_of_exclusive'] for j in json.loads(out.stdout)['jobs']]

rows = []
for (file, gpu, group, index, mode), ranks in sorted(sets.items()):
    members = [ranks[k][0]['point'] for k in sorted(ranks)]
    if any((file, gpu, p) not in alone_file or (gpu, p) not in alone_gpu for p in members):
        continue
    way = {}
    for name, rate in (('gpu', lambda p: st.median(alone_gpu[(gpu, p)])),
                       ('session', lambda p: st.median(alone_file[(file, gpu, p)]))):
        rates = {p: rate(p) for p in members}
        fractions = predict(mode, members, rates)
        if fractions is None:
            break
        way[name] = (rates, fractions)
    if len(way) < 2:
        continue
    for k, p in zip(sorted(ranks), members):
        measured = st.median(r['samples_per_s'] for r in ranks[k])
        row = {'set': f'{file}:{group}/{index}', 'mode': mode, 'n': len(members), 'point': p,
               'launch_bound': st.median(busy[p]) < 80.0}
        for name, (rates, fractions) in way.items():
            row[name] = fractions[members.index(p)] / (measured / rates[p]) - 1
        rows.append(row)

print(f"{len(rows)} jobs in {len({r['set'] for r in rows})} co-run sets of 3+ with alone runs in their own file")
print(f"{'mode':10s} {'jobs':13s} {'n':>4s} {'gpu MAPE':>9s} {'bias':>7s} {'session MAPE':>13s} {'bias':>7s}")
for mode in ('timeslice', 'mps'):
    for cls, keep in (('all', lambda r: True), ('launch-bound', lambda r: r['launch_bound']),
                      ('GPU-bound', lambda r: not r['launch_bound'])):
        js = [r for r in rows if r['mode'] == mode and keep(r)]
        if not js:
            continue
        m = lambda k: 100 * st.mean(abs(r[k]) for r in js)
        b = lambda k: 100 * st.mean(r[k] for r in js)
        print(f"{mode:10s} {cls:13s} {len(js):4d} {m('gpu'):8.1f}% {b('gpu'):+6.1f}% {m('session'):12.1f}% {b('session'):+6.1f}%")
