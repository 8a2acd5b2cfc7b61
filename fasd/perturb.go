package fasd

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// GammaMode selects the formula of the fairness scale γ (docs/method.md §5, §13.9).
type GammaMode uint8

const (
	// GammaLiteral is the paper's formula γ = λ·‖σ_t·ε‖² / ‖G‖² (default).
	GammaLiteral GammaMode = iota
	// GammaLinear is γ = λ·‖σ_t·ε‖ / ‖G‖, so that ‖γG‖ = λ·‖σ_t·ε‖.
	GammaLinear
)

var gammaModeNames = [...]string{"literal", "linear"}

// Names lists the names of the values, indexed by value: literal, linear.
func (GammaMode) Names() []string { return slices.Clone(gammaModeNames[:]) }

// String returns the value's name.
func (v GammaMode) String() string { return enumString(gammaModeNames[:], uint8(v), "GammaMode") }

// MinGradSqNorm is the threshold below which a fairness gradient counts as
// zero: if ‖G‖² < MinGradSqNorm, γ = 0.
const MinGradSqNorm = 1e-12

// FairnessScale returns γ for one subgraph and one of X or A, given λ, σ_t,
// the noise ε and the cached gradient G (norms over all entries, ε_A as the
// full symmetric matrix). It returns 0 if λ = 0, G is nil or ‖G‖² <
// MinGradSqNorm.
func FairnessScale(mode GammaMode, lambda, sigma float64, eps, g []float32) float64 {
	if lambda == 0 || g == nil {
		return 0
	}
	gg := sqNorm(g)
	if gg < MinGradSqNorm {
		return 0
	}
	ee := sigma * sigma * sqNorm(eps)
	if mode == GammaLinear {
		return lambda * math.Sqrt(ee) / math.Sqrt(gg)
	}
	return lambda * ee / gg
}

// PerturbOptions configures the fairness-aware forward diffusion of §5. The
// zero value is the paper's default for λ = 0 (w/o Fairness) with γ literal;
// zero SDEs mean DefaultVPSDE.
type PerturbOptions struct {
	SDEX, SDEA       VPSDE
	LambdaX, LambdaA float64
	Gamma            GammaMode
}

func (o *PerturbOptions) withDefaults() PerturbOptions {
	c := *o
	if c.SDEX == (VPSDE{}) {
		c.SDEX = DefaultVPSDE()
	}
	if c.SDEA == (VPSDE{}) {
		c.SDEA = DefaultVPSDE()
	}
	return c
}

// Validate reports every invalid field, each wrapping ErrInvalidOptions.
func (o *PerturbOptions) Validate() error {
	c := o.withDefaults()
	var errs []error
	if err := c.SDEX.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("SDE of X: %w", err))
	}
	if err := c.SDEA.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("SDE of A: %w", err))
	}
	if !(c.LambdaX >= 0) || !(c.LambdaA >= 0) || math.IsInf(c.LambdaX, 0) || math.IsInf(c.LambdaA, 0) {
		errs = append(errs, fmt.Errorf("%w: λ_X = %v, λ_A = %v, want finite ≥ 0", ErrInvalidOptions, c.LambdaX, c.LambdaA))
	}
	if c.Gamma > GammaLinear {
		errs = append(errs, fmt.Errorf("%w: unknown gamma mode %d", ErrInvalidOptions, c.Gamma))
	}
	return errors.Join(errs...)
}

// PerturbInput is one clean subgraph with its cached fairness gradients.
// GX (N×D) and GA (N×N) may be nil, which means zero (no fairness term).
type PerturbInput struct {
	N, D   int
	X0, A0 []float32
	GX, GA []float32
}

// Perturbation is one fairness-aware forward draw for one subgraph. Its
// slices are reused across calls to Perturb.
type Perturbation struct {
	T              float64 // diffusion time
	MeanX, SigmaX  float64 // m(t), σ_t of the X SDE
	MeanA, SigmaA  float64 // m(t), σ_t of the A SDE
	GammaX, GammaA float64
	// RatioX and RatioA are the diagnostics ‖γG‖ / ‖σ_t·ε‖ (0 when γ = 0).
	RatioX, RatioA float64
	EpsX, EpsA     []float32 // the noise (N×D; N×N symmetric, zero diagonal)
	// Xt = m·X₀ + σ·ε_X − γ_X·G_X and At = m·A₀ + σ·ε_A − γ_A·G_A.
	Xt, At []float32
	// TX = ε_X − (γ_X/σ)·G_X and TA = ε_A − (γ_A/σ)·G_A are the ε-prediction
	// targets, so that (Xt − m·X₀)/σ = TX.
	TX, TA []float32
}

// Perturb draws ε_X then ε_A from rng (FillNormal, then FillSymNormal) and
// computes the perturbed subgraph and the targets at time t (t in (0, 1]; t
// itself is drawn by the caller, usually with SampleTime, before the noise).
// A_t is continuous and may be negative; it is not clipped.
func Perturb(opt *PerturbOptions, in *PerturbInput, t float64, rng *rand.Rand, dst *Perturbation) error {
	o := opt.withDefaults()
	n, d := in.N, in.D
	if n < 1 || d < 0 || len(in.X0) != n*d || len(in.A0) != n*n ||
		(in.GX != nil && len(in.GX) != n*d) || (in.GA != nil && len(in.GA) != n*n) {
		return fmt.Errorf("%w: perturb input with N=%d D=%d: |X0|=%d |A0|=%d |GX|=%d |GA|=%d",
			ErrShape, n, d, len(in.X0), len(in.A0), len(in.GX), len(in.GA))
	}
	if !(t > 0 && t <= 1) {
		return fmt.Errorf("%w: diffusion time %v outside (0, 1]", ErrInvalidOptions, t)
	}
	dst.EpsX = resize(dst.EpsX, n*d)
	dst.EpsA = resize(dst.EpsA, n*n)
	FillNormal(rng, dst.EpsX)
	FillSymNormal(rng, n, dst.EpsA)
	dst.T = t
	dst.MeanX, dst.SigmaX = o.SDEX.Mean(t), o.SDEX.Std(t)
	dst.MeanA, dst.SigmaA = o.SDEA.Mean(t), o.SDEA.Std(t)
	dst.GammaX = FairnessScale(o.Gamma, o.LambdaX, dst.SigmaX, dst.EpsX, in.GX)
	dst.GammaA = FairnessScale(o.Gamma, o.LambdaA, dst.SigmaA, dst.EpsA, in.GA)
	dst.Xt = resize(dst.Xt, n*d)
	dst.TX = resize(dst.TX, n*d)
	dst.At = resize(dst.At, n*n)
	dst.TA = resize(dst.TA, n*n)
	dst.RatioX = perturbPart(dst.MeanX, dst.SigmaX, dst.GammaX, in.X0, dst.EpsX, in.GX, dst.Xt, dst.TX)
	dst.RatioA = perturbPart(dst.MeanA, dst.SigmaA, dst.GammaA, in.A0, dst.EpsA, in.GA, dst.At, dst.TA)
	return nil
}

// perturbPart writes xt = m·x0 + σ·ε − γ·g and tgt = ε − (γ/σ)·g and returns
// ‖γg‖/‖σε‖.
func perturbPart(m, sigma, gamma float64, x0, eps, g, xt, tgt []float32) float64 {
	if gamma == 0 || g == nil {
		for i := range xt {
			xt[i] = float32(m*float64(x0[i]) + sigma*float64(eps[i]))
			tgt[i] = eps[i]
		}
		return 0
	}
	gs := gamma / sigma
	for i := range xt {
		xt[i] = float32(m*float64(x0[i]) + sigma*float64(eps[i]) - gamma*float64(g[i]))
		tgt[i] = float32(float64(eps[i]) - gs*float64(g[i]))
	}
	ne := sigma * Norm(eps)
	if ne == 0 {
		return math.Inf(1)
	}
	return gamma * Norm(g) / ne
}
