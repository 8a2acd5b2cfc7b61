package pipeline

import (
	"context"
	"math"
	"testing"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/nn"
)

// ensure that the padded batch paths (score networks and f) give exactly
// the per-subgraph (Engine) results, so the pipeline may batch for speed
// without changing a bit of what a query engine computes.
func TestBatchedEqualsPerSubgraph(t *testing.T) {
	g := newToyGraph(120, 7, 6, 0.8, 0.4, 0.8, 4)
	in := g.input(t, 1, 6)
	cfg := fastConfig(t)
	m, err := newModels(&cfg, in.D, false, true, true, false, fasd.NewRand(3))
	if err != nil {
		t.Fatal(err)
	}
	sgs := in.Subgraphs[:23]
	one := &scoreModel{sx: m.ScoreX, sa: m.ScoreA, tape: autodiff.NewTape[float32]()}
	bat := &scoreModel{sx: m.ScoreX, sa: m.ScoreA, tape: autodiff.NewTape[float32]()}
	var xs, as, oxs, oas [][]float32
	var ns []int
	for _, sg := range sgs {
		n := sg.N()
		xs, as, ns = append(xs, sg.X), append(as, sg.A), append(ns, n)
		oxs, oas = append(oxs, make([]float32, n*in.D)), append(oas, make([]float32, n*n))
	}
	if err := bat.PredictBatch(0.1, xs, as, ns, in.D, oxs, oas); err != nil {
		t.Fatal(err)
	}
	for k, sg := range sgs {
		n := sg.N()
		ox, oa := make([]float32, n*in.D), make([]float32, n*n)
		if err := one.Predict(0.1, sg.X, sg.A, n, in.D, ox, oa); err != nil {
			t.Fatal(err)
		}
		for i := range ox {
			if ox[i] != oxs[k][i] {
				t.Fatalf("subgraph %d: s_θ output %d: %v batched vs %v alone", k, i, oxs[k][i], ox[i])
			}
		}
		for i := range oa {
			if oa[i] != oas[k][i] {
				t.Fatalf("subgraph %d: s_φ output %d: %v batched vs %v alone", k, i, oas[k][i], oa[i])
			}
		}
	}
	v := originalView(sgs, in.D, nil)
	batched := make([][]float32, len(sgs))
	if err := classProbs(context.Background(), m.F, v, in.D, 2, batched); err != nil {
		t.Fatal(err)
	}
	e := &Engine{m: m, tape: autodiff.NewTape[float32]()}
	for k, sg := range sgs {
		p := make([]float32, 2*sg.N())
		if err := e.Probs(sg.X, sg.A, sg.N(), p); err != nil {
			t.Fatal(err)
		}
		for i := range p {
			if p[i] != batched[k][i] {
				t.Fatalf("subgraph %d: probs differ at %d: %v vs %v", k, i, batched[k][i], p[i])
			}
		}
	}
	_ = nn.ZeroGrads[float32]
}

// ensure that the pipeline's batched debiasing of all subgraphs equals
// Engine.Debias on each subgraph alone with its root's generator.
func TestDebiasAllEqualsEngine(t *testing.T) {
	g := newToyGraph(150, 6, 6, 0.8, 0.4, 0.8, 5)
	in := g.input(t, 2, 6)
	cfg := fastConfig(t)
	cfg.Seed = 9
	cfg.Debias.DtRev = 0.05
	m, err := newModels(&cfg, in.D, false, true, false, false, fasd.NewRand(4))
	if err != nil {
		t.Fatal(err)
	}
	sgs, _, _, _, err := in.validate()
	if err != nil {
		t.Fatal(err)
	}
	v := originalView(sgs, in.D, nil)
	deb, err := debiasAll(context.Background(), m, v, 2, nil, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := m.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	changed := false
	for i, sg := range sgs {
		n := sg.N()
		x, a := make([]float32, n*in.D), make([]float32, n*n)
		if err := e.Debias(sg.X, sg.A, n, fasd.NewRand(fasd.RootSeed(cfg.Seed, fasd.PurposeDebias, sg.Root())), x, a); err != nil {
			t.Fatal(err)
		}
		for k := range x {
			if x[k] != deb.xs[i][k] {
				t.Fatalf("root %d: X̃[%d] %v batched vs %v alone", sg.Root(), k, deb.xs[i][k], x[k])
			}
			changed = changed || x[k] != sg.X[k]
		}
		da, err := deb.a(i, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k := range a {
			if math.Float32bits(a[k]) != math.Float32bits(da[k]) {
				t.Fatalf("root %d: Ã[%d] %v batched vs %v alone", sg.Root(), k, da[k], a[k])
			}
		}
	}
	if !changed {
		t.Fatal("debiasing changed nothing")
	}
}
