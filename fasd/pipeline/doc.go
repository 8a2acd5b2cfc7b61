// Package pipeline runs FASD end to end on in-memory subgraphs: it trains the
// sensitive-attribute predictor g_sen, the score networks s_θ and s_φ with the
// fairness-aware forward diffusion, debiases every subgraph with the reverse
// predictor–corrector sampler, trains the GCN classifier f on the debiased
// subgraphs and evaluates accuracy, ΔDP and ΔEO (docs/method.md §2–§11).
//
// Like the rest of fasd it is pure computation: the caller samples the
// subgraphs (package fasd's Sampler over any NeighborSampler) and persists
// what it wants of the result. Config holds every hyper-parameter with the
// paper's presets.
//
// # Running
//
//	res, err := pipeline.Run(ctx, cfg, &pipeline.Input{...}, &pipeline.Options{
//		Variants:    pipeline.Variants(), // fasd, no_diffusion, no_fairness, gcn
//		Diagnostics: true,
//	})
//	bundle, _ := res.Models.MarshalBinary() // g_sen, s_θ, s_φ, f, f_base
//
// Run executes, for VariantFASD: g_sen training on every subgraph (§3), the
// cached ∇_X L_sen and ∇_A L_sen per subgraph (only for λ_X > 0 and λ_A > 0:
// the fairness term is their only use), joint score training (§5:
// batches of score.batch subgraphs, one t and one (ε_X, ε_A) per subgraph,
// per-model clipping, Adam with L2, lr × lr_decay per epoch, optional EMA),
// debiasing (§8, §9) and f (§10: train-split node occurrences only,
// validation accuracy of the subgraph-averaged predictions after every
// epoch, the epoch with the strictly best validation accuracy is selected
// and its test metrics reported). w/o Diffusion trains f on the original
// subgraphs, w/o Fairness repeats score training with λ = 0 and the same
// seeds; both reuse the subgraphs and every seed of the FASD run, so the
// comparisons are paired (§11). In the default preset λ = 0 already
// (docs/method.md §20): the score networks would come out the same bit for
// bit, so w/o Fairness reuses FASD's and differs from it only by running
// without guidance.
// VariantGCN is a plain full-graph 2-layer
// GCN on Input.Graph. EstimateRun extrapolates a run's wall time from a
// short run of every stage (EstimateRunSampled from a sample of the
// subgraphs, linearly to the full root count); Sweep runs the N_steps × λ
// sensitivity grid.
//
// # Memory
//
// The node features can be given once (Input.Features) instead of in every
// subgraph (a node occurs in many): subgraphs may then leave X nil and the
// pipeline gathers their rows. Options.Scratch moves the debiased features,
// which are per subgraph, out of the heap into caller-provided storage (a
// temporary file in fasd train), read back per batch; a debiased view is
// released after the last stage that reads it. Neither changes a bit of the
// result. EstimateRun's peak-memory estimate counts all of this.
//
// # Models and the query path
//
// Models holds the trained networks with the effective config, D and the
// hash of the feature names (FeatureHash); MarshalBinary/UnmarshalModels
// encode them (magic, JSON header with the config as TOML, nn.SaveParams
// blocks, SHA-256). An Engine (Models.NewEngine) debiases one subgraph
// (Engine.Debias, seeded per root with fasd.RootSeed(seed,
// fasd.PurposeDebias, root)) and gives f's class probabilities of one
// subgraph (Engine.Probs; BaseProbs for the w/o-Diffusion classifier). The
// pipeline itself debiases and evaluates through Engines, one unpadded
// subgraph at a time, so a query engine that loads the Models computes
// bit-identical results.
//
// # Determinism and concurrency
//
// Every random stream is derived from Config.Seed with fasd.DeriveSeed and a
// purpose (see train.go): initialisations, batch orders, dropout, the
// per-draw (t, ε) of score training (seeded by epoch and position, not by
// worker), debiasing noise (per root). Results are identical for the same
// config, input and Workers; float32 gradient sums depend on the worker
// count (shard boundaries), so a different worker count gives slightly
// different numbers. Run starts Config.Workers goroutines (nn.Workers for
// training batches, plus a parallel loop for per-subgraph work) and stops
// them before returning. Callbacks run on the caller's goroutine.
//
// # Choices where docs/method.md leaves room
//
//   - Training batches are padded to the largest subgraph of each shard
//     (Alg. 3 subgraphs differ by at most a few nodes), which lets s_θ and
//     s_φ run as a few large matrix products; debiasing and evaluation run
//     per subgraph without padding (the Engine path).
//   - g_sen's widths are h, h/2, h/4 for sens.hidden = h (64/32/16 by
//     default); f's are h, h, h.
//   - The fresh probe of §14 uses g_sen's schedule with lr max(sens.lr,
//     1e-3), since it sees only the train-rooted subgraphs.
//   - The held-out loss ratio R uses fresh (t, ε) draws, one per t bin and
//     validation-rooted subgraph (at most 256); those subgraphs were seen in
//     training (the paper trains on all of them), only the draws are new. It
//     is reported for the untrained and the trained networks.
//   - The GCN baseline uses a CSR Â = D^{-1/2}(A+I)D^{-1/2} with a
//     hand-written backward pass (no dense N×N matrix; Â·X formed once, so
//     the first layer needs no sparse product), baseline.* schedule,
//     cross-entropy over train nodes, selection on validation accuracy.
//   - debias.scale_eps = 0 and debias.tau = 0 mean exactly zero (package
//     fasd would read 0 as its default).
//
// # Caveats
//
// Score training dominates the cost: on NBA shapes each epoch is about 23
// GFLOP, nearly all in float32 GEMMs (see BENCHMARKS.md (FASD pipeline)).
package pipeline
