package model

import (
	"context"
	"errors"
	"fmt"
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
	// Variants names the probability vectors a Scorer returns for every
	// subgraph, in order (at most MaxVariants, distinct, each a non-empty
	// lower-case identifier): Variants[0] is the one the engine serves as
	// the prediction (for the FASD models, FairVariant); the others (a
	// baseline, other debiasing settings) are stored and averaged alongside
	// it. Nil means FairVariant alone.
	Variants []string
	// Threshold is the decision threshold on P(1) the models were trained
	// with: a prediction's class is 1 iff P(1) > Threshold, for every
	// variant. Values outside (0, 1), zero included, mean 0.5.
	Threshold float64
}

// ClassOf is the class of a probability of class 1 under i's threshold.
func (i *Info) ClassOf(p1 float64) int {
	t := i.Threshold
	if !(t > 0 && t < 1) {
		t = 0.5
	}
	if p1 > t {
		return 1
	}
	return 0
}

// The variant names of the trained FASD models.
const (
	// FairVariant is the classifier f on the debiased subgraph.
	FairVariant = "fasd"
	// NoDiffusionVariant is the w/o-Diffusion classifier on the clean
	// subgraph (the baseline stored with the models).
	NoDiffusionVariant = "no_diffusion"
)

// MaxVariants bounds the variants of a model.
const MaxVariants = 16

// VariantNames returns the variant names, FairVariant alone when none are
// given.
func (i *Info) VariantNames() []string {
	if len(i.Variants) == 0 {
		return []string{FairVariant}
	}
	return i.Variants
}

// ValidateVariants checks the variant names: at most MaxVariants, distinct,
// each 1 to 32 characters of a–z, 0–9 and '_' starting with a letter.
func (i *Info) ValidateVariants() error {
	names := i.VariantNames()
	if len(names) > MaxVariants {
		return fmt.Errorf("%d variants, at most %d", len(names), MaxVariants)
	}
	seen := map[string]bool{}
	for k, n := range names {
		if seen[n] {
			return fmt.Errorf("variants[%d]: %q named twice", k, n)
		}
		seen[n] = true
		ok := len(n) >= 1 && len(n) <= 32 && n[0] >= 'a' && n[0] <= 'z'
		for j := 0; ok && j < len(n); j++ {
			c := n[j]
			ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
		}
		if !ok {
			return fmt.Errorf("variants[%d]: %q is not a lower-case identifier of at most 32 characters", k, n)
		}
	}
	return nil
}

// Contribution is what a Scorer returns for one subgraph: per variant of
// the model (Info.Variants, in order), the class probabilities of every
// local node (N×2, row-major).
type Contribution struct {
	Probs [][]float32
}

// Resize makes c hold k variants of n nodes each, reusing its slices.
func (c *Contribution) Resize(k, n int) {
	if cap(c.Probs) < k {
		c.Probs = append(c.Probs[:cap(c.Probs)], make([][]float32, k-cap(c.Probs))...)
	}
	c.Probs = c.Probs[:k]
	for i := range c.Probs {
		c.Probs[i] = GrowBuffer(c.Probs[i], 2*n)
	}
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
	// Contribute debiases sg with randomness from rng only and writes, for
	// every variant of the model in order, the class probabilities of
	// every local node into dst.Probs (dst.Resize sizes it), reusing dst's
	// slices. sg must not be modified.
	Contribute(ctx context.Context, sg *fasd.Subgraph, rng *rand.Rand, dst *Contribution) error
}

// SubgraphDebiaser is implemented by Scorers that can return the debiased
// subgraph they classify. DebiasSubgraph must draw from rng exactly as
// Contribute's debiasing does, so that for the same sg and seed it writes
// the X̃ (N×D) and Ã (N×N) that Contribute classifies.
type SubgraphDebiaser interface {
	DebiasSubgraph(ctx context.Context, sg *fasd.Subgraph, rng *rand.Rand, x, a []float32) error
}

// Reuser is implemented by Models that may find work for a root done
// ahead of time in the engine's store: package runs keeps, for every
// training root, f's probabilities on the subgraph fasd train debiased,
// so that materializing does not debias it again. The engine reads the
// value under ReuseKey(root) (in one request per chunk of roots on a
// server store) and hands it to the scorer's ContributeReusing.
type Reuser interface {
	// ReuseKey returns the store key of root's stored work, or nil when
	// the models keep none.
	ReuseKey(root uint32) []byte
}

// ReusingScorer is implemented by the Scorers of a Reuser.
type ReusingScorer interface {
	// ContributeReusing is Contribute for the subgraph sg of root
	// sg.Root(), with rng the root's debiasing generator
	// fasd.NewRand(fasd.RootSeed(Info.Seed, fasd.PurposeDebias,
	// sg.Root())), given stored, the value under ReuseKey(sg.Root()). It
	// uses stored only where that writes the bits Contribute would, and
	// reports whether it did; a value it cannot use (other models, a
	// subgraph that changed since, a damaged value) is not an error: it
	// then computes the contribution as Contribute does.
	ContributeReusing(ctx context.Context, sg *fasd.Subgraph, rng *rand.Rand, stored []byte, dst *Contribution) (reused bool, err error)
}

// GrowBuffer returns b resized to n values, reallocated when too small.
func GrowBuffer(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}
