package model

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/fasd-db/fasd/fasd"
)

// ErrNoModel reports that there are no trained models to serve (run fasd
// train).
var ErrNoModel = errors.New("no trained models")

// Info describes trained models: everything the engine needs besides the
// networks themselves.
type Info struct {
	// Version identifies the trained models (for example a hash of the
	// persisted bundle); views record it and are rebuilt when it changes.
	Version string
	// Seed is the run seed: root r's subgraph is sampled with
	// fasd.NewRand(fasd.RootSeed(Seed, fasd.PurposeSample, r)) and debiased
	// with fasd.NewRand(fasd.RootSeed(Seed, fasd.PurposeDebias, r)).
	Seed uint64
	// Sample are the sampler options the models were trained with.
	Sample fasd.SampleOptions
	// FeatureHash identifies the feature names, in order, the models were
	// trained on (index.Schema.FeatureHash of the names).
	FeatureHash string
	// Baseline reports whether scorers also return w/o-Diffusion
	// probabilities.
	Baseline bool
}

// Contribution is what a Scorer returns for one subgraph: class
// probabilities per local node (N×2, row-major) of the debiased subgraph,
// and optionally those of the w/o-Diffusion classifier on the clean
// subgraph (nil when the models have no baseline).
type Contribution struct {
	Fair []float32
	Base []float32
}

// Model is a set of trained models. It must be safe for concurrent use;
// its Scorers need not be.
type Model interface {
	Info() Info
	// NewScorer returns a scorer for use by one goroutine at a time.
	NewScorer() (Scorer, error)
}

// Scorer debiases and classifies one subgraph.
type Scorer interface {
	// Contribute debiases sg with randomness from rng only and writes the
	// class probabilities of every local node of the debiased subgraph
	// into dst.Fair (and, for models with a baseline, those of the
	// w/o-Diffusion classifier on the clean sg into dst.Base), reusing
	// dst's slices. sg must not be modified.
	Contribute(ctx context.Context, sg *fasd.Subgraph, rng *rand.Rand, dst *Contribution) error
}

// SubgraphDebiaser is implemented by Scorers that can return the debiased
// subgraph they classify. DebiasSubgraph must draw from rng exactly as
// Contribute's debiasing does, so that for the same sg and seed it writes
// the X̃ (N×D) and Ã (N×N) that Contribute classifies.
type SubgraphDebiaser interface {
	DebiasSubgraph(ctx context.Context, sg *fasd.Subgraph, rng *rand.Rand, x, a []float32) error
}

// GrowBuffer returns b resized to n values, reallocated when too small.
func GrowBuffer(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}
