// Package fasd holds the pure-computation pieces of FASD (Fairness-Aware
// Subgraph Diffusion) that need no neural network: subgraph sampling, the
// VP-SDE kernels and the fairness-aware forward perturbation, the reverse
// predictor–corrector debiasing sampler, post-processing, the fairness
// metrics, order-independent prediction averaging, and a float64 reference
// for g_sen's input gradients. The tensors, autodiff and layers live in the
// subpackages tensor, autodiff and nn. docs/method.md in this repository
// describes the method as implemented; its section numbers (§n) are cited
// throughout as "docs/method.md §n".
//
// Conventions: matrices are dense, row-major []float32 (N×D features, N×N
// adjacency); results go into caller-provided dst buffers or into reused
// slices of a destination struct; randomness always comes from an injected
// *rand.Rand (math/rand/v2). The package does no I/O, keeps no globals and
// starts no goroutines. Types with scratch buffers (Sampler, Debiaser) are
// not safe for concurrent use: make one per goroutine. Everything else is a
// pure function.
//
// # Subgraphs
//
// A Subgraph has local node 0 as its root, a local→global id map, features
// X (N×D), a symmetric zero-diagonal weighted adjacency A (N×N), and per
// node the sensitive attribute S (−1 unknown), the label Y (−1 unlabelled)
// and the Split. Expanded lists the nodes whose neighbour lists the sampler
// read, which is what decides when a graph update makes the subgraph stale.
//
// # Sampling and determinism
//
// The sampler sees the graph only through NeighborSampler (plus
// NeighborLister for induced edges). Every implementation must draw
// neighbours with DrawPositions over the ascending neighbour list, so the
// in-memory CSRGraph and the on-disk bitmap index give the same sample for
// the same generator. Seed one generator per root with
//
//	rng := fasd.NewRand(fasd.RootSeed(runSeed, fasd.PurposeSample, root))
//
// so that a root's subgraph depends only on (run seed, root) and the
// adjacency lists it read, never on scheduling. Debiasing noise uses
// PurposeDebias (and DeriveSeed for further parts such as a content
// version).
//
// A typical flow for one root:
//
//	s, _ := fasd.NewSampler(fasd.SampleOptions{Depth: 2, Fanout: 10})
//	var smp fasd.Sample
//	err := s.Sample(graph, root, rng, &smp)
//	var sg fasd.Subgraph
//	err = fasd.BuildSubgraph(&smp, d, nodeSource, &sg)
//	// ... g_sen gradients, score training (perturbation via Perturb) ...
//	deb, _ := fasd.NewDebiaser(fasd.DebiasOptions{Steps: 5})
//	err = deb.Run(model, sg.X, sg.A, sg.N(), sg.D, debiasRng, xOut, aOut)
//	err = fasd.PostProcess(aOut, sg.N(), nil)
//
// # Diffusion and debiasing
//
// VPSDE gives β(t), m(t), σ_t and the corrector's α. Perturb builds the
// fairness-aware perturbed subgraph X_t = m·X₀ + σ·ε − γ·G and the
// ε-prediction target T = ε − (γ/σ)·G, with γ literal (default) or linear.
// Debiaser runs the reverse PC sampler against a ScoreModel that returns raw
// ε-predictions; it converts them to scores S = −out/σ_t itself. Getting this
// conversion wrong reverses the debiasing; the Gaussian-oracle test guards it.
// RunBatch runs many subgraphs in lockstep (one PredictBatch call per
// sub-step if the model implements BatchScoreModel) and gives each item the
// same result as Run with its own generator.
//
// # Evaluation
//
// Evaluate computes Acc, ΔDP and ΔEO (as fractions; NaN plus a flag for an
// empty group), Summarize gives mean and population std over runs, AUC the
// ROC AUC. AveragePredictions and AverageNode average class probabilities in
// ascending root order in float64, so a node's prediction is bit-identical
// however the work was scheduled and whether it was refreshed incrementally
// or rebuilt.
//
// # Caveats and deviations from the paper (docs/method.md §16)
//
//   - The PC sampler adds no noise in either sub-step of the last iteration,
//     whatever the order; GDSS's C→P order keeps the corrector noise there.
//   - The corrector draws its z even on the noise-free last iteration (ω
//     needs ‖z‖) and even when it skips the step (‖S‖ < 1e-12), so the
//     generator consumption depends only on shapes and options.
//   - scale_eps = 0.7 is not an exact sampler: on the Gaussian oracle it
//     recovers about 0.49·s² instead of s² (tested).
//   - With induced edges, every member's neighbour list is read, so
//     Sample.Expanded then lists all members (expanded nodes first).
//   - ScoreModel takes the time t although FASD's networks ignore it, so
//     analytic models fit the same interface.
package fasd
