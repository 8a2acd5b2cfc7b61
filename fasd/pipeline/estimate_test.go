package pipeline

import (
	"context"
	"math"
	"runtime"
	"testing"
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
		sc := cfg
		sc.Score.Budget = 3 * len(planScore(&sc.Score, c.ms).train)
		sh := estimateShapes(&cfg, &sc, c.m, c.ms)
		g := sh[StageGSen]
		if g.evalN != float64(c.gsenHeld) || g.epochs != 1.5*float64(cfg.Sens.Patience) || g.checks != g.epochs ||
			g.maxEpochs != float64(cfg.Sens.Epochs) || math.Abs(g.trainScale-float64(c.m-c.gsenHeld)/float64(c.ms-12)) > 1e-12 {
			t.Errorf("m %d: g_sen %+v", c.m, g)
		}
		f := sh[StageClassifier]
		if f.evalN != float64(c.m) || f.epochs != 1.5*float64(cfg.Classifier.Patience) || f.checks != f.epochs {
			t.Errorf("m %d: f %+v", c.m, f)
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
			if s.Epochs != 8 && s.Epochs != 6 || !(s.Seconds > 0) || s.MaxSeconds < s.Seconds {
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
