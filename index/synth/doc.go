// Package synth generates synthetic biased graphs and writes them as dumps in
// the FairGNN format (package dump), so that the whole pipeline can run and
// be tested without the real datasets.
//
// # Model
//
// Each node has a true sensitive group s (group 1 with probability
// GroupShare) and a true label y with P(y=1 | s) = (1 ± LabelCorrelation)/2,
// so the label is correlated with the group. Features are drawn around means
// a_j·(±1 for y) + b_j·(±1 for s) with per-feature loadings a_j ~
// Signal·N(0,1) and b_j ~ Leakage·N(0,1): continuous features add N(0,1)
// noise, binary ones are Bernoulli of a sigmoid with a sparse base rate. The
// sensitive attribute is not a feature, but it leaks into them. Edges follow
// a stochastic block model over the four (s, y) blocks whose same-group and
// same-label affinities are Homophily and LabelHomophily, scaled to
// AvgDegree. A classifier that uses features and neighbourhoods therefore
// learns the group along with the label and its predictions differ by group:
// a plain GCN is measurably unfair (ΔDP well above 0.1 on Small; the tests
// check it with an SGC-style proxy).
//
// # Label-biased and removable bias
//
// The presets cover two kinds of bias. Small (and Pokec) are label-biased:
// LabelCorrelation ties the labels themselves to the group, so even a
// perfect classifier has ΔDP ≈ LabelCorrelation and no accurate classifier
// is fair; this is the stress case. Removable has labels barely tied to the
// group (LabelCorrelation 0.02) and Separate columns: the label signal and
// the leak of s live in different columns (LabelColumns, LeakColumns), and
// edges are strongly group-homophilous. A classifier on a node's own
// label-only columns is then accurate and nearly fair, while a plain GCN,
// which averages every column over mostly same-group neighbourhoods, reads
// the group and is clearly unfair: the bias is in the features and the
// edges and can be removed without giving up accuracy (the package tests
// check both with logistic-regression proxies).
//
// A fraction of nodes is written unlabelled (-1) and optionally with an
// unknown sensitive value (-1); their true attributes still shape features
// and edges.
//
// # Output
//
// Write produces synth.csv and synth_relationship.txt (".gz" when asked),
// read back with the dump preset "synth". Node ids are int64 above 2^32
// (NodeID). Each undirected edge appears once, in a random direction, plus a
// Reciprocal fraction written twice; there are no self-loops and no other
// duplicates.
//
// # Invariants
//
// Output is a deterministic function of the Config, Seed included: the same
// Config gives the same bytes, plain or gzip. Generation streams: memory is
// O(Nodes), the edge sampler is exact for the block model and runs in
// O(Nodes + Edges) using geometric skips.
package synth
