package pipeline

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/nn"
)

// ensure (§14, training sanity) that after score training the held-out
// loss ratio R = E‖out − T‖²/E‖T‖² is below 1 in every t bin and below the
// untrained networks' ratio, for X and A, with the fairness term on.
func TestScoreTraining_LossRatioFalls(t *testing.T) {
	g := newToyGraph(160, 6, 6, 0.8, 0.4, 0.8, 6)
	in := g.input(t, 1, 6)
	cfg := fastConfig(t)
	cfg.Score.Epochs = 15
	v, w, all, gsen := sensFixture(t, &cfg, in)
	ctx := context.Background()
	grads, _, err := sensGrads(ctx, gsen, v, in.D, 2, false, true, true, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	m0, _ := newModels(&cfg, in.D, false, true, false, false, fasd.NewRand(7))
	r0, err := scoreLossRatio(ctx, &cfg, m0.ScoreX, m0.ScoreA, v, grads, all[:60], in.D, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	sx, sa, st, err := trainScore(ctx, &cfg, v, grads, in.D, w, 7, 8, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	r1, err := scoreLossRatio(ctx, &cfg, sx, sa, v, grads, all[:60], in.D, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	for b := 0; b < TBins; b++ {
		t.Logf("bin %d: R_X %.3f → %.3f, R_A %.3f → %.3f, ratio ‖γG‖/‖σε‖ X %.3g A %.3g", b, r0.RX[b], r1.RX[b], r0.RA[b], r1.RA[b], st.RatioX[b], st.RatioA[b])
		if !(r1.RX[b] < 1 && r1.RA[b] < 1 && r1.RX[b] < r0.RX[b] && r1.RA[b] < r0.RA[b]) {
			t.Errorf("bin %d: R_X %.3f → %.3f, R_A %.3f → %.3f: want < 1 and falling", b, r0.RX[b], r1.RX[b], r0.RA[b], r1.RA[b])
		}
		// linear γ with λ = 1: ‖γG‖ = λ‖σε‖ exactly.
		if math.Abs(float64(st.RatioX[b])-1) > 1e-3 || math.Abs(float64(st.RatioA[b])-1) > 1e-3 {
			t.Errorf("bin %d: fairness-to-noise ratio %v / %v, want 1 under linear γ, λ = 1", b, st.RatioX[b], st.RatioA[b])
		}
	}
}

// ensure (§14) that with λ = 0 and a tiny reverse step the debiased
// subgraphs stay close to the input, and that post-processing leaves a
// valid adjacency (symmetric, zero diagonal, nothing in (0, τ)).
func TestDebias_TinyStepKeepsInput(t *testing.T) {
	g := newToyGraph(120, 6, 6, 0.8, 0.4, 0.8, 7)
	in := g.input(t, 1, 6)
	cfg := fastConfig(t)
	cfg.Diffusion.LambdaX, cfg.Diffusion.LambdaA = 0, 0
	cfg.Debias.DtRev = 1e-4
	m, _ := newModels(&cfg, in.D, false, true, false, false, fasd.NewRand(2))
	m.Config = cfg
	sgs, _, _, _, _ := in.validate()
	v := originalView(sgs, in.D, nil)
	deb, err := debiasAll(context.Background(), m, v, 2, nil, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	es, err := editStats(v, deb)
	if err != nil {
		t.Fatal(err)
	}
	if es.FeatureRMSE > 0.05 || es.EdgesRemoved != 0 || es.EdgesAdded != 0 {
		t.Fatalf("tiny step changed too much: %+v", es)
	}
	// A 100× larger step edits more.
	m.Config.Debias.DtRev = 1e-2
	big, err := debiasAll(context.Background(), m, v, 2, nil, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	if eb, err := editStats(v, big); err != nil || !(eb.FeatureRMSE > 2*es.FeatureRMSE) {
		t.Fatalf("Δt_rev 1e-2 edits %v (%v), Δt_rev 1e-4 %v", eb.FeatureRMSE, err, es.FeatureRMSE)
	}
	tau := float32(cfg.Debias.Tau)
	for i, sg := range sgs {
		n := sg.N()
		a, err := deb.a(i, nil)
		if err != nil {
			t.Fatal(err)
		}
		for u := 0; u < n; u++ {
			if a[u*n+u] != 0 {
				t.Fatalf("root %d: diagonal %v", sg.Root(), a[u*n+u])
			}
			for w := 0; w < n; w++ {
				if a[u*n+w] != a[w*n+u] || (a[u*n+w] != 0 && a[u*n+w] < tau) {
					t.Fatalf("root %d: Ã[%d,%d] = %v", sg.Root(), u, w, a[u*n+w])
				}
			}
		}
	}
}

// ensure that an invalid config or input is refused before any work.
func TestRun_Refuses(t *testing.T) {
	g := newToyGraph(60, 4, 5, 0.8, 0.4, 0.8, 8)
	in := g.input(t, 1, 4)
	cfg := fastConfig(t)
	cfg.Debias.Order = "XY"
	if _, err := Run(context.Background(), cfg, in, nil); err == nil {
		t.Fatal("invalid config accepted")
	}
	cfg = fastConfig(t)
	bad := *in
	bad.Labels = bad.Labels[:3]
	if _, err := Run(context.Background(), cfg, &bad, nil); err == nil {
		t.Fatal("invalid input accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, cfg, in, nil); err == nil {
		t.Fatal("cancelled context ignored")
	}
}

// ensure that with λ_X = λ_A = 0 the score networks, their statistics and
// the loss-ratio diagnostic are bit for bit the same whether the fairness
// gradients were cached or not (Run caches them only for λ > 0).
func TestScoreTraining_LambdaZeroNeedsNoGradients(t *testing.T) {
	g := newToyGraph(100, 6, 6, 0.8, 0.4, 0.8, 9)
	in := g.input(t, 1, 6)
	cfg := fastConfig(t)
	cfg.Score.Epochs = 3
	cfg.Diffusion.LambdaX, cfg.Diffusion.LambdaA = 0, 0
	v, w, all, gsen := sensFixture(t, &cfg, in)
	ctx := context.Background()
	full, l1, err := sensGrads(ctx, gsen, v, in.D, 2, false, true, true, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	none, l2, err := sensGrads(ctx, gsen, v, in.D, 2, false, false, false, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	if l1 != l2 || none.gx != nil || none.ga != nil || full.gx == nil || full.ga == nil {
		t.Fatalf("mean L_sen %v vs %v; uncached gradients %v %v", l1, l2, none.gx != nil, none.ga != nil)
	}
	type out struct {
		params []float32
		st     *ScoreStats
		lr     *LossRatio
	}
	train := func(gc *gradCache) out {
		sx, sa, st, err := trainScore(ctx, &cfg, v, gc, in.D, w, 7, 8, &reporter{})
		if err != nil {
			t.Fatal(err)
		}
		lr, err := scoreLossRatio(ctx, &cfg, sx, sa, v, gc, all[:40], in.D, 2, 5)
		if err != nil {
			t.Fatal(err)
		}
		o := out{st: st, lr: lr}
		for _, p := range append(sx.Params(), sa.Params()...) {
			o.params = append(o.params, p.Value.Data...)
		}
		return o
	}
	a, b := train(full), train(none)
	for i := range a.params {
		if math.Float32bits(a.params[i]) != math.Float32bits(b.params[i]) {
			t.Fatalf("parameter %d: %v with cached gradients, %v without", i, a.params[i], b.params[i])
		}
	}
	if fmt.Sprint(a.st) != fmt.Sprint(b.st) || fmt.Sprint(a.lr) != fmt.Sprint(b.lr) {
		t.Errorf("statistics differ:\n%v %v\n%v %v", a.st, a.lr, b.st, b.lr)
	}
}

// ensure that with λ_X = λ_A = 0 w/o Fairness reuses FASD's score networks
// (they would come out the same bit for bit, as the test above shows)
// instead of training them again.
func TestRun_NoFairnessReusesNetworksAtZeroLambda(t *testing.T) {
	g := newToyGraph(120, 6, 6, 0.8, 0.4, 0.8, 4)
	in := g.input(t, 1, 6)
	cfg := fastConfig(t)
	cfg.Score.Epochs = 3
	cfg.Diffusion.LambdaX, cfg.Diffusion.LambdaA = 0, 0
	rs, err := ParseRetune("debias.steps=3")
	if err != nil {
		t.Fatal(err)
	}
	var stages []Stage
	res, err := Run(context.Background(), cfg, in, &Options{Variants: []Variant{VariantFASD, VariantNoFairness}, Retune: rs, Callbacks: Callbacks{
		StageStart: func(s Stage, _ int) { stages = append(stages, s) },
	}})
	if err != nil {
		t.Fatal(err)
	}
	retunes := 0
	for _, s := range stages {
		if s == StageScoreNoFair || s == StageGSen {
			t.Errorf("λ = 0, linear or no guides: stage %s ran (stages %v)", s, stages)
		}
		if s == StageRetune {
			retunes++
		}
	}
	if res.ScoreNoFair != res.Score {
		t.Errorf("λ = 0: w/o Fairness score stats %p, FASD's %p: want the same", res.ScoreNoFair, res.Score)
	}
	// The retune rows of w/o Fairness are FASD's (same networks, same
	// config), copied rather than recomputed.
	byName := map[Variant]VariantResult{}
	for _, v := range res.Variants {
		byName[v.Variant] = v
	}
	fr, ok1 := byName["fasd@debias.steps=3"]
	nr, ok2 := byName["no_fairness@debias.steps=3"]
	if !ok1 || !ok2 {
		t.Fatalf("retune rows missing: %v", slices.Collect(maps.Keys(byName)))
	}
	if fr.Test != nr.Test || fr.BestEpoch != nr.BestEpoch || retunes != 1 {
		t.Errorf("no_fairness retune %+v (epoch %d), fasd's %+v (epoch %d), %d retune stages: want equal rows, one stage",
			nr.Test, nr.BestEpoch, fr.Test, fr.BestEpoch, retunes)
	}
	// With λ > 0 both g_sen and a second score training run.
	cfg.Diffusion.LambdaX = 0.1
	stages = stages[:0]
	if _, err := Run(context.Background(), cfg, in, &Options{Variants: []Variant{VariantFASD, VariantNoFairness}, Callbacks: Callbacks{
		StageStart: func(s Stage, _ int) { stages = append(stages, s) },
	}}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(stages, StageScoreNoFair) || !slices.Contains(stages, StageGSen) {
		t.Errorf("λ > 0: stages %v, want g_sen and a w/o Fairness score stage", stages)
	}
}

// sensFixture returns the original view of in's subgraphs, two workers
// (closed with the test), the indices of all subgraphs and a g_sen trained
// on them with cfg.
func sensFixture(t *testing.T, cfg *Config, in *Input) (*view, *nn.Workers[float32], []int, *nn.GCNNet[float32]) {
	t.Helper()
	sgs, _, _, _, err := in.validate()
	if err != nil {
		t.Fatal(err)
	}
	v := originalView(sgs, in.D, nil)
	w := nn.NewWorkers[float32](2)
	t.Cleanup(func() { w.Close() })
	all := make([]int, len(sgs))
	for i := range all {
		all[i] = i
	}
	gsen, _, err := trainSensNet(context.Background(), cfg, cfg.Sens, v, all, in.D, w, 1, 2, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	return v, w, all, gsen
}
