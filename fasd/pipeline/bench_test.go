package pipeline

import (
	"context"
	"testing"

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
