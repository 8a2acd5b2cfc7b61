#!/usr/bin/env python3
"""Apply docs/results/arch-root-rule.md: pair candidate runs
(classifier.arch = "root") with baseline runs of the same seeds (the
paper's f), both `fasd eval --json` output.

    python3 docs/results/arch_rule.py [-v] BASE CAND [BASE CAND ...]

Standard library only.
"""
import sys

from fbudget_rule import judge, load
from paired import ci, fmt


def main(args):
    verbose = '-v' in args
    args = [a for a in args if a != '-v']
    if len(args) < 2 or len(args) % 2:
        sys.exit('usage: arch_rule.py [-v] BASE CAND [BASE CAND ...]')
    fails, gains = [], []
    for bp, cp in zip(args[::2], args[1::2]):
        b, c = load(bp), load(cp)
        seeds = sorted(c['fasd']['acc'])
        print('%s vs %s (seeds %d–%d)' % (cp, bp, seeds[0], seeds[-1]))
        for name in ('fasd', 'no_diffusion'):
            if name not in b or name not in c:
                print('  %s: missing in one arm' % name)
                fails.append('%s %s missing' % (cp, name))
                continue
            d = judge(b, c, seeds, name, 'root − gcn', cp, fails, verbose)
            if name == 'fasd' and ci(d['acc'])[1] > 0:  # the CI's lower bound
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
