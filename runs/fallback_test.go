package runs

import (
	"context"
	"slices"
	"testing"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/index/synth"
	"github.com/fasd-db/fasd/query/model"
)

// ensure that models which fell back (pipeline.Models.FellBack) serve the
// w/o-Diffusion classifier on the clean subgraph as the fair prediction
// and hand out the clean subgraph as the debiased one, while the same
// models without the flag debias.
func TestTrainedModel_FellBackServesWithoutDiffusion(t *testing.T) {
	sc := synth.Small()
	sc.Nodes = 200
	_, g := synthGraph(t, sc, "pokec")
	cfg := e2eConfig(t, 3)
	cfg.Score.Epochs, cfg.Classifier.Epochs = 2, 5
	_, res, err := Train(context.Background(), g, cfg, &TrainOptions{NoSave: true})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Models
	if m.FBase == nil {
		t.Fatal("no w/o-Diffusion classifier")
	}
	const n = 4
	sg := &fasd.Subgraph{Nodes: []uint32{0, 1, 2, 3}, D: m.D, X: make([]float32, n*m.D), A: make([]float32, n*n)}
	rng := fasd.NewRand(9)
	for i := range sg.X {
		sg.X[i] = rng.Float32()
	}
	for _, e := range [][2]int{{0, 1}, {1, 2}, {0, 3}} {
		sg.A[e[0]*n+e[1]], sg.A[e[1]*n+e[0]] = 1, 1
	}
	x0, a0 := slices.Clone(sg.X), slices.Clone(sg.A)
	for _, fell := range []bool{false, true} {
		m.FellBack = fell
		tm, err := NewTrainedModel(m, "v")
		if err != nil {
			t.Fatal(err)
		}
		sc, err := tm.NewScorer()
		if err != nil {
			t.Fatal(err)
		}
		var c model.Contribution
		if err := sc.Contribute(context.Background(), sg, fasd.NewRand(5), &c); err != nil {
			t.Fatal(err)
		}
		e, err := m.NewEngine()
		if err != nil {
			t.Fatal(err)
		}
		base := make([]float32, 2*n)
		if err := e.BaseProbs(sg.X, sg.A, n, base); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.Probs[1], base) {
			t.Errorf("fell back %v: no_diffusion %v, want f_base on the clean subgraph %v", fell, c.Probs[1], base)
		}
		if fair := slices.Equal(c.Probs[0], base); fair != fell {
			t.Errorf("fell back %v: fair prediction %v equals w/o Diffusion's %v: %v", fell, c.Probs[0], base, fair)
		}
		x, a := make([]float32, len(sg.X)), make([]float32, len(sg.A))
		if err := sc.(model.SubgraphDebiaser).DebiasSubgraph(context.Background(), sg, fasd.NewRand(5), x, a); err != nil {
			t.Fatal(err)
		}
		if clean := slices.Equal(x, x0) && slices.Equal(a, a0); clean != fell {
			t.Errorf("fell back %v: the debiased subgraph is the clean one: %v", fell, clean)
		}
		if !slices.Equal(sg.X, x0) || !slices.Equal(sg.A, a0) {
			t.Fatal("the input subgraph was modified")
		}
	}
}
