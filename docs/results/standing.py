#!/usr/bin/env python3
"""The table of RESULTS.md "Where the predictions stand" from `fasd eval
--json` runs: per run, every predictor's mean (std) and its paired
difference from the GCN of the same run (mean and 95 % Student t interval
over the seeds, ×100) for Acc, AUC, macro-F1, ΔDP and ΔEO, with the
issue's two targets: Acc − GCN ≥ −0.5 with the interval's lower bound above
−2 ("acc"), and ΔDP and ΔEO both significantly lower ("fair"); fasd's
difference from w/o Diffusion and from the MLP when the run has them.

    python3 docs/results/standing.py [-v] RUN.json [RUN.json ...]

RUN may join runs of other seeds with '+' (nba-rate.json+nba-30.json):
their seeds are pooled, keeping the variants every part has. A part may
itself join runs of the same seeds with ',' (nba-budget-30.json,nba-30.json):
each variant is taken from the first of them that has it, e.g. fasd from a
run with another setting and the GCN from the run beside it (variants of
one seed are trained independently, so this pairs them as one run would).

Standard library only.
"""
import json, statistics, sys

from paired import ci, fmt

KEYS = ('acc', 'auc', 'macro_f1', 'dp', 'eo')


def load_part(spec):
    """One run, or runs of the same seeds joined with ',' (the first
    that has a variant gives it)."""
    runs = [json.load(open(p)) for p in spec.split(',')]
    for r in runs[1:]:
        if r['seeds'] != runs[0]['seeds']:
            sys.exit('%s: the runs joined with "," have other seeds' % spec)
    out, seen = {'seeds': runs[0]['seeds'], 'variants': []}, set()
    for r in runs:
        for v in r['variants']:
            if v['name'] not in seen and 'acc' in v:
                seen.add(v['name'])
                out['variants'].append(v)
    return out


def load(spec):
    """One run, or runs of other seeds joined with '+', pooled."""
    parts = [load_part(p) for p in spec.split('+')]
    seeds = [s for r in parts for s in r['seeds']]
    if len(set(seeds)) != len(seeds):
        sys.exit('%s: a seed appears twice' % spec)
    names = [x['name'] for x in parts[0]['variants'] if all(
        any(y['name'] == x['name'] and 'acc' in y for y in r['variants']) for r in parts)]
    variants = []
    for n in names:
        vs = [next(y for y in r['variants'] if y['name'] == n) for r in parts]
        variants.append(dict(name=n, **{k: {'per_seed': [z for v in vs for z in v[k]['per_seed']]} for k in KEYS}))
    return {'seeds': seeds, 'variants': variants}


def main(args):
    verbose = '-v' in args
    for path in [a for a in args if a != '-v']:
        run = load(path)
        v = {x['name']: x for x in run['variants']}
        print('%s (%d seeds, %d–%d)' % (path, len(run['seeds']), min(run['seeds']), max(run['seeds'])))
        for name, x in v.items():
            if 'acc' not in x:
                continue
            print('  %-13s ' % name + '  '.join('%s %.2f (%.2f)' % (k, statistics.mean(x[k]['per_seed']),
                  statistics.stdev(x[k]['per_seed'])) for k in KEYS))
            if verbose:
                for k in KEYS:
                    print('      %-8s %s' % (k, ' '.join('%.2f' % y for y in x[k]['per_seed'])))
        for ref in ('gcn', 'no_diffusion', 'mlp'):
            if ref not in v:
                continue
            for name in v:
                if name == ref or 'acc' not in v[name] or (ref != 'gcn' and name != 'fasd'):
                    continue
                d = {k: [a - b for a, b in zip(v[name][k]['per_seed'], v[ref][k]['per_seed'])] for k in KEYS}
                line = '  %-13s − %-12s ' % (name, ref) + '  '.join('%s %s' % (k, fmt(d[k])) for k in KEYS)
                if ref == 'gcn':
                    m, lo, _ = ci(d['acc'])
                    acc_ok = m >= -0.5 and lo > -2
                    fair_ok = ci(d['dp'])[2] < 0 and ci(d['eo'])[2] < 0
                    line += '  [acc %s, fair %s]' % ('met' if acc_ok else 'missed', 'met' if fair_ok else 'missed')
                print(line)


if __name__ == '__main__':
    main(sys.argv[1:])
