package runs

import (
	"context"
	"math"
	"testing"

	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/index/synth"
)

// ensure, end to end on the removable-bias generated graph (labels almost
// independent of the group, the group leaking into features and
// group-homophilous edges), that the default configuration's debiasing
// removes sensitive information and makes predictions fairer: over three
// paired seeds (same subgraphs, seeds and classifier initialisation) the
// fresh probe's AUC on FASD's debiased data is below its AUC on the
// original data in every seed and by removableProbeMargin on average,
// FASD's ΔDP + ΔEO is below w/o Diffusion's in every seed, and its ΔDP is
// below w/o Diffusion's by removableDPMargin on average. Observed with these
// settings (8 linear guides, the rate threshold): probe AUC drops 0.09–0.19
// (mean 0.134); ΔDP 0.026 / 0.120 / 0.038 against 0.206 / 0.110 / 0.245
// (one seed's ΔDP alone is not lower: its ΔEO is 0.005 against 0.263), mean
// 0.061 against 0.187. The schedules are shortened; RESULTS.md has the
// full-size, ten-seed comparison.
func TestDefaultFASD_RemovableBias(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end training runs")
	}
	sc := synth.Removable()
	sc.Nodes = 400
	_, g := synthGraph(t, sc, "nba")
	v, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	var probeDrop, dpF, dpB float64
	seeds := []uint64{1, 2, 3}
	for _, seed := range seeds {
		cfg, err := pipeline.Preset(pipeline.DefaultPreset)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Seed = seed
		// The debiasing itself is under test, not the choice between it
		// and w/o Diffusion (classifier.fallback_fasd has tests of its own).
		cfg.Classifier.FallbackFASD = string(pipeline.FallbackOff)
		cfg.Sens.Epochs = 60
		cfg.Score.Budget = 1500
		cfg.Classifier.Epochs = 80
		in, err := TrainInput(context.Background(), v, &cfg, false)
		if err != nil {
			t.Fatal(err)
		}
		res, err := pipeline.Run(context.Background(), cfg, in, &pipeline.Options{
			Variants: []pipeline.Variant{pipeline.VariantFASD, pipeline.VariantNoDiffusion}, Probe: true})
		if err != nil {
			t.Fatal(err)
		}
		f, b := res.Variant(pipeline.VariantFASD), res.Variant(pipeline.VariantNoDiffusion)
		if f.Probe == nil || b.Probe == nil {
			t.Fatal("no probe scores")
		}
		drop := float64(b.Probe.AUC - f.Probe.AUC)
		t.Logf("seed %d: fasd acc %.3f dp %.3f eo %.3f probe %.3f | no_diffusion acc %.3f dp %.3f eo %.3f probe %.3f", seed,
			f.Test.Acc, f.Test.DP, f.Test.EO, f.Probe.AUC, b.Test.Acc, b.Test.DP, b.Test.EO, b.Probe.AUC)
		if !(drop > 0) {
			t.Errorf("seed %d: probe AUC %.3f on debiased data, not below %.3f on the original", seed, f.Probe.AUC, b.Probe.AUC)
		}
		if !(f.Test.DP+f.Test.EO < b.Test.DP+b.Test.EO) {
			t.Errorf("seed %d: FASD ΔDP + ΔEO %.3f not below w/o Diffusion %.3f", seed, f.Test.DP+f.Test.EO, b.Test.DP+b.Test.EO)
		}
		probeDrop += drop / float64(len(seeds))
		dpF += float64(f.Test.DP) / float64(len(seeds))
		dpB += float64(b.Test.DP) / float64(len(seeds))
	}
	t.Logf("means: probe AUC drop %.3f; ΔDP fasd %.4f, no_diffusion %.4f", probeDrop, dpF, dpB)
	if !(probeDrop >= removableProbeMargin) {
		t.Errorf("mean probe AUC drop %.3f, want ≥ %.2f", probeDrop, removableProbeMargin)
	}
	if !(dpF <= dpB-removableDPMargin) || math.IsNaN(dpF) {
		t.Errorf("FASD mean ΔDP %.4f not below w/o Diffusion %.4f by %.2f", dpF, dpB, removableDPMargin)
	}
}

// Margins of TestDefaultFASD_RemovableBias.
const (
	removableProbeMargin = 0.03
	removableDPMargin    = 0.10
)
