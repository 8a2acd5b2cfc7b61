package fasd

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// VPSDE is the variance-preserving SDE of docs/method.md §4, elementwise:
//
//	dX = −½·β(t)·X dt + √β(t) dw,  β(t) = β_min + t·(β_max − β_min),  t ∈ [0, 1].
//
// Its marginal is X_t ~ N(m(t)·X₀, σ_t²) with log m(t) = −¼t²(β_max−β_min) −
// ½t·β_min and σ_t = √(1 − m(t)²). NumScales (N_s) only sets the Langevin α of
// the corrector. The zero value is not usable; start from DefaultVPSDE.
type VPSDE struct {
	BetaMin, BetaMax float64
	NumScales        int
}

// DefaultVPSDE returns FASD's setting: β from 0.1 to 1.0, N_s = 1000.
func DefaultVPSDE() VPSDE { return VPSDE{BetaMin: 0.1, BetaMax: 1.0, NumScales: 1000} }

// Validate checks 0 ≤ β_min ≤ β_max and N_s ≥ 2.
func (s VPSDE) Validate() error {
	if !(s.BetaMin >= 0 && s.BetaMax >= s.BetaMin) || math.IsInf(s.BetaMax, 0) {
		return fmt.Errorf("%w: VP SDE β range [%v, %v]", ErrInvalidOptions, s.BetaMin, s.BetaMax)
	}
	if s.NumScales < 2 {
		return fmt.Errorf("%w: VP SDE num scales %d, want ≥ 2", ErrInvalidOptions, s.NumScales)
	}
	return nil
}

// Beta returns β(t).
func (s VPSDE) Beta(t float64) float64 { return s.BetaMin + t*(s.BetaMax-s.BetaMin) }

// LogMean returns log m(t) = −¼t²(β_max − β_min) − ½t·β_min = −½∫₀ᵗβ.
func (s VPSDE) LogMean(t float64) float64 {
	return -0.25*t*t*(s.BetaMax-s.BetaMin) - 0.5*t*s.BetaMin
}

// Mean returns m(t), the factor of X₀ in the marginal mean.
func (s VPSDE) Mean(t float64) float64 { return math.Exp(s.LogMean(t)) }

// Std returns σ_t = √(1 − m(t)²), computed with expm1 so that it stays
// accurate for small t.
func (s VPSDE) Std(t float64) float64 {
	return math.Sqrt(-math.Expm1(2 * s.LogMean(t)))
}

// LangevinAlpha returns GDSS's α for the corrector at time t: with
// i = ⌊t·(N_s − 1)⌋ (clamped to [0, N_s−1]), β̄_i = (β_min + (β_max −
// β_min)·i/(N_s − 1))/N_s and α = 1 − β̄_i, i.e. about 1 − β(t)/N_s.
func (s VPSDE) LangevinAlpha(t float64) float64 {
	n := s.NumScales
	i := int(math.Floor(t * float64(n-1)))
	i = max(0, min(i, n-1))
	b := (s.BetaMin + (s.BetaMax-s.BetaMin)*float64(i)/float64(n-1)) / float64(n)
	return 1 - b
}

// DefaultTimeEps is ε_t, the lower end of the training time range [ε_t, 1].
const DefaultTimeEps = 1e-5

// SampleTime draws a training time t = eps + (1 − eps)·U(0,1) with one call
// to rng.Float64. eps ≤ 0 means DefaultTimeEps.
func SampleTime(rng *rand.Rand, eps float64) float64 {
	if eps <= 0 {
		eps = DefaultTimeEps
	}
	return eps + (1-eps)*rng.Float64()
}

// FillNormal fills dst with iid N(0,1) values, one rng.NormFloat64 per entry
// in index order.
func FillNormal(rng *rand.Rand, dst []float32) {
	for i := range dst {
		dst[i] = float32(rng.NormFloat64())
	}
}

// FillSymNormal fills the n×n row-major dst with symmetric noise with a zero
// diagonal: one rng.NormFloat64 per pair i < j in row-major order (i outer),
// mirrored to (j, i). A single node (n = 1) draws nothing.
func FillSymNormal(rng *rand.Rand, n int, dst []float32) {
	dst = dst[:n*n]
	for i := range n {
		dst[i*n+i] = 0
		for j := i + 1; j < n; j++ {
			z := float32(rng.NormFloat64())
			dst[i*n+j] = z
			dst[j*n+i] = z
		}
	}
}

// sqNorm returns Σ v² in float64.
func sqNorm(v []float32) float64 {
	s := 0.0
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return s
}

// Norm returns the Frobenius norm of v, accumulated in float64.
func Norm(v []float32) float64 { return math.Sqrt(sqNorm(v)) }
