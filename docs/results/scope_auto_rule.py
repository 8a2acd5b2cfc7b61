#!/usr/bin/env python3
"""Apply docs/results/scope-auto-rule.md (and scope-guard-rule.md, the
same rule for the guarded chooser): pair a candidate run
(sample.scope = "auto") with the baseline run of the same seeds (scope
fixed), both `fasd eval --json` output, per graph.

    python3 docs/results/scope_auto_rule.py [-v] BASE1.json CAND1.json [BASE2.json CAND2.json ...]
    python3 docs/results/scope_auto_rule.py --choices RUN.json [RUN.json ...]

Prints per graph the seeds on which the candidate took the wide scope,
fasd's and w/o Diffusion's candidate − baseline differences (mean and 95 %
Student t interval over the seeds, ×100; per seed with -v), and fasd − GCN
for both arms when the runs have the gcn variant; then the rule's three
conditions. A graph whose candidate kept the paper's sampling on every
seed (a `--choices` run of its `scope` records) has zero differences by
construction and passes conditions 1 and 2; --choices prints those
records. Standard library only.
"""
import json, statistics, sys

from paired import ci, fmt

KEYS = ('acc', 'auc', 'macro_f1', 'dp', 'eo')


def per_seed(run, name, key):
    v = {x['name']: x for x in run['variants']}
    return v[name][key]['per_seed'] if name in v else None


def choices(run):
    return ['wide' if s['wide'] else 'paper' for s in run.get('scope', [])]


def gains(run):
    # None: the label guard refused the wide scope before any network ran.
    g = ' '.join('%+.1f' % (100 * (s['gcn_auc'] - s['mlp_auc'])) if s['gcn_auc'] is not None else '–'
                 for s in run.get('scope', []))
    # The label guard (docs/results/scope-guard-rule.md) records the labels'
    # group-rate ratio; runs before it do not.
    ratios = sorted({'%.2f' % s['label_ratio'] for s in run.get('scope', []) if s.get('label_ratio') is not None})
    if ratios:
        g += '; label ratio %s (wide needs ≥ %.2f)' % (', '.join(ratios), run['scope'][0]['min_ratio'])
    return g


def main(args):
    if args and args[0] == '--choices':
        for p in args[1:]:
            r = json.load(open(p))
            c = choices(r)
            print('%s (seeds %d–%d): wide on %d of %d; GCN − MLP validation AUC %s'
                  % (p, r['seeds'][0], r['seeds'][-1], c.count('wide'), len(c), gains(r)))
        return
    verbose = '-v' in args
    args = [a for a in args if a != '-v']
    if len(args) < 2 or len(args) % 2:
        sys.exit('usage: scope_auto_rule.py [-v] BASE.json CAND.json [BASE.json CAND.json ...]')
    acc_fails, fair_fails, helps = [], [], []
    for bp, cp in zip(args[::2], args[1::2]):
        b, c = json.load(open(bp)), json.load(open(cp))
        if b['seeds'] != c['seeds']:
            sys.exit('%s and %s: different seeds' % (bp, cp))
        ch = choices(c)
        print('%s vs %s (seeds %d–%d): wide on %d of %d; GCN − MLP validation AUC %s'
              % (cp, bp, b['seeds'][0], b['seeds'][-1], ch.count('wide'), len(ch), gains(c)))
        for name in ('fasd', 'no_diffusion'):
            if per_seed(c, name, 'acc') is None or per_seed(b, name, 'acc') is None:
                sys.exit('%s: %s missing' % (cp, name))
            d = {k: [x - y for x, y in zip(per_seed(c, name, k), per_seed(b, name, k))] for k in KEYS}
            print('  %-12s auto − fixed: ' % name + '  '.join('%s %s' % (k, fmt(d[k])) for k in KEYS))
            if verbose:
                for k in KEYS:
                    print('      %-8s %s' % (k, ' '.join('%+.2f' % x for x in d[k])))
            m = {k: statistics.mean(d[k]) for k in KEYS}
            if m['acc'] < -0.5 or m['auc'] < -1 or m['macro_f1'] < -1:
                acc_fails.append('%s %s (acc %+.2f, auc %+.2f, macro-F1 %+.2f)' % (cp, name, m['acc'], m['auc'], m['macro_f1']))
            for k in ('dp', 'eo'):
                if ci(d[k])[1] > 0:
                    fair_fails.append('%s %s %s' % (cp, name, k))
            if name == 'fasd' and ci(d['acc'])[1] > 0:
                helps.append(cp)
        if per_seed(b, 'gcn', 'acc') is not None:
            for arm, run in (('fixed', b), ('auto', c)):
                d = {k: [x - y for x, y in zip(per_seed(run, 'fasd', k), per_seed(b, 'gcn', k))] for k in KEYS}
                print('  fasd(%s) − GCN: ' % arm + '  '.join('%s %s' % (k, fmt(d[k])) for k in KEYS))
    print('1 accuracy holds (Acc mean ≥ −0.5, AUC and macro-F1 ≥ −1): %s'
          % ('holds' if not acc_fails else 'fails: ' + '; '.join(acc_fails)))
    print('2 fairness holds (no ΔDP or ΔEO interval above 0): %s'
          % ('holds' if not fair_fails else 'fails: ' + ', '.join(fair_fails)))
    print('3 it helps (fasd Acc interval above 0 on a graph): %s'
          % ('holds: ' + ', '.join(helps) if helps else 'fails'))
    print('adopt' if not acc_fails and not fair_fails and helps else 'keep as an option')


if __name__ == '__main__':
    main(sys.argv[1:])
