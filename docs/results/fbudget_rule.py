#!/usr/bin/env python3
"""Apply docs/results/fbudget-rule.md: pair candidate runs
(classifier.schedule = "budget") with baseline runs of the same seeds
(the epochs schedule), both `fasd eval --json` output. A baseline may be
several files joined with '+' (their variants' per-seed values are merged
by seed), e.g. income-sig.json+income-fasd-0-4.json+income-fasd-5-9.json.

    python3 docs/results/fbudget_rule.py [-v] BASE CAND [BASE CAND ...]

Standard library only.
"""
import json, statistics, sys

from paired import ci, fmt

KEYS = ('acc', 'auc', 'macro_f1', 'dp', 'eo')


def load(spec):
    """{variant: {key: {seed: value}}} from one or more '+'-joined files
    (key 'arch' too where the run chose f's architecture)."""
    out = {}
    for p in spec.split('+'):
        d = json.load(open(p))
        for v in d['variants']:
            slot = out.setdefault(v['name'], {})
            for k in KEYS:
                for s, x in zip(d['seeds'], v[k]['per_seed']):
                    slot.setdefault(k, {}).setdefault(s, x)
            for s, a in zip(d['seeds'], v.get('arch', [])):  # classifier.arch = "auto"
                slot.setdefault('arch', {}).setdefault(s, a)
    return out


def runs(args, prog):
    """Parse [-v] BASE CAND [BASE CAND ...]; yield (verbose, cand path,
    base, cand, seeds) per pair after printing its heading."""
    verbose = '-v' in args
    args = [a for a in args if a != '-v']
    if len(args) < 2 or len(args) % 2:
        sys.exit('usage: %s [-v] BASE CAND [BASE CAND ...]' % prog)
    for bp, cp in zip(args[::2], args[1::2]):
        b, c = load(bp), load(cp)
        seeds = sorted(c['fasd']['acc'])
        print('%s vs %s (seeds %d–%d)' % (cp, bp, seeds[0], seeds[-1]))
        yield verbose, cp, b, c, seeds


def judge(b, c, seeds, name, label, tag, fails, verbose):
    """Print candidate − baseline of variant name over seeds, append to
    fails what breaks the rule's accuracy floors (mean Acc ≥ −0.5, AUC and
    macro-F1 ≥ −1) or its fairness condition (no ΔDP or ΔEO CI above 0),
    and return the per-seed differences (None if an arm lacks the
    variant)."""
    if name not in b or name not in c:
        print('  %s: missing in one arm' % name)
        fails.append('%s %s missing' % (tag, name))
        return None
    d = {k: [c[name][k][s] - b[name][k][s] for s in seeds] for k in KEYS}
    print('  %-12s %s: ' % (name, label) + '  '.join('%s %s' % (k, fmt(d[k])) for k in KEYS))
    if verbose:
        for k in KEYS:
            print('      %-8s %s' % (k, ' '.join('%+.2f' % x for x in d[k])))
    for k, floor in (('acc', -0.5), ('auc', -1), ('macro_f1', -1)):
        if statistics.mean(d[k]) < floor:
            fails.append('%s %s %s %+.2f' % (tag, name, k, statistics.mean(d[k])))
    for k in ('dp', 'eo'):
        if ci(d[k])[1] > 0:
            fails.append('%s %s %s significantly higher' % (tag, name, k))
    return d


def main(args):
    fails = []
    for verbose, cp, b, c, seeds in runs(args, 'fbudget_rule.py'):
        for name in ('fasd', 'no_diffusion'):
            judge(b, c, seeds, name, 'budget − epochs', cp, fails, verbose)
    print('adopt' if not fails else 'keep as an option: ' + '; '.join(fails))


if __name__ == '__main__':
    main(sys.argv[1:])
