package stats

import "math"

// Paired is the paired mean difference of two series over the same seeds:
// per seed d_i = x_i − ref_i, then the mean of d with a two-sided Student t
// confidence interval and p-value (H0: mean difference 0).
type Paired struct {
	// Diffs holds d_i per seed, in input order; NaN where either value is
	// not finite (that seed is left out of the statistics).
	Diffs []float64
	// N is the number of seeds with a finite difference.
	N int
	// Mean is the mean of the finite differences (NaN when N = 0).
	Mean float64
	// SD is their sample standard deviation (n − 1 in the denominator;
	// NaN when N < 2).
	SD float64
	// Lo and Hi bound the confidence interval Mean ∓ t_{(1+level)/2, N−1} ·
	// SD/√N (NaN when N < 2).
	Lo, Hi float64
	// P is the two-sided p-value of the paired t test: NaN when N < 2, or
	// when SD = 0 and Mean = 0; 0 when SD = 0 and Mean ≠ 0.
	P float64
}

// PairedDiff pairs x and ref by index (they must have the same length; the
// shorter length is used otherwise) and returns the paired difference x −
// ref at the given confidence level in (0, 1), e.g. 0.95.
func PairedDiff(x, ref []float64, level float64) Paired {
	n := min(len(x), len(ref))
	p := Paired{Diffs: make([]float64, n), Mean: math.NaN(), SD: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: math.NaN()}
	var sum float64
	for i := range n {
		d := x[i] - ref[i]
		if math.IsNaN(d) || math.IsInf(d, 0) {
			p.Diffs[i] = math.NaN()
			continue
		}
		p.Diffs[i] = d
		p.N++
		sum += d
	}
	if p.N == 0 {
		return p
	}
	p.Mean = sum / float64(p.N)
	if p.N < 2 || !(level > 0 && level < 1) {
		return p
	}
	var ss float64
	for _, d := range p.Diffs {
		if !math.IsNaN(d) {
			ss += (d - p.Mean) * (d - p.Mean)
		}
	}
	df := float64(p.N - 1)
	p.SD = math.Sqrt(ss / df)
	se := p.SD / math.Sqrt(float64(p.N))
	half := TQuantile((1+level)/2, df) * se
	p.Lo, p.Hi = p.Mean-half, p.Mean+half
	switch {
	case se > 0:
		p.P = 2 * TCDF(-math.Abs(p.Mean)/se, df)
	case p.Mean != 0:
		p.P = 0
	}
	return p
}
