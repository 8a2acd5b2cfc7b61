package runs

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/index"
)

// TrainInput reads the graph of view v for one training run of cfg: all node
// records (features, sensitive attribute, label, split), one subgraph per
// node of the stored train ∪ val ∪ test split, sampled with cfg's sampler
// over v.SampleNeighbors and the per-root generator
// fasd.NewRand(fasd.RootSeed(cfg.Seed, fasd.PurposeSample, root)), and,
// with withGraph, the full edge list for the GCN baseline. The node
// features are kept once, in Input.Features; the subgraphs leave X nil
// (see pipeline.Input).
func TrainInput(ctx context.Context, v *index.View, cfg *pipeline.Config, withGraph bool) (*pipeline.Input, error) {
	in, _, err := trainInput(ctx, v, cfg, withGraph, 0, nil, nil)
	return in, err
}

// estimateRootsPurpose seeds the choice of the roots an estimate samples
// (fasd.DeriveSeed(cfg.Seed, estimateRootsPurpose)).
const estimateRootsPurpose = 0x657374 // "est"

// pickRoots returns roots, or with 0 < limit < len(roots) limit of them
// chosen uniformly without replacement by a partial Fisher–Yates shuffle
// seeded from seed, in ascending order (as the full run samples them). It
// reorders roots.
func pickRoots(roots []uint32, limit int, seed uint64) []uint32 {
	if limit <= 0 || limit >= len(roots) {
		return roots
	}
	rng := fasd.NewRand(fasd.DeriveSeed(seed, estimateRootsPurpose))
	for i := 0; i < limit; i++ {
		j := i + rng.IntN(len(roots)-i)
		roots[i], roots[j] = roots[j], roots[i]
	}
	roots = roots[:limit]
	slices.Sort(roots)
	return roots
}

// trainInput is TrainInput; with limit > 0 it samples at most limit roots,
// chosen uniformly without replacement by a generator seeded from cfg.Seed
// (the same roots for the same seed and graph), and returns the number of
// roots the full run has. onSample, if set, is called before each root is
// sampled; onChoose, if set, before the scope choice trains its networks.
func trainInput(ctx context.Context, v *index.View, cfg *pipeline.Config, withGraph bool, limit int,
	onSample func(root uint32), onChoose func(*pipeline.ScopeChoice)) (*pipeline.Input, int, error) {
	n := v.NumNodes()
	d := v.NumFeatures()
	in := &pipeline.Input{NumNodes: n, D: d, Labels: make([]int8, n), Sens: make([]int8, n), Split: make([]fasd.Split, n),
		FeatureNames: v.FeatureNames()}
	x := make([]float32, 0, n*d)
	for u := 0; u < n; u++ {
		if u%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		nd, err := v.Node(uint32(u))
		if err != nil {
			return nil, 0, fmt.Errorf("read node %d: %w", u, err)
		}
		if len(nd.Features) != d {
			return nil, 0, fmt.Errorf("%w: node %d has %d features, want %d", ErrCorrupt, u, len(nd.Features), d)
		}
		x = append(x, nd.Features...)
		in.Labels[u], in.Sens[u] = nd.Label, nd.Sensitive
		in.Split[u] = nd.Split
	}
	src := &fasd.ArrayNodes{D: d, X: x, S: in.Sens, Y: in.Labels, Split: in.Split}
	var roots []uint32
	for u := 0; u < n; u++ {
		if in.Split[u] != fasd.SplitNone {
			roots = append(roots, uint32(u))
		}
	}
	total := len(roots)
	// sample.scope = "auto" settles the sampling before it starts: from
	// the labels alone where they refuse the wide scope (then the full
	// graph is not read for it), otherwise with the networks on the full
	// graph.
	var err error
	if in.Scope, err = pipeline.PreviewScope(cfg, in); err != nil {
		return nil, 0, err
	}
	if withGraph || cfg.NeedsScopeChoice() {
		if in.Graph, err = fullGraph(ctx, v, x); err != nil {
			return nil, 0, err
		}
	}
	if cfg.NeedsScopeChoice() {
		if onChoose != nil && in.Scope != nil {
			onChoose(in.Scope)
		}
		if in.Scope, err = pipeline.ChooseScope(ctx, cfg, in); err != nil {
			return nil, 0, err
		}
	}
	if !withGraph {
		in.Graph = nil
	}
	if in.Subgraphs, err = sampleRoots(ctx, v, cfg, d, src, pickRoots(roots, limit, cfg.Seed), false, onSample); err != nil {
		return nil, 0, err
	}
	in.Features = x
	return in, total, nil
}

// fullGraph reads every edge of v once (u < w) for the full-graph networks,
// with x (all nodes' features) as their features.
func fullGraph(ctx context.Context, v *index.View, x []float32) (*pipeline.FullGraph, error) {
	g := &pipeline.FullGraph{X: x}
	var nb []uint32
	var err error
	for u := 0; u < v.NumNodes(); u++ {
		if u%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if nb, err = v.Neighbors(uint32(u), nb[:0]); err != nil {
			return nil, fmt.Errorf("neighbours of %d: %w", u, err)
		}
		for _, w := range nb {
			if uint32(u) < w {
				g.Edges = append(g.Edges, [2]uint32{uint32(u), w})
			}
		}
	}
	return g, nil
}

// TrainOptions configure Train.
type TrainOptions struct {
	// Variants to evaluate besides FASD; empty means FASD and w/o Diffusion
	// (whose classifier is stored as the models' baseline).
	Variants []pipeline.Variant
	// Diagnostics computes the §14 diagnostics into the run record.
	Diagnostics bool
	// NoSave runs without persisting anything.
	NoSave bool
	// Retune evaluates extra debiasing settings on the trained score
	// networks (pipeline.Options.Retune).
	Retune    []pipeline.Retune
	Callbacks pipeline.Callbacks
	// Scratch is pipeline.Options.Scratch (e.g. TempScratch): where the
	// debiased features go instead of memory; nil keeps them in memory.
	Scratch func() (pipeline.Scratch, error)
	// Sampled, if set, is called after the input was read and sampled
	// (elapsed includes the scope choice, if one ran).
	Sampled func(in *pipeline.Input, elapsed time.Duration)
	// Choosing, if set, is called before sample.scope = "auto" trains
	// its full-graph networks (where the labels allow the wide scope),
	// with the choice pending: on a large graph they take minutes.
	Choosing func(ch *pipeline.ScopeChoice)
	// Estimated, if set, makes Train run pipeline.EstimateRun first (a few
	// seconds) and report the extrapolated time before the long work.
	Estimated func(est *pipeline.Estimate)
	// EstimateOnly makes Train stop after Estimated (which it requires):
	// it then samples only EstimateRoots roots (0: DefaultEstimateRoots),
	// chosen with the config's seed, and extrapolates to all of them
	// (pipeline.EstimateRunSampled), so the answer takes seconds at any
	// graph size. Train returns nil results.
	EstimateOnly  bool
	EstimateRoots int

	onSample func(root uint32) // tests: called before each root is sampled
}

// DefaultEstimateRoots is the number of roots TrainOptions.EstimateOnly
// samples by default.
const DefaultEstimateRoots = 2000

// Train runs the FASD pipeline of cfg on the graph g (at its current
// version) and, unless NoSave, persists the trained models and the run
// record in g's store (see Save). It returns the record and the full
// result.
func Train(ctx context.Context, g *index.Graph, cfg pipeline.Config, opt *TrainOptions) (*Record, *pipeline.Result, error) {
	if opt == nil {
		opt = &TrainOptions{}
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	if !opt.NoSave && pipeline.Readout(cfg.Classifier.Readout) == pipeline.ReadoutRoot {
		return nil, nil, fmt.Errorf("%w: classifier.readout = %q is for fasd eval only: the query engine serves predictions averaged over subgraphs, so models trained for a root readout would be served with another rule",
			pipeline.ErrConfig, pipeline.ReadoutRoot)
	}
	variants := opt.Variants
	if len(variants) == 0 {
		variants = []pipeline.Variant{pipeline.VariantFASD, pipeline.VariantNoDiffusion}
	}
	withGraph := false
	for _, v := range variants {
		withGraph = withGraph || v == pipeline.VariantGCN
	}
	view, err := g.View()
	if err != nil {
		return nil, nil, err
	}
	defer view.Close()
	started := time.Now()
	limit := 0
	if opt.EstimateOnly {
		if opt.Estimated == nil {
			return nil, nil, fmt.Errorf("runs: EstimateOnly without Estimated")
		}
		limit = opt.EstimateRoots
		if limit <= 0 {
			limit = DefaultEstimateRoots
		}
	}
	var in *pipeline.Input
	var total int
	if opt.EstimateOnly && !withGraph {
		// sample.scope = "auto" is settled from the labels where they
		// refuse the wide scope; otherwise the estimate is for the
		// configured sampling and says the choice is pending (its
		// networks would make the estimate as slow as the stage they
		// decide about).
		in, total, err = estimateInput(ctx, view, &cfg, limit, opt.onSample)
	} else {
		in, total, err = trainInput(ctx, view, &cfg, withGraph, limit, opt.onSample, opt.Choosing)
	}
	if err != nil {
		return nil, nil, err
	}
	sampleTime := time.Since(started)
	if opt.Sampled != nil {
		opt.Sampled(in, sampleTime)
	}
	popt := &pipeline.Options{Variants: variants, Diagnostics: opt.Diagnostics, Retune: opt.Retune, Callbacks: opt.Callbacks,
		Scratch: opt.Scratch}
	var memo *memoWriter
	if !opt.NoSave && !opt.EstimateOnly {
		// Keep f's probabilities on the debiased training subgraphs for
		// the query engine (memo.go), so that fasd materialize does not
		// debias them again.
		memo = &memoWriter{s: g.Store()}
		defer memo.close()
		popt.FairProbs = memo.put
	}
	if opt.Estimated != nil {
		est, err := pipeline.EstimateRunSampled(ctx, cfg, in, popt, total)
		if err != nil {
			return nil, nil, err
		}
		opt.Estimated(est)
		if opt.EstimateOnly {
			return nil, nil, nil
		}
	}
	res, err := pipeline.Run(ctx, cfg, in, popt)
	if err != nil {
		return nil, nil, err
	}
	if memo != nil {
		if err := memo.flush(ctx); err != nil {
			return nil, nil, err
		}
	}
	res.Timings = append([]pipeline.StageTiming{{Stage: "sample", Seconds: sampleTime.Seconds(), Units: len(in.Subgraphs)}}, res.Timings...)
	rec := &Record{
		Created:      started.UTC(),
		Preset:       cfg.Preset,
		Seed:         cfg.Seed,
		Config:       cfg.TOML(),
		GraphVersion: view.Version(),
		Result:       res,
	}
	if opt.NoSave {
		return rec, res, nil
	}
	// The store keeps the memo of the run saved last: the one the engine
	// serves (LoadLatest). A run that fell back debiases nothing when
	// served, so it keeps none.
	var keep []byte
	if memo != nil && memo.prefix != nil && res.Models != nil && !res.Models.FellBack {
		keep = memo.prefix
		rec.Memo = &MemoInfo{Fingerprint: memo.fp, Subgraphs: memo.n}
	}
	if err := deleteMemosExcept(g.Store(), keep); err != nil {
		return nil, nil, err
	}
	if err := Save(g.Store(), rec, res.Models); err != nil {
		return nil, nil, err
	}
	return rec, res, nil
}

// Sweep samples the graph g with cfg's seed and runs pipeline.Sweep over
// the N_steps × λ grid (nothing is persisted); opt as for pipeline.Sweep.
func Sweep(ctx context.Context, g *index.Graph, cfg pipeline.Config, steps []int, lambdas []float64, opt *pipeline.Options) ([]pipeline.SweepPoint, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	view, err := g.View()
	if err != nil {
		return nil, err
	}
	defer view.Close()
	in, err := TrainInput(ctx, view, &cfg, false)
	if err != nil {
		return nil, err
	}
	return pipeline.Sweep(ctx, cfg, in, steps, lambdas, opt)
}
