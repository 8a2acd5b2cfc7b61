package pipeline

import (
	"context"
	"fmt"
	"testing"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/nn"
)

// nbaShaped is an NBA-shaped input: 403 nodes, D = 95, Alg. 3 subgraphs
// with d = 2, k = 10 (about 20 nodes each).
func nbaShaped(b testing.TB) (*Input, *view) {
	g := newToyGraph(403, 95, 50, 0.7, 0.3, 0.5, 11)
	in := g.input(b, 1, 10)
	sgs, _, _, _, err := in.validate()
	if err != nil {
		b.Fatal(err)
	}
	return in, originalView(sgs, in.D, nil)
}

// BenchmarkScoreEpoch_NBAShaped is one epoch of joint s_θ/s_φ training over
// 313-ish NBA-shaped subgraphs (batch 128, 2 workers, fairness gradients).
func BenchmarkScoreEpoch_NBAShaped(b *testing.B) {
	in, v := nbaShaped(b)
	cfg, _ := Preset("nba")
	cfg.Score.Epochs = 1
	w := nn.NewWorkers[float32](2)
	defer w.Close()
	net, _, err := trainSensNet(context.Background(), &cfg, cfg.Sens, v, []int{0}, in.D, w, 1, 2, &reporter{})
	if err != nil {
		b.Fatal(err)
	}
	grads, _, err := sensGrads(context.Background(), net, v, in.D, 2, false, true, true, &reporter{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, _, _, err := trainScore(context.Background(), &cfg, v, grads, in.D, w, 1, 2, &reporter{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDebiasAll is the debias stage of the default profile (five
// probability-flow steps of both score networks, eight linear guides) on
// about 800 subgraphs shaped like the generated removable graph's (D = 32,
// Alg. 3 with k = 10: about 20 nodes each), with freshly initialised score
// networks, on one worker (its ms/subgraph is the CPU time per subgraph the
// stage spends at any graph size) and on two (the wall time per subgraph on
// two cores: how well the workers share the stage).
func BenchmarkDebiasAll(b *testing.B) {
	g := newToyGraph(1000, 32, 20, 0.8, 0.3, 0.5, 5)
	in := g.input(b, 1, 10)
	sgs, _, _, _, err := in.validate()
	if err != nil {
		b.Fatal(err)
	}
	v := originalView(sgs, in.D, nil)
	m := freshDebiasModels(b, v, in.D)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for b.Loop() {
				if _, err := debiasAll(context.Background(), m, v, workers, nil, &reporter{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(sgs))/1e6, "ms/subgraph")
		})
	}
}

// freshDebiasModels is the default preset's models for d features with
// freshly initialised score networks and the linear guides fitted on v:
// what debiasAll needs, without training (its cost does not depend on the
// weights).
func freshDebiasModels(tb testing.TB, v *view, d int) *Models {
	tb.Helper()
	cfg, err := Preset("default")
	if err != nil {
		tb.Fatal(err)
	}
	m, err := newModels(&cfg, d, false, true, false, false, fasd.NewRand(1))
	if err != nil {
		tb.Fatal(err)
	}
	if m.Guides, err = trainLinearGuides(context.Background(), v, d, guideRounds(&cfg), cfg.Debias.GuideNet); err != nil {
		tb.Fatal(err)
	}
	return m
}
