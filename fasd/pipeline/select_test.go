package pipeline

import (
	"math"
	"testing"
)

// TestSelectorCriteria checks both selection rules on a fixed sequence of
// epochs: accuracy keeps the first epoch with the best validation accuracy;
// loss keeps the epoch with the lowest validation cross-entropy, even when
// its accuracy ties an earlier epoch or is lower.
func TestSelectorCriteria(t *testing.T) {
	// Nodes 0–3 are validation (labels 1, 1, 0, 0), nodes 4–5 test.
	ev := &evalData{
		numNodes: 6,
		labels:   []int8{1, 1, 0, 0, 1, 0},
		sens:     []int8{0, 1, 0, 1, 0, 1},
		val:      []uint32{0, 1, 2, 3},
		test:     []uint32{4, 5},
	}
	epochs := [][]float64{
		{0.51, 0.51, 0.49, 0.49, 0.6, 0.4}, // acc 1.00, loss ≈ 0.673
		{0.95, 0.95, 0.05, 0.05, 0.4, 0.6}, // acc 1.00, loss ≈ 0.051
		{0.99, 0.40, 0.01, 0.01, 0.9, 0.1}, // acc 0.75, loss ≈ 0.237
		{0.90, 0.90, 0.10, 0.10, 0.9, 0.1}, // acc 1.00, loss ≈ 0.105
	}
	tests := []struct {
		criterion string
		wantEpoch int
		wantTest  float64 // test accuracy of the kept epoch
	}{
		{SelectAcc, 0, 1},
		{SelectLoss, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.criterion, func(t *testing.T) {
			s := newSelector(ev, VariantFASD, tc.criterion)
			for ep, p := range epochs {
				if _, _, err := s.observe(ep, p); err != nil {
					t.Fatal(err)
				}
			}
			if s.res.BestEpoch != tc.wantEpoch {
				t.Errorf("kept epoch %d, want %d", s.res.BestEpoch, tc.wantEpoch)
			}
			if got := float64(s.res.Test.Acc); got != tc.wantTest {
				t.Errorf("test accuracy of the kept epoch %v, want %v", got, tc.wantTest)
			}
			if len(s.res.ValCurve) != len(epochs) {
				t.Errorf("validation curve has %d points, want %d", len(s.res.ValCurve), len(epochs))
			}
		})
	}
}

func TestSelectorValLoss(t *testing.T) {
	ev := &evalData{numNodes: 2, labels: []int8{1, 0}, sens: []int8{0, 1}, val: []uint32{0, 1}}
	s := newSelector(ev, VariantFASD, SelectLoss)
	got := s.valLoss([]float64{0.8, 0.3})
	want := -(math.Log(0.8) + math.Log(0.7)) / 2
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("valLoss = %v, want %v", got, want)
	}
	// Certain and wrong is clamped, not infinite.
	if l := s.valLoss([]float64{0, 1}); math.IsInf(l, 0) || l < 10 {
		t.Errorf("valLoss of confident mistakes = %v, want large and finite", l)
	}
}
