// Package nn holds FASD's layers and networks, the optimiser and the
// parallel training runner, built on packages autodiff and tensor.
//
// # Networks
//
//   - [GCNNet]: GCN layers, then fully connected layers, ReLU and dropout on
//     every hidden layer, logits out. [GSenConfig] gives the sensitive-attribute
//     predictor g_sen of docs/method.md §3, [ClassifierConfig] the node classifier f
//     of §10. [GCNNet.SensitiveGrads] computes the cached ∇_X L_sen and
//     ∇_A L_sen of §3.
//   - [ScoreX]: s_θ, GDSS ScoreNetworkX (§6).
//   - [ScoreA]: s_φ, GDSS ScoreNetworkA with GMH attention layers (§7). Its
//     edge MLPs and MLP_A are entrywise over symmetric channel stacks, so
//     they run on the packed upper triangle (autodiff.PackSym), bit for bit
//     the all-pairs result at about half the cost; A must be symmetric (it
//     always is in FASD; a non-symmetric A has its symmetric part used by
//     those MLPs).
//
// Every network is built from a config and an injected *rand.Rand (for the
// initialisation only), exposes Params in a fixed order, and records its
// forward pass on an autodiff.Tape given padded batches: X (B×N×D),
// A (B×N×N) and a node mask of B·N values in {0,1}. A single unpadded
// subgraph is the case B = 1 with an all-ones mask. Valid outputs do not
// depend on padding, and padded outputs are 0. Forward methods are safe to
// call concurrently on different tapes: models hold only parameters.
//
// Training mode versus eval mode: GCNNet.Forward applies dropout only when
// given a non-nil rng; eval mode is a nil rng on a tape with SetNoGrad(true).
//
// # Training
//
// [Adam] is Adam with classic L2 weight decay added to the gradient (not
// AdamW), with [Adam.DecayLR] for the per-epoch learning-rate decay.
// [ClipGradNorm] clips the global gradient norm of one model, [EMA] keeps an
// exponential moving average of the weights with decay
// min(β, (1+n)/(10+n)). [Workers] splits a batch into contiguous shards, one
// tape and one goroutine per shard (opt-in; Workers(1) runs inline), and sums
// the shard gradients in shard order, so results are deterministic for a seed
// and a worker count. A worker's tape keeps the arena of the largest shard it
// recorded; [Workers.Release] hands it back at the end of a training stage
// ([Workers.ArenaBytes] says how much that is). [SaveParams] and
// [LoadParams] store parameters in a versioned, checksummed binary format on
// an io.Writer / io.Reader.
//
// # Caveats
//
// Float32 results depend on the worker count (the summation order of the
// gradient changes with the shard boundaries); they do not depend on
// scheduling. Networks panic on shape mismatches (programmer errors); config
// problems are reported by the constructors as errors.
package nn
