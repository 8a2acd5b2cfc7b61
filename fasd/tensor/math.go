package tensor

import "math"

// The float32 kernels below evaluate in float64 arithmetic without calling the
// math package: exp uses the reduction x = n·ln2 + r with |r| ≤ ln2/2 and a
// degree-7 Taylor polynomial (truncation error r⁸/8! ≤ 5e-9 relative), which is
// well below float32's 6e-8 rounding unit. Tanh switches to its odd Taylor
// series below |x| = 0.1 (error ≤ 62/2835·x⁹ < 3e-11) to avoid the
// cancellation in (e^{2x}-1)/(e^{2x}+1).

const (
	log2e = 1.4426950408889634
	ln2   = 0.6931471805599453
)

// exp64poly returns e^x for x in roughly [-745, 709]; callers clamp.
func exp64poly(x float64) float64 {
	n := math.Floor(x*log2e + 0.5)
	r := x - n*ln2
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040)))))))
	return p * math.Float64frombits(uint64(int64(n)+1023)<<52)
}

// Exp32 is a fast float32 e^x (relative error below 1e-7, exact 0 below -104
// and +Inf above 89).
func Exp32(x float32) float32 {
	switch {
	case x > 89:
		return float32(math.Inf(1))
	case x < -104:
		return 0
	case x != x:
		return x
	}
	return float32(exp64poly(float64(x)))
}

// Tanh32 is a fast float32 tanh (relative error below 1e-7).
func Tanh32(x float32) float32 {
	a := float64(x)
	neg := a < 0
	if neg {
		a = -a
	}
	var t float64
	switch {
	case a != a:
		return x
	case a < 0.1:
		a2 := a * a
		t = a * (1 + a2*(-1.0/3+a2*(2.0/15+a2*(-17.0/315))))
	case a > 10:
		t = 1
	default:
		e := exp64poly(2 * a)
		t = (e - 1) / (e + 1)
	}
	if neg {
		t = -t
	}
	return float32(t)
}

// ExpTo sets dst[i] = e^src[i]. dst and src must have equal length; they may
// be the same slice.
func ExpTo[T Float](dst, src []T) {
	src = src[:len(dst)]
	if d, ok := any(dst).([]float32); ok {
		s := any(src).([]float32)
		for i, v := range s {
			d[i] = Exp32(v)
		}
		return
	}
	for i, v := range src {
		dst[i] = T(math.Exp(float64(v)))
	}
}

// map32 sets d[i] = scalar(s[i]), running the four-lane AVX2 kernel lanes4
// over the largest multiple of four where the assembly is available, and
// before it the eight-lane AVX-512 kernel lanes8 (when not nil) over the
// largest multiple of eight: the two give every element the same bits, and
// the scalar tail is the same as with lanes4 alone; len(s) ≥ len(d).
func map32(d, s []float32, lanes4, lanes8 func(d, s []float32), scalar func(float32) float32) {
	n := 0
	if haveElemAsm {
		if lanes8 != nil {
			n = len(d) &^ 7
			lanes8(d[:n], s[:n])
		}
		if m := len(d) &^ 3; m > n {
			lanes4(d[n:m], s[n:m])
			n = m
		}
	}
	for i := n; i < len(d); i++ {
		d[i] = scalar(s[i])
	}
}

// TanhTo sets dst[i] = tanh(src[i]); dst may be src (no other overlap).
// For float32 it runs four lanes at a time in AVX2 where available (same
// float64 evaluation and error bound as Tanh32), else Tanh32.
func TanhTo[T Float](dst, src []T) {
	src = src[:len(dst)]
	if d, ok := any(dst).([]float32); ok {
		map32(d, any(src).([]float32), tanh4, tanh8, Tanh32)
		return
	}
	for i, v := range src {
		dst[i] = T(math.Tanh(float64(v)))
	}
}

// ELU32 is the float32 ELU with α = 1: x for x > 0 (and NaN), else e^x − 1
// evaluated in float64 (relative error below 1e-7 away from 0, absolute
// below 1e-15 near it).
func ELU32(x float32) float32 {
	switch {
	case x > 0 || x != x:
		return x
	case x < -100:
		return -1
	}
	return float32(exp64poly(float64(x)) - 1)
}

// ELUTo sets dst[i] = ELU(src[i]) (α = 1: x for x > 0, else e^x − 1); dst
// may be src (no other overlap). float32 runs four lanes at a time in AVX2
// where available, else ELU32; float64 uses math.Expm1.
func ELUTo[T Float](dst, src []T) {
	src = src[:len(dst)]
	if d, ok := any(dst).([]float32); ok {
		map32(d, any(src).([]float32), elu4, elu8, ELU32)
		return
	}
	for i, v := range src {
		if v > 0 || v != v {
			dst[i] = v
		} else {
			dst[i] = T(math.Expm1(float64(v)))
		}
	}
}

// ELUGradAcc adds g[i]·ELU'(x_i) to ga[i], with the derivative written in
// terms of the output y = ELU(x): 1 for y > 0, else y + 1. All three slices
// have the length of ga (g and y may alias each other, not ga).
func ELUGradAcc[T Float](ga, g, y []T) {
	g, y = g[:len(ga)], y[:len(ga)]
	n := 0
	if a, ok := any(ga).([]float32); ok && haveElemAsm {
		n = len(a) &^ 7
		eluGradAcc8(a[:n], any(g).([]float32), any(y).([]float32))
	}
	for i := n; i < len(ga); i++ {
		if v := y[i]; v > 0 {
			ga[i] += g[i]
		} else {
			ga[i] += g[i] * (v + 1)
		}
	}
}

// TanhGradAcc adds g[i]·(1 − y[i]²) to ga[i], the tanh derivative in terms
// of the output y = tanh(x). All three slices have the length of ga.
func TanhGradAcc[T Float](ga, g, y []T) {
	g, y = g[:len(ga)], y[:len(ga)]
	n := 0
	if a, ok := any(ga).([]float32); ok && haveElemAsm {
		n = len(a) &^ 7
		tanhGradAcc8(a[:n], any(g).([]float32), any(y).([]float32))
	}
	for i := n; i < len(ga); i++ {
		v := y[i]
		ga[i] += g[i] * (1 - v*v)
	}
}

// ELUGradTo sets ga[i] = g[i]·ELU'(x_i) (see ELUGradAcc; ga is not read):
// the form for a first gradient writer, which saves zeroing ga.
func ELUGradTo[T Float](ga, g, y []T) {
	g, y = g[:len(ga)], y[:len(ga)]
	n := 0
	if a, ok := any(ga).([]float32); ok && haveElemAsm {
		n = len(a) &^ 7
		eluGradTo8(a[:n], any(g).([]float32), any(y).([]float32))
	}
	for i := n; i < len(ga); i++ {
		if v := y[i]; v > 0 {
			ga[i] = g[i]
		} else {
			ga[i] = g[i] * (v + 1)
		}
	}
}

// TanhGradTo sets ga[i] = g[i]·(1 − y[i]²) (see TanhGradAcc; ga is not
// read).
func TanhGradTo[T Float](ga, g, y []T) {
	g, y = g[:len(ga)], y[:len(ga)]
	n := 0
	if a, ok := any(ga).([]float32); ok && haveElemAsm {
		n = len(a) &^ 7
		tanhGradTo8(a[:n], any(g).([]float32), any(y).([]float32))
	}
	for i := n; i < len(ga); i++ {
		v := y[i]
		ga[i] = g[i] * (1 - v*v)
	}
}

// Exp returns e^x in the precision of T (fast path for float32).
func Exp[T Float](x T) T {
	if _, ok := any(x).(float32); ok {
		return T(Exp32(float32(x)))
	}
	return T(math.Exp(float64(x)))
}

// Tanh returns tanh(x) in the precision of T (fast path for float32).
func Tanh[T Float](x T) T {
	if _, ok := any(x).(float32); ok {
		return T(Tanh32(float32(x)))
	}
	return T(math.Tanh(float64(x)))
}

// Sigmoid returns the logistic function 1/(1+e^{-x}), evaluated so that it
// neither overflows nor loses the small tail.
func Sigmoid[T Float](x T) T {
	if x >= 0 {
		return 1 / (1 + Exp(-x))
	}
	e := Exp(x)
	return e / (1 + e)
}

// Log1pExp returns log(1+e^x) (softplus) without overflow.
func Log1pExp[T Float](x T) T {
	if x > 0 {
		return x + T(math.Log1p(float64(Exp(-x))))
	}
	return T(math.Log1p(float64(Exp(x))))
}
