#!/usr/bin/env python3
"""The tables of RESULTS.md "The default, per graph" from `fasd eval
--json` runs, as Markdown: per graph, every predictor's mean (std) over
the seeds, its paired differences from the GCN of the same seeds (mean
and 95 % Student t interval, ×100), fasd's from w/o Diffusion and from
the MLP, the issue's targets, and fasd's and the GCN's values per seed.
The fresh probe's AUC (×100) is shown where the run measured it.

    python3 docs/results/current.py NAME=RUN [NAME=RUN ...]

RUN is a run, or runs of the same seeds joined with ',' (each variant
from the first that has it: standing.py's rule), e.g.
German=docs/results/german-auto50.json,docs/results/german-50.json.
The majority row, when a run has it, is reported beside the others and
not differenced. Standard library only.
"""
import statistics, sys

from paired import ci, fmt
from standing import load_part

COLS = (('acc', 'Acc'), ('auc', 'AUC'), ('f1', 'F1'), ('macro_f1', 'macro-F1'), ('dp', 'ΔDP'), ('eo', 'ΔEO'),
        ('counterfactual', 'CF'), ('probe_auc', 'probe AUC'))
# `fasd eval --json` gives the probe's AUC as a fraction, the rest ×100.
SCALE = {'probe_auc': 100}
DIFF = ('acc', 'auc', 'macro_f1', 'dp', 'eo')
LABEL = {'fasd': 'fasd', 'no_diffusion': 'w/o Diffusion', 'gcn': 'GCN', 'mlp': 'MLP', 'majority': 'majority'}


def per_seed(v, k):
    x = v.get(k)
    return x['per_seed'] if isinstance(x, dict) and x.get('per_seed') else None


def diff(a, b, k):
    return [x - y for x, y in zip(per_seed(a, k), per_seed(b, k))]


def main(args):
    runs = []
    for a in args:
        name, _, spec = a.partition('=')
        if not spec:
            sys.exit('usage: current.py NAME=RUN[,RUN...] ...')
        runs.append((name, load_part(spec)))

    print('Means (sample std) over the seeds, ×100:\n')
    print('| graph | seeds | predictor | ' + ' | '.join(h for _, h in COLS) + ' |')
    print('|---|---|---|' + '---|' * len(COLS))
    for name, run in runs:
        s = run['seeds']
        for v in run['variants']:
            cells = []
            for k, _ in COLS:
                x = per_seed(v, k)
                if x and any(e is None for e in x):
                    x = None  # not measured on every seed
                if x:
                    x = [e * SCALE.get(k, 1) for e in x]
                cells.append('%.2f (%.2f)' % (statistics.mean(x), statistics.stdev(x)) if x else '–')
            print('| %s | %d–%d | %s | %s |' % (name, s[0], s[-1], LABEL.get(v['name'], v['name']), ' | '.join(cells)))

    print('\nPaired differences (95 % t interval over the seeds; bold: excludes 0) and the targets'
          ' (Acc − GCN ≥ −0.5 with the lower bound above −2; ΔDP and ΔEO − GCN both below 0 with the'
          ' upper bounds below 0):\n')
    print('| graph | difference | ' + ' | '.join(h for k, h in COLS if k in DIFF) + ' | Acc target | fairness target |')
    print('|---|---|' + '---|' * (len(DIFF) + 2))
    for name, run in runs:
        v = {x['name']: x for x in run['variants']}
        pairs = [(n, 'gcn') for n in ('fasd', 'no_diffusion', 'mlp') if n in v and 'gcn' in v]
        pairs += [('fasd', r) for r in ('no_diffusion', 'mlp') if r in v and 'fasd' in v]
        for a, b in pairs:
            d = {k: diff(v[a], v[b], k) for k in DIFF}
            row = '| %s | %s − %s | %s |' % (name, LABEL[a], LABEL[b], ' | '.join(fmt(d[k]) for k in DIFF))
            if b == 'gcn':
                m, lo, _ = ci(d['acc'])
                acc_ok = m >= -0.5 and lo > -2
                fair_ok = ci(d['dp'])[2] < 0 and ci(d['eo'])[2] < 0
                row += ' %s | %s |' % ('met' if acc_ok else 'missed', 'met' if fair_ok else 'missed')
            else:
                row += ' | |'
            print(row)

    print('\nPer seed, fasd and the GCN (Acc / ΔDP / ΔEO, ×100):\n')
    for name, run in runs:
        v = {x['name']: x for x in run['variants']}
        print('| %s | ' % name + ' | '.join(str(s) for s in run['seeds']) + ' |')
        print('|---|' + '---|' * len(run['seeds']))
        for n in ('fasd', 'gcn'):
            if n not in v:
                continue
            cols = zip(per_seed(v[n], 'acc'), per_seed(v[n], 'dp'), per_seed(v[n], 'eo'))
            print('| %s | ' % LABEL[n] + ' | '.join('%.2f / %.2f / %.2f' % c for c in cols) + ' |')
        print()


if __name__ == '__main__':
    main(sys.argv[1:])
