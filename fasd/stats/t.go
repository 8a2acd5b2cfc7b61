package stats

import "math"

// TCDF returns P(T ≤ t) for Student's t distribution with df > 0 degrees of
// freedom (NaN for df ≤ 0 or a NaN argument).
func TCDF(t, df float64) float64 {
	if !(df > 0) || math.IsNaN(t) {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		if t > 0 {
			return 1
		}
		return 0
	}
	tail := upperTail(math.Abs(t), df)
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// upperTail returns P(T > t) for t ≥ 0: ½·I_x(df/2, 1/2) with x = df/(df +
// t²), 1 − x passed separately so that neither loses precision.
func upperTail(t, df float64) float64 {
	den := df + t*t
	return 0.5 * regIncBeta(df/den, t*t/den, df/2, 0.5)
}

// TQuantile returns the t with TCDF(t, df) = p, for p in (0, 1) and df > 0
// (NaN otherwise). It is accurate to about 1e-10 relative.
func TQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	// Solve upperTail(t) = q for t ≥ 0 with q the smaller tail (no 1 − p
	// for small p): bracket the root in [0, hi], then bisect, since the
	// tail falls monotonically.
	q, sign := 1-p, 1.0
	if p < 0.5 {
		q, sign = p, -1
	}
	lo, hi := 0.0, 1.0
	for upperTail(hi, df) > q {
		lo, hi = hi, 2*hi
		if hi > 1e300 {
			return sign * math.Inf(1)
		}
	}
	for range 400 {
		mid := lo + (hi-lo)/2
		if mid == lo || mid == hi {
			break
		}
		if upperTail(mid, df) > q {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-14*hi {
			break
		}
	}
	return sign * (lo + (hi-lo)/2)
}

// regIncBeta is the regularized incomplete beta function I_x(a, b) for
// a, b > 0, x in [0, 1] and y = 1 − x (given separately, computed without
// cancellation by the caller), by its continued fraction (modified Lentz),
// using the symmetry I_x(a, b) = 1 − I_y(b, a) where the fraction
// converges slowly.
func regIncBeta(x, y, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case y <= 0:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log(y))
	if x < (a+1)/(a+b+2) {
		return front * betaFrac(x, a, b) / a
	}
	return 1 - front*betaFrac(y, b, a)/b
}

// betaFrac evaluates the continued fraction of I_x(a, b).
func betaFrac(x, a, b float64) float64 {
	const tiny = 1e-300
	const eps = 1e-15
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 1000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
