// Package pipeline runs FASD end to end on in-memory subgraphs: it trains the
// sensitive-attribute predictor g_sen, the score networks s_θ and s_φ with the
// fairness-aware forward diffusion, debiases every subgraph with the reverse
// predictor–corrector sampler, trains the GCN classifier f on the debiased
// subgraphs and evaluates accuracy, ΔDP and ΔEO (method.md §2–§11).
//
// Like the rest of fasd it is pure computation: the caller samples the
// subgraphs (package fasd's Sampler over any NeighborSampler) and persists
// what it wants of the result. Config holds every hyper-parameter with the
// paper's presets.
package pipeline
