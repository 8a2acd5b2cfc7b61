#!/usr/bin/env python3
"""Apply docs/results/arch-auto-rule.md: pair candidate runs
(classifier.arch = "auto") with baseline runs of the same seeds (the
paper's f), both `fasd eval --json` output. arch_rule.py applies
arch-root-rule.md through main() with the absolute condition 3.

    python3 docs/results/arch_auto_rule.py [-v] BASE CAND [BASE CAND ...]

Standard library only.
"""
import sys

from fbudget_rule import judge, runs
from paired import ci, fmt


def debias_gap(r, seeds):
    """fasd − w/o Diffusion's ΔDP and ΔEO per seed of run r."""
    return {k: [r['fasd'][k][s] - r['no_diffusion'][k][s] for s in seeds] for k in ('dp', 'eo')}


def main(args, prog='arch_auto_rule.py', label='auto − gcn', relative=True):
    """Judge every BASE CAND pair; condition 3 fails a graph only where
    the baseline passes it when relative, wherever it fails otherwise."""
    fails, gains = [], []
    for verbose, cp, b, c, seeds in runs(args, prog):
        for name in ('fasd', 'no_diffusion'):
            if verbose and name in c and c[name].get('arch'):
                print('  %s chose: %s' % (name, ' '.join(c[name]['arch'][s] for s in seeds)))
            d = judge(b, c, seeds, name, label, cp, fails, verbose)
            if d and name == 'fasd' and ci(d['acc'])[1] > 0:  # the CI's lower bound
                gains.append(cp)
        if 'no_diffusion' in c:
            dc, db = debias_gap(c, seeds), debias_gap(b, seeds)
            print('  candidate fasd − w/o Diffusion: ' + '  '.join('%s %s' % (k, fmt(dc[k])) for k in dc))
            if relative:
                print('  baseline  fasd − w/o Diffusion: ' + '  '.join('%s %s' % (k, fmt(db[k])) for k in db))
            for k in dc:
                if ci(dc[k])[1] > 0 and not (relative and ci(db[k])[1] > 0):
                    fails.append('%s fasd − w/o Diffusion %s significantly higher' % (cp, k))
    if not gains:
        fails.append('no graph with a significant accuracy gain for fasd')
    print('adopt' if not fails else 'keep as an option: ' + '; '.join(fails))


if __name__ == '__main__':
    main(sys.argv[1:])
