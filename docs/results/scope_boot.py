#!/usr/bin/env python3
"""Would a validation test choose the wider scope? Reads the `--scores`
files of two `fasd eval` runs of the same seeds (the default scope and a
candidate), and per seed compares the variant's validation ROC AUC with
the paired bootstrap that `classifier.arch = "auto"` uses (2,000
resamples, positives and negatives resampled separately, both arms
scored on each; significant when at most 5 % of resamples have the
candidate at most as high). Prints both arms' validation and test AUC and
the choice.

    python3 docs/results/scope_boot.py [--variant=no_diffusion] DEFAULT.scores.jsonl CAND.scores.jsonl
    python3 docs/results/scope_boot.py --pair=gcn,mlp RUN.scores.jsonl

The second form compares two variants of the same runs, the first named
as the candidate and the second as the default (above: would the full-
graph GCN's validation AUC show that the neighbourhood pays, against the
MLP on the same features?).

Standard library only; the resampling stream is Python's, seeded by the
run seed (the Go code's draws differ, so a share near 5 % may fall the
other way there).
"""
import json, random, sys


def load(path, variant):
    out, head = {}, None
    for line in open(path):
        rec = json.loads(line)
        if 'variant' not in rec:
            head = rec
        elif rec['variant'] == variant:
            out[rec['seed']] = (head, rec['p1'])
    return out


def auc(p, pos, neg):
    """ROC AUC of scores p over the nodes pos (label 1) and neg (label 0),
    ties counted one half (mid-ranks)."""
    v = sorted([(p[u], 1) for u in pos] + [(p[u], 0) for u in neg])
    i, rank_sum = 0, 0.0
    while i < len(v):
        j = i
        while j < len(v) and v[j][0] == v[i][0]:
            j += 1
        rank_sum += (i + j + 1) / 2 * sum(1 for k in range(i, j) if v[k][1] == 1)
        i = j
    P, N = len(pos), len(neg)
    return (rank_sum - P * (P + 1) / 2) / (P * N)


def main(args):
    variant, pair = 'no_diffusion', None
    for a in args:
        if a.startswith('--variant='):
            variant = a[len('--variant='):]
        elif a.startswith('--pair='):
            pair = a[len('--pair='):].split(',')
    args = [a for a in args if not a.startswith('--')]
    if pair is not None:
        if len(pair) != 2 or len(args) != 1:
            sys.exit('usage: scope_boot.py --pair=CAND,DEFAULT RUN.scores.jsonl')
        cand, base = load(args[0], pair[0]), load(args[0], pair[1])
        args = [args[0], args[0]]
    elif len(args) != 2:
        sys.exit('usage: scope_boot.py [--variant=NAME] DEFAULT.scores.jsonl CAND.scores.jsonl')
    else:
        base, cand = load(args[0], variant), load(args[1], variant)
    chosen = 0
    for seed in sorted(base):
        if seed not in cand:
            sys.exit('seed %d missing from %s' % (seed, args[1]))
        head, pb = base[seed]
        pc = cand[seed][1]
        y = head['labels']
        split = {k: ([u for u in head[k] if y[u] == 1], [u for u in head[k] if y[u] == 0]) for k in ('val', 'test')}
        pos, neg = split['val']
        vb, vc = auc(pb, pos, neg), auc(pc, pos, neg)
        rng, R, worse = random.Random(seed), 2000, 0
        for _ in range(R):
            ps = [rng.choice(pos) for _ in pos]
            ns = [rng.choice(neg) for _ in neg]
            worse += auc(pc, ps, ns) <= auc(pb, ps, ns)
        choose = vc > vb and worse / R <= 0.05
        chosen += choose
        tb, tc = auc(pb, *split['test']), auc(pc, *split['test'])
        print('seed %d: validation AUC %.3f → %.3f, share %.3f, %s; test AUC %.3f → %.3f'
              % (seed, vb, vc, worse / R, 'candidate' if choose else 'default', tb, tc))
    print('candidate chosen on %d of %d seeds' % (chosen, len(base)))


if __name__ == '__main__':
    main(sys.argv[1:])
