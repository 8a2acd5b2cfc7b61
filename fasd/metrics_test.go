package fasd

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// Ensure Acc, ΔDP, ΔEO and the group metrics on hand-built test sets.
func TestEvaluate_HandBuilt(t *testing.T) {
	tests := []struct {
		name          string
		s, y, pred    []int8
		acc, dp, eo   float64
		g0, g1        GroupMetrics
		flags         Flags
		nanDP, nanEO  bool
		nanAccGroup01 [2]bool
	}{
		{
			name: "balanced-dp",
			s:    []int8{0, 0, 0, 0, 1, 1, 1, 1},
			y:    []int8{1, 1, 0, 0, 1, 1, 0, 0},
			pred: []int8{1, 0, 0, 1, 1, 1, 0, 0},
			acc:  0.75, dp: 0, eo: 0.5,
			g0: GroupMetrics{N: 4, Pos: 2, Acc: 0.5, PosRate: 0.5, TPR: 0.5, FPR: 0.5},
			g1: GroupMetrics{N: 4, Pos: 2, Acc: 1, PosRate: 0.5, TPR: 1, FPR: 0},
		},
		{
			name: "dp-gap-with-unknown-s",
			s:    []int8{0, 0, 0, 0, 1, 1, 1, 1, -1},
			y:    []int8{1, 1, 0, 0, 1, 1, 0, 0, 1},
			pred: []int8{1, 0, 0, 1, 1, 1, 1, 0, 0},
			acc:  5.0 / 9, dp: 0.25, eo: 0.5,
			g0: GroupMetrics{N: 4, Pos: 2, Acc: 0.5, PosRate: 0.5, TPR: 0.5, FPR: 0.5},
			g1: GroupMetrics{N: 4, Pos: 2, Acc: 0.75, PosRate: 0.75, TPR: 1, FPR: 0.5},
		},
		{
			name: "unequal-sizes",
			s:    []int8{0, 1, 1, 1},
			y:    []int8{1, 1, 0, 1},
			pred: []int8{1, 0, 0, 1},
			acc:  0.75, dp: 1 - 1.0/3, eo: 0.5,
			g0: GroupMetrics{N: 1, Pos: 1, Acc: 1, PosRate: 1, TPR: 1, FPR: math.NaN()},
			g1: GroupMetrics{N: 3, Pos: 2, Acc: 2.0 / 3, PosRate: 1.0 / 3, TPR: 0.5, FPR: 0},
		},
	}
	for _, tc := range tests {
		m, err := Evaluate(tc.pred, tc.y, tc.s)
		if err != nil {
			t.Fatal(err)
		}
		if !near(m.Acc, tc.acc) || !near(m.DP, tc.dp) || !near(m.EO, tc.eo) || m.Flags != 0 || m.N != len(tc.s) {
			t.Errorf("%s: %+v", tc.name, m)
		}
		for k, want := range []GroupMetrics{tc.g0, tc.g1} {
			g := m.Groups[k]
			same := func(a, b float64) bool { return near(a, b) || math.IsNaN(a) && math.IsNaN(b) }
			if g.N != want.N || g.Pos != want.Pos || !same(g.Acc, want.Acc) || !same(g.PosRate, want.PosRate) || !same(g.TPR, want.TPR) || !same(g.FPR, want.FPR) {
				t.Errorf("%s: group %d = %+v, want %+v", tc.name, k, g, want)
			}
		}
	}
}

// Ensure that empty groups give NaN and raise the flags.
func TestEvaluate_EmptyGroups(t *testing.T) {
	m, err := Evaluate([]int8{1, 0}, []int8{1, 0}, []int8{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(m.DP) || !math.IsNaN(m.EO) || m.Flags != FlagEmptyS1|FlagEmptyPosS1 || m.Acc != 1 {
		t.Errorf("%+v", m)
	}
	m, _ = Evaluate([]int8{1, 0}, []int8{0, 0}, []int8{0, 1})
	if math.IsNaN(m.DP) || !math.IsNaN(m.EO) || m.Flags != FlagEmptyPosS0|FlagEmptyPosS1 {
		t.Errorf("%+v", m)
	}
	m, _ = Evaluate(nil, nil, nil)
	if !math.IsNaN(m.Acc) || m.Flags != FlagEmptyS0|FlagEmptyS1|FlagEmptyPosS0|FlagEmptyPosS1 {
		t.Errorf("%+v", m)
	}
	for _, bad := range [][3][]int8{
		{{2}, {1}, {0}}, {{1}, {-1}, {0}}, {{1}, {1}, {3}}, {{1, 0}, {1}, {0}},
	} {
		if _, err := Evaluate(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("accepted %v", bad)
		}
	}
}

// Ensure the strict threshold and node selection from dense arrays.
func TestEvaluateNodes(t *testing.T) {
	if PredictLabel(0.5) != 0 || PredictLabel(math.Nextafter(0.5, 1)) != 1 || PredictLabel(math.NaN()) != 0 {
		t.Error("threshold must be strict")
	}
	p1 := []float64{0.9, 0.5, 0.2, 0.7, 0.6}
	y := []int8{1, 1, 0, 0, -1}
	s := []int8{0, 1, 0, 1, 1}
	m, err := EvaluateNodes(p1, y, s, []uint32{0, 1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	// ŷ = 1 0 0 1: correct on 0 and 2; s0 rate 1/2, s1 rate 1/2; TPR 1 vs 0.
	if !near(m.Acc, 0.5) || !near(m.DP, 0) || !near(m.EO, 1) {
		t.Errorf("%+v", m)
	}
	if _, err := EvaluateNodes(p1, y, s, []uint32{7}); err == nil {
		t.Error("out-of-range node accepted")
	}
	if !near(Accuracy([]int8{1, 0, 1}, []int8{1, 1, 1}), 2.0/3) || !math.IsNaN(Accuracy(nil, nil)) {
		t.Error("Accuracy")
	}
}

// Ensure mean and population std over runs, NaN-tainted summaries.
func TestSummarize(t *testing.T) {
	r := Summarize([]float64{1, 2, 3, 4})
	if !near(r.Mean, 2.5) || !near(r.Std, math.Sqrt(1.25)) || r.N != 4 {
		t.Errorf("%+v", r)
	}
	if r := Summarize([]float64{0.7}); r.Std != 0 || r.Mean != 0.7 {
		t.Errorf("%+v", r)
	}
	if r := Summarize([]float64{1, math.NaN()}); !math.IsNaN(r.Mean) {
		t.Errorf("%+v", r)
	}
	if r := Summarize(nil); !math.IsNaN(r.Mean) || !math.IsNaN(r.Std) {
		t.Errorf("%+v", r)
	}
	s := SummarizeRuns([]Metrics{{Acc: 0.6, DP: 0.1, EO: 0.2}, {Acc: 0.8, DP: 0.3, EO: 0.2}})
	if !near(s.Acc.Mean, 0.7) || !near(s.Acc.Std, 0.1) || !near(s.DP.Mean, 0.2) || !near(s.EO.Std, 0) {
		t.Errorf("%+v", s)
	}
}

// pairAUC is the O(n²) oracle: P(score⁺ > score⁻) + ½P(tie).
func pairAUC(scores []float64, labels []int8) float64 {
	num, den := 0.0, 0.0
	for i := range scores {
		for j := range scores {
			if labels[i] != 1 || labels[j] != 0 {
				continue
			}
			den++
			switch {
			case scores[i] > scores[j]:
				num++
			case scores[i] == scores[j]:
				num += 0.5
			}
		}
	}
	return num / den
}

// Ensure AUC on hand cases and against the pairwise oracle with ties.
func TestAUC(t *testing.T) {
	for _, tc := range []struct {
		s    []float64
		l    []int8
		want float64
	}{
		{[]float64{0.1, 0.4, 0.35, 0.8}, []int8{0, 0, 1, 1}, 0.75},
		{[]float64{0.5, 0.5}, []int8{0, 1}, 0.5},
		{[]float64{1, 2, 3}, []int8{1, 1, 0}, 0},
		{[]float64{1, 2, 3, 9}, []int8{0, 1, 1, -1}, 1},
	} {
		got, err := AUC(tc.s, tc.l)
		if err != nil || !near(got, tc.want) {
			t.Errorf("AUC(%v, %v) = %v, %v; want %v", tc.s, tc.l, got, err, tc.want)
		}
	}
	if got, _ := AUC([]float64{1, 2}, []int8{1, 1}); !math.IsNaN(got) {
		t.Error("one class must give NaN")
	}
	if _, err := AUC([]float64{1}, []int8{2}); err == nil {
		t.Error("label 2 accepted")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		n := 2 + rng.IntN(60)
		s := make([]float64, n)
		l := make([]int8, n)
		for i := range n {
			s[i] = float64(rng.IntN(8)) // many ties
			l[i] = int8(rng.IntN(2))
		}
		if !slices.Contains(l, 0) || !slices.Contains(l, 1) {
			continue
		}
		got, _ := AUC(s, l)
		if want := pairAUC(s, l); !near(got, want) {
			t.Fatalf("AUC %v, oracle %v", got, want)
		}
	}
}

// Ensure that one AUCScratch reused across calls of changing sizes (early
// returns included) gives the oracle's AUC every time, and that once its
// memory has grown a call allocates nothing.
func TestAUCScratch(t *testing.T) {
	var sc AUCScratch
	rng := rand.New(rand.NewPCG(3, 4))
	for k := range 200 {
		n := 1 + rng.IntN(80)
		s := make([]float64, n)
		l := make([]int8, n)
		for i := range n {
			s[i] = float64(rng.IntN(8))
			l[i] = int8(rng.IntN(3)) - 1 // −1: skipped
		}
		if k%17 == 0 {
			s[rng.IntN(n)] = math.NaN()
		}
		got, err := sc.AUC(s, l)
		want, werr := AUC(s, l)
		if (err != nil) != (werr != nil) || !(near(got, want) || math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("call %d: scratch AUC %v, %v; AUC %v, %v", k, got, err, want, werr)
		}
		if slices.Contains(l, 0) && slices.Contains(l, 1) && !slices.ContainsFunc(s, math.IsNaN) {
			if o := pairAUC(s, l); !near(got, o) {
				t.Fatalf("call %d: scratch AUC %v, oracle %v", k, got, o)
			}
		}
	}
	s := make([]float64, 1000)
	l := make([]int8, 1000)
	for i := range s {
		s[i], l[i] = rng.Float64(), int8(i%2)
	}
	if a := testing.AllocsPerRun(10, func() { _, _ = sc.AUC(s, l) }); a != 0 {
		t.Errorf("a warm scratch allocated %v times per call", a)
	}
}

// Ensure that F1 and macro-F1 match hand counts, including the constant
// predictors that accuracy alone flatters.
func TestEvaluate_F1(t *testing.T) {
	s := []int8{0, 0, 1, 1, 0, 1, 0, 1, 0, 1}
	y := []int8{1, 1, 1, 1, 1, 1, 1, 0, 0, 0}
	for _, tc := range []struct {
		name        string
		pred        []int8
		f1, macroF1 float64
	}{
		// tp 5, fp 1, fn 2, tn 2: F1₁ = 10/13, F1₀ = 4/7.
		{"mixed", []int8{1, 1, 1, 1, 1, 0, 0, 1, 0, 0}, 10.0 / 13, (10.0/13 + 4.0/7) / 2},
		// all 1: tp 7, fp 3: F1₁ = 14/17, F1₀ = 0.
		{"all ones", []int8{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 14.0 / 17, 7.0 / 17},
		// all 0: F1₁ = 0, F1₀ = 6/13.
		{"all zeros", make([]int8, 10), 0, 3.0 / 13},
		{"perfect", y, 1, 1},
	} {
		m, err := Evaluate(tc.pred, y, s)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(m.F1-tc.f1) > 1e-12 || math.Abs(m.MacroF1-tc.macroF1) > 1e-12 {
			t.Errorf("%s: F1 %v macro %v, want %v %v", tc.name, m.F1, m.MacroF1, tc.f1, tc.macroF1)
		}
		if !math.IsNaN(m.AUC) {
			t.Errorf("%s: Evaluate sees no scores, AUC %v", tc.name, m.AUC)
		}
	}
}

// Ensure that EvaluateScores thresholds at thr and adds the scores' AUC.
func TestEvaluateScores(t *testing.T) {
	p1 := []float64{0.9, 0.6, 0.4, 0.2, 0.35, 0.7}
	y := []int8{1, 1, 0, 0, 1, 0}
	s := []int8{0, 1, 0, 1, 0, 1}
	nodes := []uint32{0, 1, 2, 3, 4, 5}
	for _, tc := range []struct {
		thr, acc float64
	}{{0.5, 4.0 / 6}, {0.3, 4.0 / 6}, {0.65, 3.0 / 6}, {0.95, 3.0 / 6}} {
		m, err := EvaluateScores(p1, tc.thr, y, s, nodes)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(m.Acc-tc.acc) > 1e-12 {
			t.Errorf("thr %v: acc %v, want %v", tc.thr, m.Acc, tc.acc)
		}
		// Positives 0.9, 0.6, 0.35 against negatives 0.4, 0.2, 0.7:
		// 3 + 2 + 1 of 9 pairs ordered.
		if math.Abs(m.AUC-6.0/9) > 1e-12 {
			t.Errorf("thr %v: AUC %v, want 6/9", tc.thr, m.AUC)
		}
	}
	if m, _ := EvaluateNodes(p1, y, s, nodes); m.Acc != 4.0/6 {
		t.Errorf("EvaluateNodes is not EvaluateScores at 0.5: acc %v", m.Acc)
	}
}

// Ensure that the prior threshold is 0.5 at equal priors, moves towards
// the majority of the target population, and undoes the shift in logit.
func TestPriorThreshold(t *testing.T) {
	for _, tc := range []struct {
		train, target, want float64
	}{
		{0.5, 0.5, 0.5},
		{0.5, 0.7, 0.3},              // German: balanced training, 70 % good
		{0.5, 0.2166, 1 - 0.2166},    // Income-like: 22 % positive
		{0.3, 0.3, 0.5},              // no shift
		{0.5, 0, 0.5}, {1, 0.5, 0.5}, // degenerate priors
		{math.NaN(), 0.5, 0.5}, // no labels
		{0.25, 0.75, 0.1},      // logit shift ln 9: 1/(1+9)
	} {
		got := PriorThreshold(tc.train, tc.target)
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("PriorThreshold(%v, %v) = %v, want %v", tc.train, tc.target, got, tc.want)
		}
	}
	// Property: a node at the threshold has equal posterior odds after the
	// prior shift.
	for _, pi := range []float64{0.1, 0.3, 0.6, 0.9} {
		thr := PriorThreshold(0.5, pi)
		odds := thr / (1 - thr) * pi / (1 - pi)
		if math.Abs(odds-1) > 1e-9 {
			t.Errorf("π=%v: corrected odds at the threshold %v", pi, odds)
		}
	}
}

// Ensure that the prior correction applies only to shifts beyond sampling
// noise: German's and Income's NIFTY splits are corrected, a same-population
// split with noisy rates is not.
func TestShiftedPriorThreshold(t *testing.T) {
	for _, tc := range []struct {
		name      string
		piT       float64
		nT        int
		piV       float64
		nV        int
		corrected bool
	}{
		{"German (50/50 of 100, 70/30 of 250)", 0.5, 100, 0.7, 250, true},
		{"Income (50/50 of 1000, 22/78 of 3705)", 0.5, 1000, 0.2166, 3705, true},
		{"noise (0.42 of 24, 0.6 of 24)", 0.42, 24, 0.6, 24, false},
		{"noise (0.45 of 62, 0.52 of 110)", 0.45, 62, 0.52, 110, false},
		{"equal", 0.3, 1000, 0.3, 1000, false},
		{"no labels", math.NaN(), 0, 0.5, 10, false},
	} {
		got := ShiftedPriorThreshold(tc.piT, tc.nT, tc.piV, tc.nV)
		want := 0.5
		if tc.corrected {
			want = PriorThreshold(tc.piT, tc.piV)
		}
		if math.Abs(got-want) > 1e-12 || tc.corrected == (got == 0.5) {
			t.Errorf("%s: threshold %v, want %v", tc.name, got, want)
		}
	}
}
