package fasd

import (
	"math"
	"testing"
)

// plattSample draws n (score, label) pairs whose true P(1 | p) is
// σ(a·logit p + b), with logit p ~ N(0, 2²).
func plattSample(n int, a, b float64, seed uint64) ([]float64, []int8) {
	rng := NewRand(seed)
	s := make([]float64, n)
	y := make([]int8, n)
	for i := range s {
		z := 2 * rng.NormFloat64()
		s[i] = 1 / (1 + math.Exp(-z))
		if rng.Float64() < 1/(1+math.Exp(-(a*z+b))) {
			y[i] = 1
		}
	}
	return s, y
}

func TestPlattThreshold(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b float64
		want float64 // σ(−b/a)
	}{
		{"calibrated", 1, 0, 0.5},
		{"overconfident", 0.5, 0, 0.5},
		{"shifted prior", 1, math.Log(0.7 / 0.3), PriorThreshold(0.5, 0.7)},
		{"shifted and sharp", 2, -1, 1 / (1 + math.Exp(-0.5))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, y := plattSample(20000, tc.a, tc.b, 7)
			got := PlattThreshold(s, y, 0.123)
			if math.Abs(clampedLogit(got)-clampedLogit(tc.want)) > 0.1 {
				t.Fatalf("threshold %.4f, want ≈ %.4f", got, tc.want)
			}
		})
	}
}

func TestPlattThreshold_Fallback(t *testing.T) {
	s, y := plattSample(2000, -1, 0, 3) // ranks backwards
	if got := PlattThreshold(s, y, 0.42); got != 0.42 {
		t.Fatalf("backward ranking: %v, want the fallback", got)
	}
	if got := PlattThreshold([]float64{0.2, 0.9}, []int8{1, 1}, 0.42); got != 0.42 {
		t.Fatalf("one class: %v, want the fallback", got)
	}
	if got := PlattThreshold([]float64{math.NaN(), math.NaN()}, []int8{0, 1}, 0.42); got != 0.42 {
		t.Fatalf("NaN scores: %v, want the fallback", got)
	}
	// Perfectly separated classes: the ridge keeps the fit finite and the
	// threshold between the classes.
	got := PlattThreshold([]float64{0.1, 0.2, 0.3, 0.7, 0.8}, []int8{0, 0, 0, 1, 1}, 0.42)
	if !(got > 0.3 && got < 0.7) {
		t.Fatalf("separated classes: %v, want in (0.3, 0.7)", got)
	}
}

// accuracyAt is the accuracy of "1 iff p > t" (NaN scores predict 0, as
// PredictAt does, but AccuracyThreshold skips them, so tests avoid them).
func accuracyAt(s []float64, y []int8, t float64) int {
	c := 0
	for i, p := range s {
		if PredictAt(p, t) == y[i] {
			c++
		}
	}
	return c
}

func TestAccuracyThreshold_Table(t *testing.T) {
	for _, tc := range []struct {
		name     string
		s        []float64
		y        []int8
		fallback float64
		want     float64
	}{
		{"separable", []float64{0.1, 0.2, 0.6, 0.9}, []int8{0, 0, 1, 1}, 0.5, 0.4},
		{"all positive", []float64{0.3, 0.4}, []int8{1, 1}, 0.5, 0.3 - 1e-9},
		{"all negative", []float64{0.3, 0.4}, []int8{0, 0}, 0.5, 0.4 + 1e-9},
		{"tie goes to the fallback", []float64{0.1, 0.3, 0.5, 0.7}, []int8{0, 1, 0, 1}, 0.65, 0.6},
		{"ties in scores", []float64{0.5, 0.5, 0.5, 0.8}, []int8{0, 0, 1, 1}, 0.5, 0.65},
		{"no scores", nil, nil, 0.37, 0.37},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AccuracyThreshold(tc.s, tc.y, tc.fallback); math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("threshold %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAccuracyThreshold_Oracle checks against brute force: no threshold
// (each score, and just below and above it) is more accurate.
func TestAccuracyThreshold_Oracle(t *testing.T) {
	rng := NewRand(11)
	for trial := range 200 {
		n := 1 + rng.IntN(40)
		s := make([]float64, n)
		y := make([]int8, n)
		for i := range s {
			s[i] = float64(rng.IntN(10)) / 10 // many ties
			if rng.Float64() < s[i] {
				y[i] = 1
			}
		}
		got := accuracyAt(s, y, AccuracyThreshold(s, y, 0.5))
		best := accuracyAt(s, y, -1)
		for _, p := range s {
			for _, t := range []float64{p - 1e-6, p, p + 1e-6} {
				best = max(best, accuracyAt(s, y, t))
			}
		}
		if got != best {
			t.Fatalf("trial %d: accuracy %d at the chosen threshold, brute force %d", trial, got, best)
		}
	}
}

func TestRateThreshold_Table(t *testing.T) {
	for _, tc := range []struct {
		name     string
		s        []float64
		y        []int8
		fallback float64
		want     float64
	}{
		// Half the labels are 1: the two highest scores are predicted 1,
		// whatever the labels of those nodes.
		{"half positive", []float64{0.1, 0.2, 0.6, 0.9}, []int8{1, 0, 0, 1}, 0.5, 0.4},
		// Scores shifted far below ½ still give one positive in four.
		{"shifted scores", []float64{0.01, 0.02, 0.03, 0.04}, []int8{0, 1, 0, 0}, 0.5, 0.035},
		{"all positive", []float64{0.3, 0.4}, []int8{1, 1}, 0.5, 0.3 - 1e-9},
		{"all negative", []float64{0.3, 0.4}, []int8{0, 0}, 0.5, 0.4 + 1e-9},
		// One positive in three: the tie at 0.5 is not split.
		{"tie in scores", []float64{0.5, 0.5, 0.8}, []int8{0, 1, 0}, 0.5, 0.65},
		// Two of four positive, but the tie at 0.6 lets only one or three
		// above a threshold: equal gaps, the one closer to the fallback.
		{"equal gaps, low fallback", []float64{0.2, 0.6, 0.6, 0.9}, []int8{1, 1, 0, 0}, 0.3, 0.4},
		{"equal gaps, high fallback", []float64{0.2, 0.6, 0.6, 0.9}, []int8{1, 1, 0, 0}, 0.8, 0.75},
		{"NaN skipped", []float64{math.NaN(), 0.2, 0.7}, []int8{1, 0, 1}, 0.5, 0.45},
		{"no scores", nil, nil, 0.37, 0.37},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RateThreshold(tc.s, tc.y, tc.fallback); math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("threshold %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRateThreshold_Oracle checks against brute force: no threshold
// (each score, and just below and above it) predicts class 1 on a share
// closer to the labels' share, and with distinct scores exactly as many
// nodes are predicted 1 as are labelled 1.
func TestRateThreshold_Oracle(t *testing.T) {
	rng := NewRand(12)
	for trial := range 300 {
		n := 1 + rng.IntN(40)
		s := make([]float64, n)
		y := make([]int8, n)
		pos := 0
		for i := range s {
			s[i] = float64(rng.IntN(10)) / 10 // many ties
			if trial%2 == 1 {
				s[i] = rng.Float64() // distinct
			}
			if rng.Float64() < 0.3 {
				y[i] = 1
				pos++
			}
		}
		above := func(t float64) int {
			c := 0
			for _, p := range s {
				c += int(PredictAt(p, t))
			}
			return c
		}
		gap := func(c int) float64 { return math.Abs(float64(c)/float64(n) - float64(pos)/float64(n)) }
		th := RateThreshold(s, y, 0.5)
		got := gap(above(th))
		best := gap(above(-1))
		for _, p := range s {
			for _, t := range []float64{p - 1e-6, p, p + 1e-6} {
				best = min(best, gap(above(t)))
			}
		}
		if got != best {
			t.Fatalf("trial %d: share gap %v at the chosen threshold %v, brute force %v", trial, got, th, best)
		}
		if distinct(s) {
			// Every count of positives is reachable: exactly pos.
			if c := above(th); c != pos {
				t.Fatalf("trial %d: %d of %d distinct scores predicted 1, %d labels 1", trial, c, n, pos)
			}
		}
	}
}

func distinct(s []float64) bool {
	seen := map[float64]bool{}
	for _, p := range s {
		if seen[p] {
			return false
		}
		seen[p] = true
	}
	return true
}
