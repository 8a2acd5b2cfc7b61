package pipeline

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/fasd-db/fasd/fasd"
)

// imbalancedInput is a toy input whose training labels are balanced and
// whose validation labels are mostly class 1, so the prior rule moves the
// threshold well away from 0.5.
func imbalancedInput(t *testing.T) *Input {
	t.Helper()
	g := newToyGraph(240, 8, 8, 0.8, 0.4, 0.8, 5)
	in := g.input(t, 3, 5)
	in.Labels = slices.Clone(in.Labels)
	k := 0
	for v, sp := range in.Split {
		if sp == fasd.SplitVal && in.Labels[v] == 0 {
			if k%4 != 0 { // three of every four validation zeros become ones
				in.Labels[v] = 1
			}
			k++
		}
	}
	return in
}

// Ensure that every decision rule's threshold is a function of the
// training and validation labels alone: rewriting every test label changes
// the test metrics but neither the threshold nor anything selected on
// validation. The prior rule's threshold is PriorThreshold's; the tuned
// rules' are their fasd function applied to the kept validation scores.
func TestDecision_ThresholdFromValidationOnly(t *testing.T) {
	in := imbalancedInput(t)
	_, train, val, _, err := in.validate()
	if err != nil {
		t.Fatal(err)
	}
	prior := fasd.PriorThreshold(positiveRate(in.Labels, train), positiveRate(in.Labels, val))
	if math.Abs(prior-0.5) < 0.1 {
		t.Fatalf("test input too balanced: threshold %v", prior)
	}
	yval := make([]int8, len(val))
	for i, u := range val {
		yval[i] = in.Labels[u]
	}
	flipped := *in
	flipped.Labels = slices.Clone(in.Labels)
	for v, sp := range in.Split {
		if sp == fasd.SplitTest {
			flipped.Labels[v] = 1 - flipped.Labels[v]
		}
	}
	for _, tc := range []struct {
		dec  Decision
		want func(vr *VariantResult) float64
	}{
		{DecisionPrior, func(*VariantResult) float64 { return prior }},
		{DecisionPlatt, func(vr *VariantResult) float64 {
			return fasd.PlattThreshold(valScores(vr, val), yval, prior)
		}},
		{DecisionValAcc, func(vr *VariantResult) float64 {
			return fasd.AccuracyThreshold(valScores(vr, val), yval, prior)
		}},
		{DecisionRate, func(vr *VariantResult) float64 {
			return fasd.RateThreshold(valScores(vr, val), yval, prior)
		}},
	} {
		t.Run(string(tc.dec), func(t *testing.T) {
			cfg := fastConfig(t)
			cfg.Classifier.Decision = string(tc.dec)
			opt := &Options{Variants: []Variant{VariantGCN, VariantMLP, VariantProp, VariantMajority}, KeepScores: true}
			r1, err := Run(context.Background(), cfg, in, opt)
			if err != nil {
				t.Fatal(err)
			}
			r2, err := Run(context.Background(), cfg, &flipped, opt)
			if err != nil {
				t.Fatal(err)
			}
			for i := range r1.Variants {
				a, b := &r1.Variants[i], &r2.Variants[i]
				want := tc.want(a)
				if a.Variant == VariantMajority {
					want = prior // a constant keeps the prior rule
				}
				if float64(a.Threshold) != want || float64(b.Threshold) != want {
					t.Errorf("%s: thresholds %v and %v, want %v from train and validation labels", a.Variant, a.Threshold, b.Threshold, want)
				}
				if a.BestEpoch != b.BestEpoch || a.ValAcc != b.ValAcc {
					t.Errorf("%s: validation selection moved with the test labels: epoch %d/%d, val acc %v/%v",
						a.Variant, a.BestEpoch, b.BestEpoch, a.ValAcc, b.ValAcc)
				}
				if math.Abs(float64(a.Test.Acc+b.Test.Acc)-1) > 1e-12 {
					t.Errorf("%s: test accuracies %v and %v on complementary labels do not sum to 1", a.Variant, a.Test.Acc, b.Test.Acc)
				}
			}
		})
	}
}

// valScores are the kept P(1) of the validation nodes.
func valScores(vr *VariantResult, val []uint32) []float64 {
	s := make([]float64, len(val))
	for i, u := range val {
		s[i] = vr.Scores[u]
	}
	return s
}

// Ensure that the rule "half" keeps the paper's 0.5 and that the default
// configuration (and the NIFTY presets built on it) uses the rate rule.
func TestDecision_Presets(t *testing.T) {
	for _, tc := range []struct {
		preset string
		want   Decision
	}{{DefaultPreset, DecisionRate}, {"nba", DecisionHalf}, {"pokec_z", DecisionHalf}, {"german", DecisionRate}} {
		c, err := Preset(tc.preset)
		if err != nil {
			t.Fatal(err)
		}
		if Decision(c.Classifier.Decision) != tc.want {
			t.Errorf("preset %s: classifier.decision %q, want %q", tc.preset, c.Classifier.Decision, tc.want)
		}
	}
	in := imbalancedInput(t)
	cfg := fastConfig(t)
	cfg.Classifier.Decision = string(DecisionHalf)
	r, err := Run(context.Background(), cfg, in, &Options{Variants: []Variant{VariantMajority}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Variants[0].Threshold != 0.5 {
		t.Errorf("decision half: threshold %v", r.Variants[0].Threshold)
	}
}

// Ensure that the majority reference predicts the validation majority for
// every node: zero ΔDP and ΔEO, AUC ½, and the majority class's accuracy.
func TestMajority(t *testing.T) {
	in := imbalancedInput(t)
	cfg := fastConfig(t)
	r, err := Run(context.Background(), cfg, in, &Options{Variants: []Variant{VariantMajority}})
	if err != nil {
		t.Fatal(err)
	}
	m := r.Variants[0].Test
	_, _, _, test, _ := in.validate()
	if want := positiveRate(in.Labels, test); math.Abs(float64(m.Acc)-want) > 1e-12 {
		t.Errorf("majority (class 1) accuracy %v, want the test positive rate %v", m.Acc, want)
	}
	if m.DP != 0 || m.EO != 0 || m.AUC != 0.5 || !(m.MacroF1 <= 0.5) {
		t.Errorf("majority: %+v", m)
	}
}

// Ensure that nodeMeanFeatures averages each node's rows over the
// subgraphs holding it and keeps base rows elsewhere: on the original view
// every copy of a row is the node's own, so the mean is the row itself;
// on a hand-made view the mean is the oracle's.
func TestNodeMeanFeatures(t *testing.T) {
	g := newToyGraph(120, 4, 6, 0.7, 0.3, 0.5, 2)
	in := g.input(t, 1, 4)
	orig := originalView(in.Subgraphs, in.D, nil)
	got, covered, err := nodeMeanFeatures(context.Background(), orig, in.NumNodes, g.x)
	if err != nil {
		t.Fatal(err)
	}
	if covered == 0 || !slices.Equal(got, g.x) {
		t.Fatalf("original view: mean rows differ from the node rows (covered %d)", covered)
	}

	// Two subgraphs over nodes {0, 1} and {1, 2}, d = 1; node 3 in none.
	sgs := []*fasd.Subgraph{{Nodes: []uint32{0, 1}}, {Nodes: []uint32{1, 2}}}
	v := &view{sgs: sgs, d: 1, xs: [][]float32{{1, 2}, {4, 8}}, as: []fasd.SparseAdj{{N: 2}, {N: 2}}}
	got, covered, err = nodeMeanFeatures(context.Background(), v, 4, []float32{-1, -1, -1, -7})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{1, 3, 8, -7}; !slices.Equal(got, want) || covered != 3 {
		t.Errorf("got %v (covered %d), want %v (covered 3)", got, covered, want)
	}
	if _, _, err := nodeMeanFeatures(context.Background(), v, 2, []float32{0, 0}); err == nil {
		t.Error("a node beyond n was accepted")
	}
}

// Ensure that fasd_gcn runs on its own (without f) and pairs with the GCN:
// same seeds, so on the original features it would be the GCN itself.
func TestFASDGCN_Runs(t *testing.T) {
	g := newToyGraph(160, 6, 6, 0.8, 0.3, 0.8, 4)
	in := g.input(t, 2, 4)
	cfg := fastConfig(t)
	r, err := Run(context.Background(), cfg, in, &Options{Variants: []Variant{VariantFASDGCN, VariantGCN}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Variants) != 2 || r.Variants[0].Variant != VariantFASDGCN || r.Models != nil {
		t.Fatalf("variants %+v, models %v", r.Variants, r.Models)
	}
	if m := r.Variants[0].Test; !(m.Acc > 0 && m.Acc <= 1) || math.IsNaN(float64(m.AUC)) {
		t.Errorf("fasd_gcn metrics %+v", m)
	}
}

// Ensure the fallback rule: keep the debiased model only when it is
// strictly fairer on validation at no more than 0.02 AUC below the model on
// the original features.
func TestFallBack(t *testing.T) {
	vr := func(dp, eo, auc float64) *VariantResult {
		return &VariantResult{Val: Metrics{DP: Num(dp), EO: Num(eo), AUC: Num(auc)}}
	}
	nan := math.NaN()
	for _, tc := range []struct {
		name      string
		deb, orig *VariantResult
		want      bool
	}{
		{"fairer, same AUC", vr(0.02, 0.03, 0.80), vr(0.10, 0.05, 0.80), false},
		{"fairer, 0.015 AUC less", vr(0.02, 0.03, 0.785), vr(0.10, 0.05, 0.80), false},
		{"fairer, 0.03 AUC less", vr(0.02, 0.03, 0.77), vr(0.10, 0.05, 0.80), true},
		{"as fair", vr(0.05, 0.05, 0.90), vr(0.05, 0.05, 0.80), true},
		{"less fair", vr(0.10, 0.05, 0.90), vr(0.02, 0.03, 0.80), true},
		{"undefined gap", vr(nan, 0.05, 0.70), vr(0.02, 0.03, 0.80), false},
		{"undefined AUC", vr(0.01, 0.01, nan), vr(0.02, 0.03, 0.80), false},
	} {
		if got := fallBack(tc.deb, tc.orig); got != tc.want {
			t.Errorf("%s: fallBack = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Ensure that nodePropFeatures averages [X, ÂX, Â²X] per node over the
// subgraphs holding it, Â normalised as GCNNorm does, and keeps
// [x, x, x] for a node in none (hand-computed oracle, exact in binary).
func TestNodePropFeatures(t *testing.T) {
	// {0, 1} joined by an edge (Â = ½·ones), X = (1, 2); {1, 2} without
	// edges (Â = I), X = (4, 8); node 3 in none.
	sgs := []*fasd.Subgraph{{Nodes: []uint32{0, 1}}, {Nodes: []uint32{1, 2}}}
	v := &view{sgs: sgs, d: 1, xs: [][]float32{{1, 2}, {4, 8}},
		as: []fasd.SparseAdj{fasd.CompactAdj([]float32{0, 1, 1, 0}, 2), fasd.CompactAdj([]float32{0, 0, 0, 0}, 2)}}
	got, err := nodePropFeatures(context.Background(), v, 4, []float32{-1, -1, -1, -7}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{1, 1.5, 1.5, 3, 2.75, 2.75, 8, 8, 8, -7, -7, -7}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Root-only: node 1 roots {1, 2} and takes its rows from it alone.
	got, err = nodePropFeatures(context.Background(), v, 4, []float32{-1, -1, -1, -7}, true)
	if err != nil {
		t.Fatal(err)
	}
	want = []float32{1, 1.5, 1.5, 4, 4, 4, 8, 8, 8, -7, -7, -7}
	if !slices.Equal(got, want) {
		t.Errorf("root-only: got %v, want %v", got, want)
	}
	if _, err := nodePropFeatures(context.Background(), v, 2, []float32{0, 0}, false); err == nil {
		t.Error("a node beyond n was accepted")
	}
	v.as[1] = fasd.CompactAdj([]float32{0}, 1)
	if _, err := nodePropFeatures(context.Background(), v, 4, []float32{-1, -1, -1, -7}, false); err == nil {
		t.Error("an adjacency of the wrong size was accepted")
	}
}

// Ensure that fasd_prop and prop run on their own and report a model.
func TestFASDProp_Runs(t *testing.T) {
	g := newToyGraph(160, 6, 6, 0.8, 0.3, 0.8, 4)
	in := g.input(t, 2, 4)
	cfg := fastConfig(t)
	r, err := Run(context.Background(), cfg, in, &Options{Variants: []Variant{VariantFASDProp, VariantProp}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Variants) != 2 || r.Variants[0].Variant != VariantFASDProp || r.Variants[1].Variant != VariantProp {
		t.Fatalf("variants %+v", r.Variants)
	}
	for _, vr := range r.Variants {
		if m := vr.Test; !(m.Acc > 0 && m.Acc <= 1) || math.IsNaN(float64(m.AUC)) {
			t.Errorf("%s metrics %+v", vr.Variant, m)
		}
	}
}
