package pipeline

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/fasd-db/fasd/fasd"
)

// toyGraph is a small biased graph: s ~ Bernoulli(½), y tied to s
// (P(y=1|s=0) = (1+corr)/2), features mixing a label signal and a leak of s,
// edges from a block model with same-group affinity homophily.
type toyGraph struct {
	n, d  int
	x     []float32
	s, y  []int8
	split []fasd.Split
	edges [][2]uint32
}

func newToyGraph(n, d int, avgDeg, homophily, corr, leak float64, seed uint64) *toyGraph {
	rng := rand.New(rand.NewPCG(seed, 7))
	g := &toyGraph{n: n, d: d, x: make([]float32, n*d), s: make([]int8, n), y: make([]int8, n), split: make([]fasd.Split, n)}
	a := make([]float64, d)
	b := make([]float64, d)
	for j := range a {
		a[j] = 0.8 * rng.NormFloat64()
		b[j] = leak * rng.NormFloat64()
	}
	for v := 0; v < n; v++ {
		if rng.Float64() < 0.5 {
			g.s[v] = 1
		}
		py := (1 + corr) / 2
		if g.s[v] == 1 {
			py = (1 - corr) / 2
		}
		if rng.Float64() < py {
			g.y[v] = 1
		}
		ys, ss := 2*float64(g.y[v])-1, 2*float64(g.s[v])-1
		for j := 0; j < d; j++ {
			g.x[v*d+j] = float32(math.Tanh(0.5 * (a[j]*ys + b[j]*ss + rng.NormFloat64())))
		}
		switch r := rng.Float64(); {
		case r < 0.2:
			g.split[v] = fasd.SplitTrain
		case r < 0.4:
			g.split[v] = fasd.SplitVal
		case r < 0.9:
			g.split[v] = fasd.SplitTest
		default:
			g.y[v] = -1
		}
	}
	// p_same/p_diff = homophily/(1−homophily), mean degree avgDeg.
	pd := avgDeg / (float64(n) * (homophily/(1-homophily) + 1) / 2)
	ps := pd * homophily / (1 - homophily)
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			p := pd
			if g.s[u] == g.s[v] {
				p = ps
			}
			if g.y[u] >= 0 && g.y[u] == g.y[v] {
				p *= 1.5
			}
			if rng.Float64() < p {
				g.edges = append(g.edges, [2]uint32{uint32(u), uint32(v)})
			}
		}
	}
	return g
}

// input samples one Alg. 3 subgraph per labelled node (depth 2, fanout k)
// with the per-root seeds of the pipeline.
func (g *toyGraph) input(t testing.TB, seed uint64, k int) *Input {
	t.Helper()
	csr, err := fasd.NewCSRGraph(g.n, g.edges)
	if err != nil {
		t.Fatal(err)
	}
	s, err := fasd.NewSampler(fasd.SampleOptions{Depth: 2, Fanout: k})
	if err != nil {
		t.Fatal(err)
	}
	src := &fasd.ArrayNodes{D: g.d, X: g.x, S: g.s, Y: g.y, Split: g.split}
	in := &Input{NumNodes: g.n, D: g.d, Labels: g.y, Sens: g.s, Split: g.split, Graph: &FullGraph{Edges: g.edges, X: g.x}}
	for v := 0; v < g.n; v++ {
		if g.split[v] == fasd.SplitNone {
			continue
		}
		var smp fasd.Sample
		if err := s.Sample(csr, uint32(v), fasd.NewRand(fasd.RootSeed(seed, fasd.PurposeSample, uint32(v))), &smp); err != nil {
			t.Fatal(err)
		}
		sg := new(fasd.Subgraph)
		if err := fasd.BuildSubgraph(&smp, g.d, src, sg); err != nil {
			t.Fatal(err)
		}
		in.Subgraphs = append(in.Subgraphs, sg)
	}
	for j := 0; j < g.d; j++ {
		in.FeatureNames = append(in.FeatureNames, string(rune('a'+j)))
	}
	return in
}

// fastConfig is the synth preset cut down to run in seconds.
func fastConfig(t testing.TB) Config {
	t.Helper()
	c, err := Preset("synth")
	if err != nil {
		t.Fatal(err)
	}
	c.Sens.Epochs = 20
	c.Score.Epochs = 5
	c.Classifier.Epochs = 20
	c.Baseline.Epochs = 50
	c.Score.Batch = 32
	return c
}

// sameResult is reflect.DeepEqual for VariantResults except that the
// choice evidence of classifier.arch = "auto", whose figures not reached
// are NaN (never equal to themselves), is compared by its JSON, where
// they are null.
func sameResult(a, b VariantResult) bool {
	ea, eb := a.ArchEvidence, b.ArchEvidence
	a.ArchEvidence, b.ArchEvidence = nil, nil
	if !reflect.DeepEqual(a, b) {
		return false
	}
	ja, err1 := json.Marshal(ea)
	jb, err2 := json.Marshal(eb)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
