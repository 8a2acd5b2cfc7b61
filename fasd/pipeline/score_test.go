package pipeline

import (
	"context"
	"math"
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
	sgs, _, _, _, err := in.validate()
	if err != nil {
		t.Fatal(err)
	}
	v := originalView(sgs)
	w := nn.NewWorkers[float32](2)
	defer w.Close()
	all := make([]int, len(sgs))
	for i := range all {
		all[i] = i
	}
	ctx := context.Background()
	gsen, _, err := trainSensNet(ctx, &cfg, cfg.Sens, v, all, in.D, w, 1, 2, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	grads, _, err := sensGrads(ctx, gsen, v, in.D, 2, false, &reporter{})
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
	v := originalView(sgs)
	deb, err := debiasAll(context.Background(), m, v, 2, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	es := editStats(v, deb)
	if es.FeatureRMSE > 0.05 || es.EdgesRemoved != 0 || es.EdgesAdded != 0 {
		t.Fatalf("tiny step changed too much: %+v", es)
	}
	// A 100× larger step edits more.
	m.Config.Debias.DtRev = 1e-2
	big, err := debiasAll(context.Background(), m, v, 2, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	if eb := editStats(v, big); !(eb.FeatureRMSE > 2*es.FeatureRMSE) {
		t.Fatalf("Δt_rev 1e-2 edits %v, Δt_rev 1e-4 %v", eb.FeatureRMSE, es.FeatureRMSE)
	}
	tau := float32(cfg.Debias.Tau)
	for i, sg := range sgs {
		n := sg.N()
		a := deb.as[i]
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

// ensure that with λ_X = λ_A = 0 score networks trained with g_sen's
// gradients equal, bit for bit, those trained without them: the premise on
// which Run lets w/o Fairness reuse FASD's networks instead of training
// them again.
func TestScoreTraining_ZeroLambdaIgnoresGradients(t *testing.T) {
	g := newToyGraph(120, 6, 6, 0.8, 0.4, 0.8, 4)
	in := g.input(t, 1, 6)
	cfg := fastConfig(t)
	cfg.Score.Epochs = 3
	cfg.Diffusion.LambdaX, cfg.Diffusion.LambdaA = 0, 0
	sgs, _, _, _, err := in.validate()
	if err != nil {
		t.Fatal(err)
	}
	v := originalView(sgs)
	w := nn.NewWorkers[float32](2)
	defer w.Close()
	// Non-zero gradients: if λ = 0 did not switch the fairness term off,
	// they would change the targets.
	grads := &gradCache{gx: make([][]float32, len(sgs)), ga: make([][]float32, len(sgs))}
	rng := fasd.NewRand(9)
	for i, s := range sgs {
		grads.gx[i] = make([]float32, s.N()*in.D)
		grads.ga[i] = make([]float32, s.N()*s.N())
		fasd.FillNormal(rng, grads.gx[i])
		fasd.FillNormal(rng, grads.ga[i])
	}
	ctx := context.Background()
	sx1, sa1, _, err := trainScore(ctx, &cfg, v, grads, in.D, w, 7, 8, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	sx0, sa0, _, err := trainScore(ctx, &cfg, v, nil, in.D, w, 7, 8, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	p1, p0 := append(sx1.Params(), sa1.Params()...), append(sx0.Params(), sa0.Params()...)
	if len(p1) != len(p0) {
		t.Fatalf("%d vs %d parameters", len(p1), len(p0))
	}
	for i := range p1 {
		a, b := p1[i].Value.Data, p0[i].Value.Data
		for j := range a {
			if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
				t.Fatalf("parameter %d[%d]: %v with gradients, %v without", i, j, a[j], b[j])
			}
		}
	}
	// And the run: w/o Fairness reuses the networks (no second score stage).
	var stages []Stage
	res, err := Run(ctx, cfg, in, &Options{Variants: []Variant{VariantFASD, VariantNoFairness}, Callbacks: Callbacks{
		StageStart: func(s Stage, _ int) { stages = append(stages, s) },
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stages {
		if s == StageScoreNoFair {
			t.Errorf("λ = 0: w/o Fairness trained its own score networks (stages %v)", stages)
		}
	}
	if res.ScoreNoFair != res.Score {
		t.Errorf("λ = 0: w/o Fairness score stats %p, FASD's %p: want the same", res.ScoreNoFair, res.Score)
	}
}
