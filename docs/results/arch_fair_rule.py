#!/usr/bin/env python3
"""Apply docs/results/arch-fair-rule.md: pair candidate runs
(classifier.arch_fair = "significant") with their derived baselines
(classifier.arch_fair = "point"; re-run seeds joined in front of the
candidate's file with '+'), both `fasd eval --json` output.

    python3 docs/results/arch_fair_rule.py [-v] BASE CAND [BASE CAND ...]
    python3 docs/results/arch_fair_rule.py --differ CAND [CAND ...]

--differ lists, per candidate file, the seeds whose choice "point" would
have made differently (to re-run with the default) and the first seed
where every choice agrees (the derivation's check).

Standard library only.
"""
import json, statistics, sys

from arch_auto_rule import debias_gap
from fbudget_rule import judge, runs
from paired import ci, fmt

VARIANTS = ('fasd', 'no_diffusion')


def point_keeps_root(e):
    """Whether "point" keeps root weights, from the evidence of a
    "significant" run (see the rule)."""
    if e is None or e['reason'] != 'root_better':
        return False
    ru, pu = e.get('root_unfair'), e.get('paper_unfair')
    return ru is None or pu is None or not ru > pu


def differing(path):
    """{seed: [variants whose choice differs]} and the first agreeing seed."""
    d = json.load(open(path))
    diff, agree = {}, None
    for i, s in enumerate(d['seeds']):
        names = []
        for v in d['variants']:
            if v['name'] in VARIANTS and v.get('arch_evidence'):
                e = v['arch_evidence'][i]
                if (v['arch'][i] == 'root') != point_keeps_root(e):
                    names.append(v['name'])
        if names:
            diff[s] = names
        elif agree is None:
            agree = s
    return diff, agree


def main(args):
    if args and args[0] == '--differ':
        for p in args[1:]:
            diff, agree = differing(p)
            print('%s: re-run %s; first agreeing seed %s' % (
                p, ', '.join('%d (%s)' % (s, '+'.join(n)) for s, n in sorted(diff.items())) or 'none', agree))
        return
    fails, changed = [], []
    for verbose, cp, b, c, seeds in runs(args, 'arch_fair_rule.py'):
        diff, _ = differing(cp)
        for name in VARIANTS:
            d = judge(b, c, seeds, name, 'significant − point', cp, fails, verbose)
            if d:
                for i, s in enumerate(seeds):
                    if name in diff.get(s, []):
                        changed.append((cp, name, s, d['acc'][i], d['auc'][i]))
        dc, db = debias_gap(c, seeds), debias_gap(b, seeds)
        print('  candidate fasd − w/o Diffusion: ' + '  '.join('%s %s' % (k, fmt(dc[k])) for k in dc))
        print('  baseline  fasd − w/o Diffusion: ' + '  '.join('%s %s' % (k, fmt(db[k])) for k in db))
        for k in dc:
            if ci(dc[k])[1] > 0 and not ci(db[k])[1] > 0:
                fails.append('%s fasd − w/o Diffusion %s significantly higher' % (cp, k))
    print('choices changed: %d' % len(changed))
    for cp, name, s, a, u in changed:
        print('  %s %s seed %d: Acc %+.2f AUC %+.2f' % (cp, name, s, a, u))
    if not changed:
        fails.append('no choice changed')
    elif not (statistics.mean(x[3] for x in changed) > 0 and statistics.mean(x[4] for x in changed) > 0):
        fails.append('where it acts, mean Acc %+.2f, AUC %+.2f' % (
            statistics.mean(x[3] for x in changed), statistics.mean(x[4] for x in changed)))
    print('adopt' if not fails else 'keep as an option: ' + '; '.join(fails))


if __name__ == '__main__':
    main(sys.argv[1:])
