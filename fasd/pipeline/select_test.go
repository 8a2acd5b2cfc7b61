package pipeline

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd"
)

// gapFixture is the eight validation nodes of the ranking-gap tests:
// groups s = 0 0 0 0 1 1 1 1, labels alternating from 1.
func gapFixture() (nodes []uint32, sens, y []int8) {
	return []uint32{0, 1, 2, 3, 4, 5, 6, 7}, []int8{0, 0, 0, 0, 1, 1, 1, 1}, []int8{1, 0, 1, 0, 1, 0, 1, 0}
}

func TestSelectionGaps(t *testing.T) {
	nodes, sens, y := gapFixture()
	tests := []struct {
		name   string
		scores []float64
		sens   []int8
		want   float64
	}{
		{"same scores in both groups", []float64{.9, .2, .8, .1, .9, .2, .8, .1}, sens, 0},
		{"groups separated everywhere", []float64{.9, .6, .8, .7, .4, .1, .3, .2}, sens, 2},
		// Every score below ½ (a "constant" at the threshold) still
		// separates the groups by rank: the gaps see it.
		{"near-constant but separated", []float64{.49, .46, .48, .47, .44, .41, .43, .42}, sens, 2},
		// Overall s = 1 ranks above s = 0 in 7 of 16 pairs, among the
		// positives in 3 of 4: |2·7/16 − 1| + |2·3/4 − 1|.
		{"partly separated", []float64{.9, .6, .8, .7, .85, .1, .95, .2}, sens, 0.125 + 0.5},
		{"one group unknown", []float64{.9, .6, .8, .7, .4, .1, .3, .2}, []int8{0, 0, 0, 0, -1, -1, -1, -1}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := selectionGaps(tc.scores, nodes, y, tc.sens, false)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(g-tc.want) > 1e-12 {
				t.Fatalf("gaps %v, want %v", g, tc.want)
			}
		})
	}
}

// TestSelectionGaps_WithinLabel: SelectEO's gaps, among the nodes of
// label 0 and of label 1, against a pairwise count.
func TestSelectionGaps_WithinLabel(t *testing.T) {
	nodes, sens, y := gapFixture()
	tests := []struct {
		name   string
		scores []float64
		y      []int8
		want   float64
	}{
		{"same scores in both groups", []float64{.9, .2, .8, .1, .9, .2, .8, .1}, y, 0},
		{"groups separated everywhere", []float64{.9, .6, .8, .7, .4, .1, .3, .2}, y, 2},
		// The labels alone order the scores, and group 1 has more
		// positives: the overall gap is large, the within-label ones 0.
		{"base rates differ, ranking by label", []float64{.9, .1, .9, .1, .9, .9, .9, .1}, []int8{1, 0, 1, 0, 1, 1, 1, 0}, 0},
		// Among the negatives s = 1 ranks above s = 0 in 1 of 4 pairs,
		// among the positives in 3 of 4: |2·1/4 − 1| + |2·3/4 − 1|.
		{"partly separated", []float64{.9, .6, .8, .7, .85, .1, .95, .65}, y, 0.5 + 0.5},
		{"one label only", []float64{.9, .6, .8, .7, .4, .1, .3, .2}, []int8{1, 1, 1, 1, 1, 1, 1, 1}, 1},
		{"unlabelled nodes ignored", []float64{.9, .6, .8, .7, .4, .1, .3, .2}, []int8{-1, -1, -1, -1, -1, -1, -1, -1}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := selectionGaps(tc.scores, nodes, tc.y, sens, true)
			if err != nil {
				t.Fatal(err)
			}
			want := 0.0
			for _, lab := range []int8{0, 1} {
				above, pairs := 0.0, 0.0
				for i := range nodes {
					for j := range nodes {
						if tc.y[i] != lab || tc.y[j] != lab || sens[i] != 1 || sens[j] != 0 {
							continue
						}
						pairs++
						switch {
						case tc.scores[i] > tc.scores[j]:
							above++
						case tc.scores[i] == tc.scores[j]:
							above += 0.5
						}
					}
				}
				if pairs > 0 {
					want += math.Abs(2*above/pairs - 1)
				}
			}
			if math.Abs(want-tc.want) > 1e-12 {
				t.Fatalf("oracle %v disagrees with the table's %v", want, tc.want)
			}
			if math.Abs(g-tc.want) > 1e-12 {
				t.Fatalf("gaps %v, want %v", g, tc.want)
			}
		})
	}
}

// TestSelectFair_OnlyPipelineVariants: the reference baselines keep the
// AUC criterion under SelectFair and SelectEO, the pipeline's classifiers
// subtract the gaps, and a zero weight selects as SelectAUC does.
func TestSelectFair_OnlyPipelineVariants(t *testing.T) {
	ev := &evalData{numNodes: 8, labels: []int8{1, 0, 1, 0, 1, 0, 1, 0}, sens: []int8{0, 0, 0, 0, 1, 1, 1, 1},
		val: []uint32{0, 1, 2, 3, 4, 5, 6, 7}, thr: 0.5, sel: SelectFair, alpha: 1}
	p1 := []float64{.9, .6, .8, .7, .4, .1, .3, .2} // AUC .75, gaps 2 either way
	for _, tc := range []struct {
		sel   Select
		v     Variant
		alpha float64
		want  float64
	}{
		{SelectFair, VariantFASD, 1, 0.75 - 2},
		{SelectFair, VariantNoDiffusion, 0.5, 0.75 - 1},
		{SelectFair, VariantFASD, 0, 0.75},
		{SelectFair, VariantGCN, 1, 0.75},
		{SelectFair, VariantMLP, 1, 0.75},
		{SelectEO, VariantFASD, 1, 0.75 - 2},
		{SelectEO, VariantNoDiffusion, 0.5, 0.75 - 1},
		{SelectEO, VariantGCN, 1, 0.75},
		{SelectEO, VariantMLP, 1, 0.75},
		{SelectAUC, VariantFASD, 1, 0.75},
	} {
		e := *ev
		e.alpha, e.sel = tc.alpha, tc.sel
		s := newSelector(&e, tc.v)
		n := len(e.val)
		_, crit, err := s.criterion(p1, e.val, s.yval, make([]int8, n), make([]float64, n))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(crit-tc.want) > 1e-12 {
			t.Errorf("%s %s α=%v: criterion %v, want %v", tc.sel, tc.v, tc.alpha, crit, tc.want)
		}
	}
}

// TestSelector_BestThreshold: the threshold tuned once, when asked for,
// is the one tuned at the best epoch on its validation scores, under every
// decision rule, whether or not it was asked for in between (as the
// counterfactual share does at improving epochs) and after later
// improvements; result reports it with the metrics of that epoch.
func TestSelector_BestThreshold(t *testing.T) {
	const n = 40
	rng := rand.New(rand.NewPCG(7, 8))
	ev := evalData{numNodes: n, labels: make([]int8, n), sens: make([]int8, n), thr: 0.5, sel: SelectAUC}
	for u := range n {
		ev.labels[u], ev.sens[u] = int8(rng.IntN(2)), int8(rng.IntN(2))
		if u%2 == 0 {
			ev.val = append(ev.val, uint32(u))
		} else {
			ev.test = append(ev.test, uint32(u))
		}
	}
	for _, dec := range []Decision{DecisionPrior, DecisionRate, DecisionValAcc, DecisionPlatt} {
		for _, ask := range []float64{0, 0.5, 1} { // how often bestThreshold is asked at an improvement
			e := ev
			e.dec = dec
			s := newSelector(&e, VariantGCN)
			var want float64 // the threshold tuned eagerly at the best epoch
			var wantScores []float64
			improvements := 0
			for ep := range 30 {
				p1 := make([]float64, n)
				for u := range p1 {
					// Later epochs separate the classes better, with noise.
					p1[u] = 1 / (1 + math.Exp(-(float64(ep)/10*(2*float64(ev.labels[u])-1) + rng.NormFloat64())))
				}
				_, improved, err := s.observe(ep, p1)
				if err != nil {
					t.Fatal(err)
				}
				if !improved {
					continue
				}
				improvements++
				wantScores = wantScores[:0]
				for _, u := range e.val {
					wantScores = append(wantScores, p1[u])
				}
				want = s.threshold(wantScores)
				if rng.Float64() < ask {
					if got := s.bestThreshold(); got != want {
						t.Fatalf("%v, epoch %d: bestThreshold %v, want %v", dec, ep, got, want)
					}
				}
			}
			if improvements < 2 {
				t.Fatalf("%v: %d improvements; the test needs several", dec, improvements)
			}
			res, err := s.result()
			if err != nil {
				t.Fatal(err)
			}
			if float64(res.Threshold) != want {
				t.Errorf("%v, ask %v: result's threshold %v, want %v", dec, ask, res.Threshold, want)
			}
			m, err := fasd.EvaluateScores(s.bestP1, want, e.labels, e.sens, e.val)
			if err != nil {
				t.Fatal(err)
			}
			if float64(res.ValAcc) != m.Acc {
				t.Errorf("%v, ask %v: validation accuracy %v, want %v at the best epoch's threshold", dec, ask, res.ValAcc, m.Acc)
			}
		}
	}
}

// ensure that one gapScratch reused over inputs of changing size gives what
// a fresh computation gives, and allocates nothing once it has grown.
func TestGapScratch_Reuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	var sc gapScratch
	draw := func(n int) ([]float64, []uint32, []int8, []int8) {
		scores, nodes, y, sens := make([]float64, n), make([]uint32, n), make([]int8, n), make([]int8, n)
		for i := range scores {
			scores[i], nodes[i] = rng.Float64(), uint32(i)
			y[i], sens[i] = int8(rng.IntN(2)), int8(rng.IntN(3)-1)
		}
		return scores, nodes, y, sens
	}
	for _, n := range []int{50, 7, 200, 1, 120} {
		scores, nodes, y, sens := draw(n)
		for _, within := range []bool{false, true} {
			want, err := selectionGaps(scores, nodes, y, sens, within)
			if err != nil {
				t.Fatal(err)
			}
			got, err := sc.gaps(scores, nodes, y, sens, within)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("n %d, within %v: %v with a reused scratch, %v fresh", n, within, got, want)
			}
		}
	}
	scores, nodes, y, sens := draw(150)
	if a := testing.AllocsPerRun(20, func() {
		if _, err := sc.gaps(scores, nodes, y, sens, true); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v allocations per call with a grown scratch, want 0", a)
	}
}
