package pipeline

import (
	"context"
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/fasd-db/fasd/fasd"
)

// Ensure the extrapolation shapes of the default configuration: g_sen
// holds out every 10th subgraph (at most 256) and checks it every expected
// epoch, f checks every subgraph every epoch, the score networks check
// their held-out subgraphs about score.evals times over the budget.
func TestEstimateShapes(t *testing.T) {
	cfg, err := Preset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m, ms            int
		gsenHeld, scHeld int
	}{
		{313, 128, 31, 31},
		{18876, 128, 256, 256},
	} {
		cfg.Classifier.Arch = string(ArchGCN) // one f per stage; auto below
		sc := cfg
		sc.Score.Budget = 3 * len(planScore(&sc.Score, c.ms).train)
		sh := estimateShapes(&cfg, &sc, c.m, c.ms, 0, 0, 0)
		auto := cfg
		auto.Classifier.Arch = string(ArchAuto)
		for _, st := range []Stage{StageClassifier, StageNoDiffusion} {
			one, two := sh[st], estimateShapes(&auto, &sc, c.m, c.ms, 0, 0, 0)[st]
			if two.epochs != 2*one.epochs || two.maxEpochs != 2*one.maxEpochs || two.checks != 2*one.checks ||
				two.maxChecks != 2*one.maxChecks || two.trainScale != one.trainScale || two.evalN != one.evalN {
				t.Errorf("m %d: %s under auto %+v, want twice the epochs and checks of %+v", c.m, st, two, one)
			}
		}
		g := sh[StageGSen]
		if g.evalN != float64(c.gsenHeld) || g.epochs != expectEpochsUniform(cfg.Sens.Epochs, cfg.Sens.Patience) || g.checks != g.epochs ||
			g.maxEpochs != float64(cfg.Sens.Epochs) || math.Abs(g.trainScale-float64(c.m-c.gsenHeld)/float64(c.ms-12)) > 1e-12 {
			t.Errorf("m %d: g_sen %+v", c.m, g)
		}
		f := sh[StageClassifier]
		if f.evalN != float64(c.m) || f.epochs != fStopFactor*float64(cfg.Classifier.Patience) || f.checks != f.epochs {
			t.Errorf("m %d: f %+v", c.m, f)
		}
		if p := sh[StageProbe]; math.Abs(p.trainScale-float64(min(c.m, probeMaxRoots))/float64(c.ms)) > 1e-12 {
			t.Errorf("m %d: probe without training-rooted counts %+v, want scale min(m, %d)/ms", c.m, p, probeMaxRoots)
		}
		// Beyond probeMaxRoots a probe trains on a sample of that many
		// (256 of them held out).
		for _, st := range []Stage{StageProbe, StageFreshProbe} {
			p := estimateShapes(&cfg, &sc, c.m, c.ms, 40*probeMaxRoots, 14, 0)[st]
			if want := float64(probeMaxRoots-256) / 14; math.Abs(p.trainScale-want) > 1e-12 {
				t.Errorf("m %d: %s scale %v with %d training-rooted subgraphs, want %v", c.m, st, p.trainScale, 40*probeMaxRoots, want)
			}
		}
		// 1,699 training-rooted subgraphs less 169 held out, against 14
		// in the short run (too few to hold any out).
		for _, st := range []Stage{StageProbe, StageFreshProbe} {
			p := estimateShapes(&cfg, &sc, c.m, c.ms, 1699, 14, 0)[st]
			if math.Abs(p.trainScale-float64(1699-169)/14) > 1e-12 {
				t.Errorf("m %d: %s scale %v, want %v", c.m, st, p.trainScale, float64(1699-169)/14)
			}
		}
		s := sh[StageScore]
		if s.evalN != float64(c.scHeld) || s.checks < float64(cfg.Score.Evals) || s.checks > float64(cfg.Score.Evals)+1 || s.epochs <= 0 {
			t.Errorf("m %d: score %+v", c.m, s)
		}
	}
}

// Ensure that the estimate of a run with early stopping reports, per
// training stage, the expected epochs and a cap at least as long, and a
// peak memory above the process's current size (on Linux, where it is
// measured).
func TestEstimateRun_EarlyStoppingAndMemory(t *testing.T) {
	g := newToyGraph(160, 6, 6, 0.8, 0.4, 0.8, 6)
	in := g.input(t, 1, 5)
	cfg := fastConfig(t)
	cfg.Sens.Epochs, cfg.Sens.Patience = 200, 5
	cfg.Classifier.Epochs, cfg.Classifier.Patience = 100, 4
	est, err := EstimateRun(context.Background(), cfg, in, &Options{Variants: []Variant{VariantFASD, VariantNoDiffusion}})
	if err != nil {
		t.Fatal(err)
	}
	saw := map[Stage]bool{}
	for _, s := range est.Stages {
		switch s.Stage {
		case StageGSen, StageClassifier, StageNoDiffusion:
			saw[s.Stage] = true
			want := int(math.Round(fStopFactor * 4)) // f: 1.2 × patience 4
			if s.Stage == StageGSen {
				want = 105 // 200/2 + 5 − 25/400
			}
			if s.Epochs != want || !(s.Seconds > 0) || s.MaxSeconds < s.Seconds {
				t.Errorf("%s: %+v", s.Stage, s)
			}
		}
	}
	if len(saw) != 3 || est.MaxTotal < est.Total {
		t.Errorf("stages %v, total %v, max %v", saw, est.Total, est.MaxTotal)
	}
	if runtime.GOOS == "linux" && est.PeakBytes < residentBytes()/2 {
		t.Errorf("peak %d bytes, resident now %d", est.PeakBytes, residentBytes())
	}
}

// Ensure what the memory estimate counts per subgraph: FASD's debiased
// copy (its features only without a scratch) and its cached gradients only
// for λ > 0, one more copy with retune settings, w/o Fairness's copy after
// FASD's is released, nothing for w/o Diffusion alone.
func TestRunBytes(t *testing.T) {
	// Nodes 0, 1, 2 and 1, 3 with edges 0–1 (dense) and 1–3 (compact);
	// node 2's s is unknown: 3 distinct guide rows.
	sgs := []*fasd.Subgraph{
		{Nodes: []uint32{0, 1, 2}, S: []int8{0, 1, -1}, A: []float32{0, 1, 0, 1, 0, 0, 0, 0, 0}},
		{Nodes: []uint32{1, 3}, S: []int8{1, 0}, Adj: fasd.CompactAdj([]float32{0, 1, 1, 0}, 2)},
	}
	const d = 20
	// Features, the dense ∇_A, and the debiased adjacency (four entries
	// with weights, two SparseAdj values).
	x, a, ad := int64(4*(3+2)*d), int64(4*(9+4)), int64(8*4+2*sparseAdjSize)
	guides := int64(8 * 3 * d)
	scratch := func() (Scratch, error) { return nil, nil }
	retune := []Retune{{Set: []string{"debias.steps=2"}}}
	guided := []Retune{{Set: []string{"debias.guide_weight=1"}}}
	for _, c := range []struct {
		name   string
		lx, la float64
		guide  bool // the config's guide weight: the default preset's, else 0
		opt    Options
		want   int64
	}{
		{"fasd λ=0", 0, 0, false, Options{}, x + ad},
		{"fasd λ=0 scratch", 0, 0, false, Options{Scratch: scratch}, ad},
		{"fasd λ_X>0", 0.1, 0, false, Options{}, 2*x + ad},
		{"fasd λ>0 scratch", 0.1, 0.1, false, Options{Scratch: scratch}, x + a + ad},
		{"fasd λ=0 retune", 0, 0, false, Options{Retune: retune}, 2 * (x + ad)},
		{"no fairness alone", 0.1, 0.1, false, Options{Variants: []Variant{VariantNoFairness}}, x + ad},
		{"fasd+no fairness scratch", 0, 0, false, Options{Variants: []Variant{VariantFASD, VariantNoFairness}, Scratch: scratch}, ad},
		{"no diffusion alone", 0.1, 0.1, true, Options{Variants: []Variant{VariantNoDiffusion}}, 0},
		{"fasd_gcn alone", 0, 0, false, Options{Variants: []Variant{VariantFASDGCN}}, x + ad},
		{"fasd_prop alone, scratch", 0, 0, false, Options{Variants: []Variant{VariantFASDProp}, Scratch: scratch}, ad},
		{"prop alone", 0.1, 0.1, true, Options{Variants: []Variant{VariantProp}}, 0},
		{"guides, λ=0, scratch", 0, 0, true, Options{Scratch: scratch}, guides},
		{"guides, λ=0", 0, 0, true, Options{}, x + ad},
		{"guides, λ>0, scratch", 0.1, 0.1, true, Options{Scratch: scratch}, x + a + guides},
		{"guides from a retune setting, scratch", 0, 0, false, Options{Scratch: scratch, Retune: guided}, guides},
	} {
		cfg, err := Preset(DefaultPreset)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Diffusion.LambdaX, cfg.Diffusion.LambdaA = c.lx, c.la
		if !c.guide {
			cfg.Debias.GuideWeight = 0
		}
		if got := runBytes(&cfg, &c.opt, sgs, d); got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, got, c.want)
		}
	}
}

// Ensure the peak-memory estimate: headroom on the extra data, capped by a
// memory limit unless the live data exceed it.
func TestPeakBytes(t *testing.T) {
	for _, c := range []struct {
		small                int64
		extra, head          float64
		limit, outside, want int64
	}{
		{100, 50, 2, math.MaxInt64, 0, 200},
		{100, 50, 2, math.MaxInt64, 30, 200}, // no limit: the measured peak has it all
		{100, 50, 2, 180, 0, 180},
		{100, 50, 2, 160, 30, 190}, // the limit caps the heap, not the cache
		{100, 50, 2, 180, 30, 200}, // limit + outside above the uncapped peak
		{100, 50, 2, 120, 0, 150},
		{100, 50, 2, 100, 30, 150}, // live data above the limit + outside
		{100, 50, 2, 400, 0, 200},
		{300, 0, 2, 200, 0, 300},
	} {
		if got := peakBytes(c.small, c.extra, c.head, c.limit, c.outside); got != c.want {
			t.Errorf("peakBytes(%d, %v, %v, %d, %d) = %d, want %d", c.small, c.extra, c.head, c.limit, c.outside, got, c.want)
		}
	}
}

// TestExpectEpochsUniform checks the closed form against the mean of
// min(E, b + p) over best epochs b spread evenly over [0, E).
func TestExpectEpochsUniform(t *testing.T) {
	for _, c := range []struct {
		epochs, patience int
		want             float64
	}{
		{500, 100, 340},
		{300, 20, 300.0/2 + 20 - 400.0/600},
		{200, 5, 100 + 5 - 25.0/400},
		{50, 0, 50},  // no early stopping
		{10, 10, 10}, // patience ≥ cap: never stops early
		{10, 40, 10},
	} {
		got := expectEpochsUniform(c.epochs, c.patience)
		if math.Abs(got-c.want) > 1e-9 {
			t.Errorf("expectEpochsUniform(%d, %d) = %v, want %v", c.epochs, c.patience, got, c.want)
		}
		if c.patience > 0 && c.patience < c.epochs {
			const k = 100000
			var sum float64
			for i := 0; i < k; i++ {
				b := (float64(i) + 0.5) / k * float64(c.epochs)
				sum += math.Min(float64(c.epochs), b+float64(c.patience))
			}
			if mean := sum / k; math.Abs(mean-got) > 1e-6*got {
				t.Errorf("(%d, %d): closed form %v, mean %v", c.epochs, c.patience, got, mean)
			}
		}
	}
}

// Ensure the count of subgraphs the full run's loss ratio covers: the
// validation-rooted ones grown with the sample (all when none is), at
// most heldOutMax.
func TestHeldOutFull(t *testing.T) {
	split := []fasd.Split{fasd.SplitTrain, fasd.SplitVal, fasd.SplitTest, fasd.SplitVal}
	in := &Input{Split: split}
	sg := func(root uint32) *fasd.Subgraph { return &fasd.Subgraph{Nodes: []uint32{root}} }
	for _, c := range []struct {
		roots []uint32
		grow  float64
		want  int
	}{
		{[]uint32{0, 1, 2, 3}, 1, 2},
		{[]uint32{0, 1, 2, 3}, 10, 20},
		{[]uint32{0, 1, 2, 3}, 1000, heldOutMax},
		{[]uint32{0, 2}, 3, 6}, // no validation root: all subgraphs
	} {
		var sgs []*fasd.Subgraph
		for _, r := range c.roots {
			sgs = append(sgs, sg(r))
		}
		if got := heldOutFull(in, sgs, c.grow); got != c.want {
			t.Errorf("roots %v × %g: %d, want %d", c.roots, c.grow, got, c.want)
		}
	}
}

// ensure that the debiasing the estimate times apart (on more subgraphs
// than estimateDebiasRoots here) reports a positive time per subgraph,
// nothing without models, and the context's error when it is cancelled.
func TestDebiasPerSubgraph(t *testing.T) {
	g := newToyGraph(600, 8, 20, 0.8, 0.3, 0.5, 5)
	in := g.input(t, 1, 3)
	sgs, _, _, _, err := in.validate()
	if err != nil {
		t.Fatal(err)
	}
	if len(sgs) <= estimateDebiasRoots {
		t.Fatalf("%d subgraphs: the test needs more than %d", len(sgs), estimateDebiasRoots)
	}
	m := freshDebiasModels(t, originalView(sgs, in.D, in.Features), in.D)
	per, err := debiasPerSubgraph(context.Background(), m, sgs, in.D, in.Features, 2)
	if err != nil || !(per > 0) || math.IsInf(per, 0) {
		t.Fatalf("debiasPerSubgraph = %v, %v; want a positive time", per, err)
	}
	if per, err := debiasPerSubgraph(context.Background(), nil, sgs, in.D, in.Features, 2); per != 0 || err != nil {
		t.Errorf("without models: %v, %v; want 0, nil", per, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := debiasPerSubgraph(ctx, m, sgs, in.D, in.Features, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}
