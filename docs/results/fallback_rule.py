#!/usr/bin/env python3
"""Apply docs/results/fallback-rule.md to `fasd eval --json` runs made with
the fallback of fasd off (the default): per seed, the check of
classifier.fallback_fasd (fasd/pipeline fallBack: keep fasd iff its
validation ΔDP + ΔEO is strictly below w/o Diffusion's and its validation
AUC at most 2 points below) is recomputed from the two variants' validation
metrics, so fasd with and without the fallback are the same trained models.

    fasd eval --db DB --first-seed 10 --seeds 10 --variants fasd,no_diffusion,gcn,mlp,majority --json > nba.json
    python3 docs/results/fallback_rule.py nba.json german.json removable.json

Prints per run: the seeds that fall back, fasd − w/o Diffusion and fasd −
GCN with and without the fallback (mean and 95 % Student t interval over
the seeds, ×100), D = mean of (ΔDP + ΔEO)(fasd − w/o Diffusion), and the
rule's three conditions over the runs given. Standard library only.
"""
import json, math, statistics, sys

from paired import ci, fmt


def falls_back(f, n, s):
    fv, nv = f['val']['dp'][s] + f['val']['eo'][s], n['val']['dp'][s] + n['val']['eo'][s]
    if min(fv, nv) < 0:  # undefined (-1): the check keeps fasd
        return False
    return not fv < nv or (f['val']['auc'][s] >= 0 and n['val']['auc'][s] >= 0 and f['val']['auc'][s] < n['val']['auc'][s] - 2)


def main(paths):
    worst0 = worst1 = -math.inf
    worse, acc_cost = [], []
    for p in paths:
        d = json.load(open(p))
        v = {x['name']: x for x in d['variants']}
        f, n, g = v['fasd'], v['no_diffusion'], v.get('gcn')
        seeds = d['seeds']
        fb = [falls_back(f, n, s) for s in range(len(seeds))]
        pick = lambda k, s, on: (n if on and fb[s] else f)[k]['per_seed'][s]
        print('%s (seeds %d–%d): falls back on %d of %d: %s' % (p, seeds[0], seeds[-1], sum(fb), len(fb),
              ' '.join(str(seeds[s]) for s in range(len(fb)) if fb[s]) or '-'))
        D = {}
        for on in (False, True):
            name = 'with the fallback   ' if on else 'without the fallback'
            diff = {k: [pick(k, s, on) - n[k]['per_seed'][s] for s in range(len(seeds))] for k in ('acc', 'auc', 'dp', 'eo')}
            print('  %s  − w/o Diffusion: Acc %s  AUC %s  ΔDP %s  ΔEO %s' % (name, fmt(diff['acc']), fmt(diff['auc']), fmt(diff['dp']), fmt(diff['eo'])))
            if g is not None:
                dg = {k: [pick(k, s, on) - g[k]['per_seed'][s] for s in range(len(seeds))] for k in ('acc', 'auc', 'dp', 'eo')}
                print('  %s  − GCN:           Acc %s  AUC %s  ΔDP %s  ΔEO %s' % (name, fmt(dg['acc']), fmt(dg['auc']), fmt(dg['dp']), fmt(dg['eo'])))
            D[on] = statistics.mean(a + b for a, b in zip(diff['dp'], diff['eo']))
            if on:
                worse.append(any(ci(diff[k])[1] > 0 for k in ('dp', 'eo')))
        a0 = statistics.mean(pick('acc', s, False) for s in range(len(seeds)))
        a1 = statistics.mean(pick('acc', s, True) for s in range(len(seeds)))
        acc_cost.append(a0 - a1)
        print('  D without %.2f, with %.2f; mean Acc without %.2f, with %.2f' % (D[False], D[True], a0, a1))
        worst0, worst1 = max(worst0, D[False]), max(worst1, D[True])
    c1, c2, c3 = worst1 < worst0, not any(worse), all(c <= 0.5 for c in acc_cost)
    print('rule: 1. worst graph improves (%.2f → %.2f): %s; 2. never significantly less fair than w/o Diffusion: %s; '
          '3. Acc cost ≤ 0.5 everywhere (max %.2f): %s → %s' % (worst0, worst1, c1, c2, max(acc_cost), c3,
          'adopt as the default' if c1 and c2 and c3 else 'stays an option'))


if __name__ == '__main__':
    main(sys.argv[1:])
