package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

// Ensure that TQuantile matches published t-table values.
func TestTQuantile_Table(t *testing.T) {
	for _, c := range []struct{ p, df, want float64 }{
		{0.975, 1, 12.706204736174707},
		{0.975, 2, 4.302652729749464},
		{0.975, 3, 3.182446305284263},
		{0.975, 4, 2.776445105197793},
		{0.975, 5, 2.570581835636314},
		{0.975, 9, 2.262157162740992},
		{0.975, 10, 2.228138851986274},
		{0.975, 20, 2.085963447265837},
		{0.975, 29, 2.045229642132703},
		{0.975, 30, 2.042272456301238},
		{0.95, 1, 6.313751514675043},
		{0.95, 9, 1.833112932653634},
		{0.995, 9, 3.249835541592144},
		{0.025, 9, -2.262157162740992},
		{0.5, 7, 0},
		{0.975, 1000, 1.962339080826407},
	} {
		if got := TQuantile(c.p, c.df); !near(got, c.want, 1e-8) {
			t.Errorf("TQuantile(%v, %v) = %.15g, want %.15g", c.p, c.df, got, c.want)
		}
	}
}

// Ensure that TCDF matches the closed forms of df = 1 (Cauchy) and df = 2,
// and is symmetric for other df.
func TestTCDF_ClosedForms(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		x := 20 * (r.Float64() - 0.5)
		if got, want := TCDF(x, 1), 0.5+math.Atan(x)/math.Pi; !near(got, want, 1e-12) {
			t.Fatalf("TCDF(%v, 1) = %v, want %v", x, got, want)
		}
		if got, want := TCDF(x, 2), 0.5+x/(2*math.Sqrt(2+x*x)); !near(got, want, 1e-12) {
			t.Fatalf("TCDF(%v, 2) = %v, want %v", x, got, want)
		}
		df := 0.5 + 50*r.Float64()
		if s := TCDF(x, df) + TCDF(-x, df); !near(s, 1, 1e-12) {
			t.Fatalf("TCDF(%v) + TCDF(-%v) = %v (df %v)", x, x, s, df)
		}
		// Round trip on the lower tail, where TCDF keeps full precision
		// (near 1 the float64 spacing limits any inverse).
		if q := TQuantile(TCDF(-math.Abs(x), df), df); !near(q, -math.Abs(x), 1e-9) {
			t.Fatalf("TQuantile(TCDF(%v, %v)) = %v", -math.Abs(x), df, q)
		}
	}
}

// Ensure that invalid arguments give NaN, not a number.
func TestT_Invalid(t *testing.T) {
	for _, v := range []float64{TCDF(1, 0), TCDF(math.NaN(), 3), TQuantile(0, 3), TQuantile(1, 3), TQuantile(0.5, -1)} {
		if !math.IsNaN(v) {
			t.Errorf("got %v, want NaN", v)
		}
	}
	if TCDF(math.Inf(1), 3) != 1 || TCDF(math.Inf(-1), 3) != 0 {
		t.Error("TCDF at ±Inf")
	}
}

// Ensure that PairedDiff gives the textbook paired t interval and p-value
// on small hand-computed cases.
func TestPairedDiff(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name             string
		x, ref           []float64
		n                int
		mean, sd, lo, hi float64
		p                float64
	}{
		// d = 1..5: mean 3, sd √2.5, se √0.5, t_{.975,4} = 2.7764451.
		{"five", []float64{1, 2, 3, 4, 5}, []float64{0, 0, 0, 0, 0}, 5, 3, math.Sqrt(2.5),
			3 - 2.776445105197793*math.Sqrt(0.5), 3 + 2.776445105197793*math.Sqrt(0.5),
			// t = 3/√0.5 with df 4: P(|T| > t) = 1 − ... computed from the
			// df-4 closed form 0.5 + t(t²+6)/(2(t²+4)^{3/2})·... see below.
			2 * (1 - cdf4(3/math.Sqrt(0.5)))},
		// d = (2, 4): mean 3, sd √2, se 1, df 1: t_{.975,1} = 12.7062.
		{"two", []float64{12, 14}, []float64{10, 10}, 2, 3, math.Sqrt2, 3 - 12.706204736174707, 3 + 12.706204736174707,
			1 - 2*math.Atan(3)/math.Pi},
		// A NaN seed is left out; constant differences give a zero-width
		// interval and p = 0.
		{"nan and constant", []float64{1, nan, 3, 4}, []float64{0, 0, 2, 3}, 3, 1, 0, 1, 1, 0},
		{"one pair", []float64{5}, []float64{4}, 1, 1, nan, nan, nan, nan},
		{"no pair", []float64{nan}, []float64{1}, 0, nan, nan, nan, nan, nan},
		{"all equal", []float64{2, 2}, []float64{2, 2}, 2, 0, 0, 0, 0, nan},
	} {
		got := PairedDiff(c.x, c.ref, 0.95)
		same := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || near(a, b, 1e-9) }
		if got.N != c.n || !same(got.Mean, c.mean) || !same(got.SD, c.sd) || !same(got.Lo, c.lo) || !same(got.Hi, c.hi) || !same(got.P, c.p) {
			t.Errorf("%s: got %+v, want n %d mean %v sd %v [%v, %v] p %v", c.name, got, c.n, c.mean, c.sd, c.lo, c.hi, c.p)
		}
		if len(got.Diffs) != len(c.x) {
			t.Errorf("%s: %d diffs", c.name, len(got.Diffs))
		}
	}
}

// cdf4 is the closed form of the t CDF with 4 degrees of freedom.
func cdf4(t float64) float64 {
	x := t / math.Sqrt(t*t+4)
	return 0.5 + 0.75*x*(1-x*x/3)
}

// Ensure that about 95 % of the 95 % intervals cover the true mean
// difference under normal noise (a property check of the whole path).
func TestPairedDiff_Coverage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const trials, n = 4000, 6
	cover := 0
	x, ref := make([]float64, n), make([]float64, n)
	for range trials {
		for i := range n {
			base := r.NormFloat64() * 5
			ref[i] = base + r.NormFloat64()
			x[i] = base + 1.5 + r.NormFloat64()
		}
		p := PairedDiff(x, ref, 0.95)
		if p.Lo <= 1.5 && 1.5 <= p.Hi {
			cover++
		}
	}
	if f := float64(cover) / trials; math.Abs(f-0.95) > 0.015 {
		t.Errorf("coverage %.3f, want 0.95 ± 0.015", f)
	}
}
