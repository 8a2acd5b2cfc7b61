package pipeline

import (
	"math"
	"testing"
)

func TestSelectionGaps(t *testing.T) {
	nodes := []uint32{0, 1, 2, 3, 4, 5, 6, 7}
	//                   s: 0  0  0  0  1  1  1  1
	sens := []int8{0, 0, 0, 0, 1, 1, 1, 1}
	y := []int8{1, 0, 1, 0, 1, 0, 1, 0}
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
			g, err := selectionGaps(tc.scores, nodes, y, tc.sens)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(g-tc.want) > 1e-12 {
				t.Fatalf("gaps %v, want %v", g, tc.want)
			}
		})
	}
}

// TestSelectFair_OnlyPipelineVariants: the reference baselines keep the
// AUC criterion under SelectFair, the pipeline's classifiers subtract the
// gaps, and a zero weight selects as SelectAUC does.
func TestSelectFair_OnlyPipelineVariants(t *testing.T) {
	ev := &evalData{numNodes: 8, labels: []int8{1, 0, 1, 0, 1, 0, 1, 0}, sens: []int8{0, 0, 0, 0, 1, 1, 1, 1},
		val: []uint32{0, 1, 2, 3, 4, 5, 6, 7}, thr: 0.5, sel: SelectFair, alpha: 1}
	p1 := []float64{.9, .6, .8, .7, .4, .1, .3, .2} // AUC .75, gaps 2
	for _, tc := range []struct {
		v     Variant
		alpha float64
		want  float64
	}{
		{VariantFASD, 1, 0.75 - 2},
		{VariantNoDiffusion, 0.5, 0.75 - 1},
		{VariantFASD, 0, 0.75},
		{VariantGCN, 1, 0.75},
		{VariantMLP, 1, 0.75},
	} {
		e := *ev
		e.alpha = tc.alpha
		s := newSelector(&e, tc.v)
		n := len(e.val)
		_, crit, err := s.criterion(p1, e.val, s.yval, make([]int8, n), make([]float64, n))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(crit-tc.want) > 1e-12 {
			t.Errorf("%s α=%v: criterion %v, want %v", tc.v, tc.alpha, crit, tc.want)
		}
	}
}
