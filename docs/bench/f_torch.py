#!/usr/bin/env python3
"""The classifier f of docs/method.md §10 trained in PyTorch at the settings
of fasd's BenchmarkFStage/epochs (fasd/pipeline/fbudget_bench_test.go), for
a side-by-side timing of f's training stage.

The subgraphs are those of the benchmark, written by

    FASD_EXPORT_FBENCH=/tmp/fbench.json go test ./fasd/pipeline -run TestExportFBench -count=1

(a 3,000-node Bail-shaped graph, 2,676 subgraphs of at most 21 nodes, D =
18). f as fasd builds it: GCN D→64, GCN 64→64, FC 64→64, FC 64→2, each
hidden layer followed by ReLU and dropout 0.3; a GCN layer is Â·(H·W) + b
with Â the GCN normalisation of the subgraph's adjacency with its diagonal
set to 1. Adam (lr 1e-3, weight decay 1e-4), shuffled
batches of 64 subgraphs (here all padded to the largest and Â computed
once, ahead of the clock: fasd pads per batch and normalises in every
forward, so this favours PyTorch), the
cross-entropy summed over the training-node occurrences and divided by
their number (batches without one skipped); after every epoch a validation
pass over every subgraph (batches of 64, no dropout) whose P(class 1) is
averaged per node over the subgraphs containing it, and the ROC AUC of the
validation nodes. fasd's stage ran 51 epochs in the benchmark (early
stopping); this script runs --epochs of them without stopping.

    python3 docs/bench/f_torch.py /tmp/fbench.json --epochs 51 --threads 2

It prints the wall time of the epochs (training and validation, data
loading excluded) and the last validation AUC. Needs PyTorch (Debian:
python3-torch, with libopenblas0-pthread: its default generic BLAS is an
order of magnitude slower).
"""
import argparse, json, time

import torch
import torch.nn as nn


class F(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.g1, self.g2 = nn.Linear(d, 64), nn.Linear(64, 64)
        self.f1, self.f2 = nn.Linear(64, 64), nn.Linear(64, 2)
        self.drop = nn.Dropout(0.3)

    def forward(self, x, ahat, mask):
        h = self.drop(torch.relu(ahat @ (x @ self.g1.weight.T) + self.g1.bias))
        h = self.drop(torch.relu(ahat @ (h @ self.g2.weight.T) + self.g2.bias))
        h = self.drop(torch.relu(self.f1(h)))
        return self.f2(h) * mask.unsqueeze(-1)


def gcn_norm(a):
    n = a.shape[-1]
    eye = torch.eye(n, dtype=torch.bool)
    a = a.masked_fill(eye, 1.0)
    r = a.sum(-1).clamp(min=1).rsqrt()
    return r.unsqueeze(-1) * a * r.unsqueeze(-2)


def auc(p, y):
    order = torch.argsort(p)
    ranks = torch.empty_like(p)
    ranks[order] = torch.arange(1, len(p) + 1, dtype=p.dtype)
    pos = y == 1
    P, N = int(pos.sum()), int((~pos).sum())
    return float((ranks[pos].sum() - P * (P + 1) / 2) / (P * N))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('file')
    ap.add_argument('--epochs', type=int, default=51)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--batch', type=int, default=64)
    ap.add_argument('--seed', type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    d = json.load(open(a.file))
    D, sgs = d['d'], d['sgs']
    labels, val = torch.tensor(d['labels']), torch.tensor(d['val'])
    ns = [len(s['nodes']) for s in sgs]
    m, nmax, n_all = len(sgs), max(ns), len(labels)
    # Every subgraph zero-padded to the largest once, Â computed once (fasd
    # pads per batch and normalises in every forward: this favours PyTorch).
    X, adj = torch.zeros(m, nmax, D), torch.zeros(m, nmax, nmax)
    Y, W, mask = torch.zeros(m, nmax, dtype=torch.long), torch.zeros(m, nmax), torch.zeros(m, nmax)
    nodes = torch.full((m, nmax), n_all, dtype=torch.long)  # padding → a dummy node
    for i, (s, n) in enumerate(zip(sgs, ns)):
        X[i, :n] = torch.tensor(s['x'], dtype=torch.float32).view(n, D)
        adj[i, :n, :n] = torch.tensor(s['a'], dtype=torch.float32).view(n, n)
        Y[i, :n] = torch.tensor(s['y'], dtype=torch.long).clamp(min=0)
        W[i, :n] = torch.tensor(s['w'], dtype=torch.float32)
        mask[i, :n] = 1
        nodes[i, :n] = torch.tensor(s['nodes'], dtype=torch.long)
    ahat = gcn_norm(adj) * mask.unsqueeze(-1) * mask.unsqueeze(-2)

    model = F(D)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    ce = nn.CrossEntropyLoss(reduction='none')
    start = time.perf_counter()
    for ep in range(a.epochs):
        model.train()
        order = torch.randperm(m)
        for b in range(0, m, a.batch):
            idx = order[b:b + a.batch]
            w = W[idx]
            norm = w.sum()
            if norm == 0:
                continue
            opt.zero_grad()
            z = model(X[idx], ahat[idx], mask[idx])
            loss = (ce(z.reshape(-1, 2), Y[idx].reshape(-1)) * w.reshape(-1)).sum() / norm
            loss.backward()
            opt.step()
        model.eval()
        s1, cnt = torch.zeros(n_all + 1), torch.zeros(n_all + 1)
        with torch.no_grad():
            for b in range(0, m, a.batch):
                sl = slice(b, min(m, b + a.batch))
                p1 = torch.softmax(model(X[sl], ahat[sl], mask[sl]), -1)[..., 1]
                s1.index_add_(0, nodes[sl].reshape(-1), p1.reshape(-1))
                cnt.index_add_(0, nodes[sl].reshape(-1), mask[sl].reshape(-1))
        p = s1[:n_all] / cnt[:n_all].clamp(min=1)
        last = auc(p[val], labels[val])
    el = time.perf_counter() - start
    print('epochs %d, %.2f s (%.1f ms per epoch), threads %d, last validation AUC %.3f' % (a.epochs, el, 1000 * el / a.epochs, a.threads, last))


if __name__ == '__main__':
    main()
