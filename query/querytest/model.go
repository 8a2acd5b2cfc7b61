package querytest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query/model"
)

// Model is a deterministic stand-in for the trained models: "debiasing"
// adds rng-driven Gaussian noise to the features and shifts them by the
// sensitive value, and the classifier is a fixed logistic model on
// neighbour-averaged feature scores. Every input it reads (features,
// sensitive values, adjacency, the random stream) changes its output, so
// determinism and dirty-marking bugs show up as differences.
type Model struct {
	// Spec is what Info returns; tests may change it before opening an
	// engine.
	Spec  model.Info
	w     []float64
	calls atomic.Int64
}

// NewModel returns a test model for a graph with the feature names names
// (Algorithm 3 sampler, depth 2, fanout 3) with the variant "fasd" and, if
// baseline, "no_diffusion" (the classifier on the clean subgraph).
func NewModel(names []string, seed uint64, baseline bool) *Model {
	rng := rand.New(rand.NewPCG(seed, 7))
	w := make([]float64, len(names))
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	schema := index.Schema{Features: names}
	variants := []string{model.FairVariant}
	if baseline {
		variants = append(variants, model.NoDiffusionVariant)
	}
	return &Model{
		Spec: model.Info{
			Version: fmt.Sprintf("test-%d", seed), Seed: seed,
			Sample:      fasd.SampleOptions{Mode: fasd.SamplerAlg3, Depth: 2, Fanout: 3},
			FeatureHash: schema.FeatureHash(), Variants: variants,
		},
		w: w,
	}
}

// Info implements model.Model.
func (m *Model) Info() model.Info { return m.Spec }

// NewScorer implements model.Model.
func (m *Model) NewScorer() (model.Scorer, error) { return &scorer{m: m}, nil }

// Calls returns the number of subgraphs the model's scorers have scored.
func (m *Model) Calls() int64 { return m.calls.Load() }

type scorer struct {
	m *Model
	x []float32
}

// Contribute implements model.Scorer.
func (s *scorer) Contribute(ctx context.Context, sg *fasd.Subgraph, rng *rand.Rand, dst *model.Contribution) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.m.calls.Add(1)
	n, d := sg.N(), sg.D
	s.x = append(s.x[:0], sg.X...)
	s.debias(sg, rng, s.x)
	names := s.m.Spec.VariantNames()
	dst.Resize(len(names), n)
	for k, name := range names {
		switch {
		case k == 0:
			dst.Probs[k] = s.m.Classify(s.x, sg.A, n, d, dst.Probs[k])
		case name == model.NoDiffusionVariant:
			dst.Probs[k] = s.m.Classify(sg.X, sg.A, n, d, dst.Probs[k])
		default:
			// Any other variant: the debiased subgraph with the
			// adjacency dropped.
			dst.Probs[k] = s.m.Classify(s.x, make([]float32, n*n), n, d, dst.Probs[k])
		}
	}
	return nil
}

// debias is the test model's "debiasing": noise on x (a copy of sg.X) and
// a shift of group 1's features; the adjacency is kept.
func (s *scorer) debias(sg *fasd.Subgraph, rng *rand.Rand, x []float32) {
	n, d := sg.N(), sg.D
	for i := range x {
		x[i] += float32(0.3 * rng.NormFloat64())
	}
	for i := range n {
		if sg.S[i] == 1 {
			for k := range d {
				x[i*d+k] -= 0.2
			}
		}
	}
}

// DebiasSubgraph implements model.SubgraphDebiaser.
func (s *scorer) DebiasSubgraph(ctx context.Context, sg *fasd.Subgraph, rng *rand.Rand, x, a []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	copy(x, sg.X)
	s.debias(sg, rng, x)
	copy(a, sg.A)
	return nil
}

// Classify appends to dst the test model's class probabilities (n×2) of
// the subgraph with features x (n×d) and weighted adjacency a (n×n): what
// its scorers compute on the debiased subgraph.
func (m *Model) Classify(x, a []float32, n, d int, dst []float32) []float32 {
	dst = dst[:0]
	score := make([]float64, n)
	for i := range n {
		for k := range d {
			score[i] += m.w[k] * float64(x[i*d+k])
		}
	}
	for i := range n {
		num, den := score[i], 1.0
		for j := range n {
			num += float64(a[i*n+j]) * score[j]
			den += float64(a[i*n+j])
		}
		p1 := 1 / (1 + math.Exp(-(num/den + 0.1)))
		dst = append(dst, float32(1-p1), float32(p1))
	}
	return dst
}
