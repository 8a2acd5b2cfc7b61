package pipeline

import (
	"context"
	"testing"

	"github.com/fasd-db/fasd/fasd/nn"
)

// ensure that every training stage hands its tapes back when it ends (the
// workers hold nothing between stages) and that training the score
// networks on released workers gives bit for bit the networks of fresh
// workers.
func TestTrainingStages_ReleaseTapes(t *testing.T) {
	g := newToyGraph(120, 6, 6, 0.8, 0.4, 0.8, 8)
	in := g.input(t, 1, 6)
	cfg := fastConfig(t)
	cfg.Sens.Epochs, cfg.Score.Epochs = 3, 2
	sgs, _, _, _, err := in.validate()
	if err != nil {
		t.Fatal(err)
	}
	v := originalView(sgs, in.D, nil)
	all := make([]int, len(sgs))
	for i := range all {
		all[i] = i
	}
	ctx := context.Background()
	w := nn.NewWorkers[float32](2)
	defer w.Close()
	gsen, _, err := trainSensNet(ctx, &cfg, cfg.Sens, v, all, in.D, w, 1, 2, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	if n := w.ArenaBytes(); n != 0 {
		t.Fatalf("after g_sen training the workers hold %d bytes", n)
	}
	grads, _, err := sensGrads(ctx, gsen, v, in.D, 2, false, true, true, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	sx, sa, _, err := trainScore(ctx, &cfg, v, grads, in.D, w, 3, 4, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	if n := w.ArenaBytes(); n != 0 {
		t.Fatalf("after score training the workers hold %d bytes", n)
	}
	fresh := nn.NewWorkers[float32](2)
	defer fresh.Close()
	fx, fa, _, err := trainScore(ctx, &cfg, v, grads, in.D, fresh, 3, 4, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	for k, pair := range [][2][]*nn.Param[float32]{{sx.Params(), fx.Params()}, {sa.Params(), fa.Params()}} {
		for i, p := range pair[0] {
			for j, x := range p.Value.Data {
				if y := pair[1][i].Value.Data[j]; x != y {
					t.Fatalf("model %d: %s[%d] = %v after released workers, %v with fresh ones", k, p.Name, j, x, y)
				}
			}
		}
	}
}
