#!/usr/bin/env python3
"""H8 and H9 of calibrate/plans/h100-mps-cap.ron (issue 32): the capped answer (`colo predict`)
against the raw replay (`--model kernel-raw`), both anchored to the session's alone runs, on the
co-run jobs the raw replay puts above 1.0 of alone; and how fast a lone MPS client runs against
the same repeat's exclusive run. Fractions of alone as h200-ts-same/score.py computes them (each
repeat's run over the alone run of the same repeat, median of 3); its job list is reused.
usage (from the repository root):
  python3 calibrate/data/h100-mps-cap/score-cap.py CAPPED.csv RAW.csv STORE.jsonl"""
import contextlib, io, os, runpy, statistics as st, sys

capped_csv, raw_csv, store = sys.argv[1:4]
score = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'h200-ts-same', 'score.py')


def jobs_of(predictions):
    sys.argv = [score, predictions, store]
    with contextlib.redirect_stdout(io.StringIO()):
        return runpy.run_path(score)['jobs']


capped, raw = jobs_of(capped_csv), jobs_of(raw_csv)
key = lambda j: (j['group'], j['index'], j['rank'])
raw_by = {key(j): j for j in raw}
rows = [(c, raw_by[key(c)]) for c in capped if key(c) in raw_by]
print(f"{'set':18s} {'job':26s} {'lb':2s} {'measured':>8s} {'capped':>7s} {'raw':>7s} {'noise':>6s}")
for c, r in rows:
    print(f"{c['group'] + '/' + str(c['index']):18s} {c['point']:26s} {'lb' if c['launch_bound'] else '  '}"
          f" {c['same']:8.3f} {c['predicted']:7.3f} {r['predicted']:7.3f} {100 * c['noise']:5.1f}%")

err = lambda j: j['predicted'] / j['same'] - 1
above = [(c, r) for c, r in rows if c['n'] >= 2 and r['predicted'] > 1.0]
if above:
    mape_c = st.mean(abs(err(c)) for c, _ in above)
    mape_r = st.mean(abs(err(r)) for _, r in above)
    bias_c = st.mean(err(c) for c, _ in above)
    bias_r = st.mean(err(r) for _, r in above)
    verdict = ('the raw replay wins: answers drop the cap under MPS' if mape_r <= mape_c - 0.01 else
               'the cap wins' if mape_c <= mape_r - 0.01 else 'unsettled: answers keep the cap')
    print(f"\nH8 ({len(above)} co-run jobs the raw replay puts above alone; measured mean fraction"
          f" {st.mean(c['same'] for c, _ in above):.3f}): capped {100 * mape_c:.1f}% ({100 * bias_c:+.1f}%),"
          f" raw {100 * mape_r:.1f}% ({100 * bias_r:+.1f}%): {verdict}")
lone = [c for c, _ in rows if c['n'] == 1]
if lone:
    m = st.median(c['same'] for c in lone)
    each = ', '.join(f"{c['point']} {c['same']:.3f}" for c in lone)
    verdict = ('MPS itself speeds a launch-bound job' if m >= 1.03 else
               'it does not: the host factor describes co-runs only' if m <= 1.01 else 'not settled')
    print(f"H9 (lone MPS clients over the same repeat's exclusive run, median of {len(lone)} points):"
          f" {m:.3f} ({each}): {verdict}")
