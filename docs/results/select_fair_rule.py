#!/usr/bin/env python3
"""Apply docs/results/select-fair-rule.md: pair a candidate run
(classifier.select = "fair") with the baseline run of the same seeds
(`default` profile, select = "auc"), both `fasd eval --json` output.

    python3 docs/results/select_fair_rule.py [-v] [--label=fair] BASE1.json CAND1.json [BASE2.json CAND2.json ...]

The same three conditions judge other candidates for the `default`
profile (docs/results/induced-rule.md); --label names the candidate arm
in the printout.

Prints per graph fasd's candidate − baseline differences (mean and 95 %
Student t interval over the seeds, ×100; per seed with -v), w/o
Diffusion's too, and fasd − GCN for both arms when the baseline run has
the gcn variant; then the rule's three conditions. Standard library only.
"""
import json, statistics, sys

from paired import ci, fmt

KEYS = ('acc', 'auc', 'macro_f1', 'dp', 'eo')


def per_seed(run, name, key):
    v = {x['name']: x for x in run['variants']}
    return v[name][key]['per_seed'] if name in v else None


def main(args):
    verbose = '-v' in args
    label = 'fair'
    for a in args:
        if a.startswith('--label='):
            label = a[len('--label='):]
    args = [a for a in args if a != '-v' and not a.startswith('--label=')]
    if len(args) < 2 or len(args) % 2:
        sys.exit('usage: select_fair_rule.py [-v] [--label=NAME] BASE.json CAND.json [BASE.json CAND.json ...]')
    sums, sig_fairer, worse, useless = [], 0, [], []
    for bp, cp in zip(args[::2], args[1::2]):
        b, c = json.load(open(bp)), json.load(open(cp))
        if b['seeds'] != c['seeds']:
            sys.exit('%s and %s: different seeds' % (bp, cp))
        print('%s vs %s (seeds %d–%d)' % (cp, bp, b['seeds'][0], b['seeds'][-1]))
        for name in ('fasd', 'no_diffusion'):
            if per_seed(c, name, 'acc') is None or per_seed(b, name, 'acc') is None:
                continue
            d = {k: [x - y for x, y in zip(per_seed(c, name, k), per_seed(b, name, k))] for k in KEYS}
            d['dp+eo'] = [x + y for x, y in zip(d['dp'], d['eo'])]
            print('  %-12s %s − default: ' % (name, label) + '  '.join('%s %s' % (k, fmt(d[k])) for k in KEYS + ('dp+eo',)))
            if verbose:
                for k in KEYS:
                    print('      %-8s %s' % (k, ' '.join('%+.2f' % x for x in d[k])))
            if name != 'fasd':
                continue
            sums.append(statistics.mean(d['dp+eo']))
            if ci(d['dp+eo'])[2] < 0:
                sig_fairer += 1
            for k in ('dp', 'eo'):
                if ci(d[k])[1] > 0:
                    worse.append('%s %s' % (cp, k))
            for k in ('acc', 'macro_f1'):
                if statistics.mean(d[k]) < -1:
                    useless.append('%s %s %.2f' % (cp, k, statistics.mean(d[k])))
        if per_seed(b, 'gcn', 'acc') is not None:
            for arm, run in (('default', b), (label, c)):
                d = {k: [x - y for x, y in zip(per_seed(run, 'fasd', k), per_seed(b, 'gcn', k))] for k in KEYS}
                print('  fasd(%s) − GCN: ' % arm + '  '.join('%s %s' % (k, fmt(d[k])) for k in KEYS))
    c1 = statistics.mean(sums) < 0 and sig_fairer >= 2
    print('1 fairer: mean over graphs of mean (ΔDP+ΔEO) diff %+.2f, significantly lower on %d graphs: %s'
          % (statistics.mean(sums), sig_fairer, 'holds' if c1 else 'fails'))
    print('2 never significantly less fair: %s' % ('holds' if not worse else 'fails: ' + ', '.join(worse)))
    print('3 useful (Acc and macro-F1 mean ≥ −1): %s' % ('holds' if not useless else 'fails: ' + ', '.join(useless)))
    print('adopt' if c1 and not worse and not useless else 'keep as an option')


if __name__ == '__main__':
    main(sys.argv[1:])
