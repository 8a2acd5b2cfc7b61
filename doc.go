// Package fasd is an embeddable graph-database extension that serves fair
// node predictions.
//
// It implements FASD (Fairness-Aware Subgraph Diffusion, Alchihabi & Guo
// 2024) on top of an on-disk key-value store. Graphs live in Pebble (default)
// or Badger with roaring-bitmap adjacency; small subgraphs around labelled
// nodes are debiased by a fairness-aware reverse diffusion, a GCN classifier
// is trained on the debiased subgraphs, and a node's prediction is the mean of
// its class probabilities over every subgraph that contains it.
//
// # Packages
//
//   - storage: the key-value seam (a small Store interface) with the Pebble
//     and Badger backends and one conformance suite for both.
//   - index: the graph on top of storage: dense node ids, roaring adjacency,
//     attributes, group/label/split bitmaps, neighbour sampling, BFS, and the
//     loader for graph dumps.
//   - fasd: the method itself, pure computation on in-memory subgraphs
//     (tensors, autodiff, layers, diffusion, debiasing, classifier, metrics).
//   - query: the engine that composes index and fasd and keeps materialized
//     views of debiased subgraphs and fair predictions.
//   - cmd/fasd: the command-line tool and HTTP server.
//
// Dependencies point one way: cmd/fasd → query → {index → storage, fasd};
// fasd imports no other package of this module.
package fasd
