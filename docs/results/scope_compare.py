#!/usr/bin/env python3
"""Pair arms of one variant across `fasd eval --json` runs of the same
seeds: each candidate run against a reference run (candidate −
reference), and against the GCN rows of the reference run.

    python3 docs/results/scope_compare.py [-v] [--variant=no_diffusion] REF.json CAND.json [CAND.json ...]

Prints, per candidate, the mean (std) of the variant, its paired
differences from the reference run's same variant and from the
reference run's gcn (mean and 95 % Student t interval over the seeds;
per seed with -v) for Acc, AUC, macro-F1, ΔDP and ΔEO. The runs
must cover the same seeds. Standard library only.
"""
import json, os, statistics, sys

from paired import fmt

KEYS = ('acc', 'auc', 'macro_f1', 'dp', 'eo')


def load(path):
    run = json.load(open(path))
    return run['seeds'], {x['name']: x for x in run['variants']}


def main(args):
    verbose = '-v' in args
    variant = 'no_diffusion'
    for a in args:
        if a.startswith('--variant='):
            variant = a[len('--variant='):]
    args = [a for a in args if a != '-v' and not a.startswith('--variant=')]
    if len(args) < 2:
        sys.exit('usage: scope_compare.py [-v] [--variant=NAME] REF.json CAND.json [CAND.json ...]')
    seeds, ref = load(args[0])
    for path in args[1:]:
        s, cand = load(path)
        if s != seeds:
            sys.exit('%s: seeds %s, reference %s' % (path, s, seeds))
        if variant not in cand or variant not in ref:
            sys.exit('%s: no %s in both runs' % (path, variant))
        c = cand[variant]
        print('%s (%s, %d seeds)' % (os.path.basename(path), variant, len(seeds)))
        print('  mean (std)   ' + '  '.join('%s %.2f (%.2f)' % (k, statistics.mean(c[k]['per_seed']),
                                                            statistics.stdev(c[k]['per_seed'])) for k in KEYS))
        for other, rows in (('− ' + os.path.basename(args[0]), ref[variant]), ('− gcn', ref.get('gcn'))):
            if rows is None:
                continue
            diffs = {k: [(a - b) for a, b in zip(c[k]['per_seed'], rows[k]['per_seed'])] for k in KEYS}
            print('  %-12s ' % other[:40] + '  '.join('%s %s' % (k, fmt(diffs[k])) for k in KEYS))
            if verbose:
                for k in KEYS:
                    print('      %-8s ' % k + ' '.join('%+.2f' % d for d in diffs[k]))


if __name__ == '__main__':
    main(sys.argv[1:])
