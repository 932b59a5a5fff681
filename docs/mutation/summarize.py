#!/usr/bin/env python3
"""Scores of an issue-37 mutation run (docs/mutation/README.md): per folder or file, the
outcomes after (every unit test) and before (this issue's tests left out: a caught mutant counts
as caught before only if a test not named issue_37_* failed on it, as its log says), then every
mutant missed, or killed only by the new tests.

    python3 docs/mutation/summarize.py OUT [--only NAMES.txt] [--by-file]

--only keeps the mutants named in a file (one a line: a sample, docs/mutation/samples/);
--by-file scores each file instead of each folder of the issue.

OUT holds one folder per phase (each with its mutants.out); phases are read in name order, and
a mutant tested again in a later phase (a re-check after new tests) takes its later outcome."""
import glob
import json
import os
import re
import sys

GROUPS = ['sim/src/engine/', 'sim/src/perf/kernel/', 'sim/src/scenario/shard.rs',
          'sim/src/fsutil.rs', 'calibrate/src/store.rs', 'calibrate/src/fit/']


def outcomes(root):
    """Mutant name -> (file, outcome, failing tests), later phases overriding earlier ones."""
    found = {}
    for out in sorted(glob.glob(os.path.join(root, '*/mutants.out'))):
        path = os.path.join(out, 'outcomes.json')
        if not os.path.exists(path):
            continue
        for o in json.load(open(path))['outcomes']:
            scenario = o['scenario']
            if not isinstance(scenario, dict):
                continue
            m = scenario['Mutant']
            failed = []
            if o['summary'] == 'CaughtMutant':
                log = open(os.path.join(out, 'log', os.path.basename(o['log_path']))).read()
                failed = re.findall(r'^test (\S+) \.\.\. FAILED', log, re.M)
            found[m['name']] = (m['file'], o['summary'], failed)
    return found


def main(root, only=None, by_file=False):
    counts = {}
    notes = []
    keep = set(open(only).read().splitlines()) if only else None
    for name, (file, summary, failed) in sorted(outcomes(root).items()):
        if keep is not None and name not in keep:
            continue
        group = file if by_file else next((g for g in GROUPS if file.startswith(g)), file)
        c = counts.setdefault(group, dict(caught=0, missed=0, unviable=0, timeout=0, before=0))
        if summary == 'CaughtMutant':
            c['caught'] += 1
            if not failed or any('issue_37' not in t for t in failed):
                c['before'] += 1
            else:
                notes.append(f"- `{name}`: killed only by {', '.join(failed)}")
        elif summary == 'MissedMutant':
            c['missed'] += 1
            notes.append(f"- `{name}`: MISSED")
        elif summary == 'Unviable':
            c['unviable'] += 1
        elif summary == 'Timeout':
            c['timeout'] += 1
            c['before'] += 1
    print('| folder or file | mutants | caught | missed | timeout | unviable | score after | score before |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|')
    total = dict(caught=0, missed=0, unviable=0, timeout=0, before=0)
    order = lambda kv: GROUPS.index(kv[0]) if kv[0] in GROUPS else len(GROUPS)
    for group, c in sorted(counts.items(), key=order) + [('all', total)]:
        if group != 'all':
            for k in total:
                total[k] += c[k]
        viable = c['caught'] + c['missed'] + c['timeout']
        n = viable + c['unviable']
        after = 100.0 * (c['caught'] + c['timeout']) / viable if viable else float('nan')
        before = 100.0 * c['before'] / viable if viable else float('nan')
        print(f"| {group} | {n} | {c['caught']} | {c['missed']} | {c['timeout']} | "
              f"{c['unviable']} | {after:.0f}% | {before:.0f}% |")
    print()
    print('\n'.join(notes))


if __name__ == '__main__':
    args = sys.argv[1:]
    only = args[args.index('--only') + 1] if '--only' in args else None
    main(args[0], only, '--by-file' in args)
