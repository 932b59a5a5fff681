#!/usr/bin/env python3
"""Co-run sets that ran in two store groups (two sessions, usually two H200s): is the kernel
model's miss on them the model's or the measurement's? For each job, the fitted model's error
(predicted / measured fraction of alone - 1) in each run, and how far the two measured
fractions of alone lie apart. If the errors repeat while the fractions move, the miss is the
model's (each run is predicted from that GPU's own alone runs); if they move with the
fractions, it is noise. Reads the per-job CSV of validate (its `--kernel-csv`).
usage (from the repository root):
  target/release/colo calibrate validate calibrate/data/h200 --kernel-csv /tmp/kernel.csv
  python3 calibrate/data/h200/logs/replicated-sets.py /tmp/kernel.csv"""
import collections, csv, re, statistics, sys

runs = collections.defaultdict(dict)
for r in csv.DictReader(open(sys.argv[1])):
    if not r['split'].startswith('fitted'):
        continue
    mode, group, members = re.match(r'(\S+) \[([^\]]+)\]: (.*)', r['set']).groups()
    if 'budget' in group:
        continue
    # equal share is the job's alone rate over the set's size, so this is its fraction of alone
    fraction = float(r['measured']) / (float(r['equal_share']) * int(r['n_jobs']))
    error = float(r['predicted']) / float(r['measured']) - 1
    runs[(mode, members)].setdefault(group, []).append((r['job'], r['launch_bound'] == 'true', fraction, error))
rows = []
print(f"{'mode':10s} {'job':32s} {'runs':30s} {'fraction 1':>10s} {'fraction 2':>10s} {'error 1':>8s} {'error 2':>8s}")
for (mode, members), groups in sorted(runs.items()):
    if len(groups) < 2:
        continue
    (g1, a), (g2, b) = list(groups.items())[:2]
    for (job, lb, f1, e1), (_, _, f2, e2) in zip(a, b):
        rows.append((mode, lb, abs(f1 / f2 - 1), abs(e1 - e2), (abs(e1) + abs(e2)) / 2))
        print(f"{mode:10s} {job:32s} {g1 + ' / ' + g2:30s} {f1:10.3f} {f2:10.3f} {e1:+8.1%} {e2:+8.1%}")
print()
for mode in sorted({r[0] for r in rows}):
    for label, keep in (('all', lambda r: True), ('launch-bound', lambda r: r[1]), ('GPU-bound', lambda r: not r[1])):
        sel = [r for r in rows if r[0] == mode and keep(r)]
        if sel:
            print(f"{mode:12s} {label:13s} {len(sel):3d} jobs: measured fractions of the two runs apart by"
                  f" {statistics.mean(r[2] for r in sel):5.1%} (mean), the model's errors by"
                  f" {statistics.mean(r[3] for r in sel):4.1%}; mean |error| {statistics.mean(r[4] for r in sel):4.1%}")
