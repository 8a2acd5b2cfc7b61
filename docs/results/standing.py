#!/usr/bin/env python3
"""The table of RESULTS.md "Where the predictions stand" from `fasd eval
--json` runs: per run, every predictor's mean (std) and its paired
difference from the GCN of the same run (mean and 95 % Student t interval
over the seeds, ×100) for Acc, AUC, macro-F1, ΔDP and ΔEO, with the
issue's two targets: Acc − GCN ≥ −0.5 with the interval's lower bound above
−2 ("acc"), and ΔDP and ΔEO both significantly lower ("fair"); fasd's
difference from w/o Diffusion when the run has it.

    python3 docs/results/standing.py [-v] RUN.json [RUN.json ...]

Standard library only.
"""
import json, statistics, sys

from paired import ci, fmt

KEYS = ('acc', 'auc', 'macro_f1', 'dp', 'eo')


def main(args):
    verbose = '-v' in args
    for path in [a for a in args if a != '-v']:
        run = json.load(open(path))
        v = {x['name']: x for x in run['variants']}
        print('%s (seeds %d–%d)' % (path, run['seeds'][0], run['seeds'][-1]))
        for name, x in v.items():
            if 'acc' not in x:
                continue
            print('  %-13s ' % name + '  '.join('%s %.2f (%.2f)' % (k, statistics.mean(x[k]['per_seed']),
                  statistics.stdev(x[k]['per_seed'])) for k in KEYS))
            if verbose:
                for k in KEYS:
                    print('      %-8s %s' % (k, ' '.join('%.2f' % y for y in x[k]['per_seed'])))
        for ref in ('gcn', 'no_diffusion'):
            if ref not in v:
                continue
            for name in v:
                if name == ref or 'acc' not in v[name] or (ref == 'no_diffusion' and name != 'fasd'):
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
