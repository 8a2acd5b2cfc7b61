#!/usr/bin/env python3
"""Apply docs/results/arch-root-rule.md: pair candidate runs
(classifier.arch = "root") with baseline runs of the same seeds (the
paper's f), both `fasd eval --json` output.

    python3 docs/results/arch_rule.py [-v] BASE CAND [BASE CAND ...]

Standard library only.
"""
import sys

from fbudget_rule import judge, runs
from paired import ci, fmt


def main(args):
    fails, gains = [], []
    for verbose, cp, b, c, seeds in runs(args, 'arch_rule.py'):
        for name in ('fasd', 'no_diffusion'):
            d = judge(b, c, seeds, name, 'root − gcn', cp, fails, verbose)
            if d and name == 'fasd' and ci(d['acc'])[1] > 0:  # the CI's lower bound
                gains.append(cp)
        if 'no_diffusion' in c:
            dd = {k: [c['fasd'][k][s] - c['no_diffusion'][k][s] for s in seeds] for k in ('dp', 'eo')}
            print('  candidate fasd − w/o Diffusion: ' + '  '.join('%s %s' % (k, fmt(dd[k])) for k in dd))
            for k in dd:
                if ci(dd[k])[1] > 0:
                    fails.append('%s fasd − w/o Diffusion %s significantly higher' % (cp, k))
    if not gains:
        fails.append('no graph with a significant accuracy gain for fasd')
    print('adopt' if not fails else 'keep as an option: ' + '; '.join(fails))


if __name__ == '__main__':
    main(sys.argv[1:])
