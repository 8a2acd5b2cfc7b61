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
//   - storage: the key-value seam (a small Store interface, Open and an
//     engine registry) and one conformance suite; the engines are
//     storage/pebble (default) and storage/badger in a local directory, and
//     storage/postgres on a PostgreSQL server (opened by a postgres:// DSN),
//     linked by importing them.
//   - index: the graph on top of storage: dense node ids, roaring adjacency,
//     attributes, group/label/split bitmaps, neighbour sampling, BFS, and the
//     loader for graph dumps.
//   - fasd: the method itself, pure computation on in-memory subgraphs
//     (tensors, autodiff, layers, diffusion, debiasing, classifier, metrics).
//   - query: the engine that composes index and fasd and keeps materialized
//     views of debiased subgraphs and fair predictions; its typed write API
//     applies graph updates and marks what they change. It takes trained
//     models through the small interface of query/model.
//   - runs: training runs and the model registry: trains the models on a
//     store's graph (fasd/pipeline), keeps bundles and run records in the
//     store, and hands the engine a model.
//   - httpapi: the JSON HTTP API over the engine, on plain net/http.
//   - cmd/fasd: the command-line tool.
//
// Dependencies point one way: cmd/fasd → {httpapi → query, runs,
// storage/pebble, storage/badger, storage/postgres}; storage/pebble,
// storage/badger, storage/postgres → storage;
// query → {query/model, index → storage, fasd}; runs → {query/model, index,
// fasd}; fasd imports no other package of this module; index and fasd
// share only the leaf vocabulary fasd/attr (Split, Unknown). The engine does
// not reach the training code, and no library package below httpapi reaches
// net/http or a storage engine, third-party dependencies included
// (internal/lint checks both transitively).
package fasd
