// Package adtest checks reverse-mode gradients against central finite
// differences in float64. It is test support for packages autodiff and nn.
//
// Every differentiable input of a check is a *autodiff.Param[float64]; the
// loss builder records a scalar on a fresh tape from the current parameter
// values. The analytic gradient comes from Tape.Backward +
// Tape.AccumulateGrads; the numeric one perturbs one entry at a time by ±Step.
package adtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd/autodiff"
)

// Tolerances of the check.
//
// Step: the central difference has truncation error h²·|f”'|/6 ≈ 1e-12 and
// rounding error ≈ eps64·|f|/h ≈ 1e-10·|f|, balanced near h = 1e-6 for the
// O(1)–O(10) losses the tests build.
//
// Tol: the relative error bound of docs/method.md §14 (1e-5).
//
// Floor: gradient magnitude below which the error is judged absolutely
// (Tol·Floor = 1e-8), because there the rounding noise of the difference
// quotient, not the gradient, sets the scale.
const (
	Step  = 1e-6
	Tol   = 1e-5
	Floor = 1e-3
)

// Case is one gradient check.
type Case struct {
	Name   string
	Params []*autodiff.Param[float64]
	// Loss records a scalar on tp from the current values of Params.
	Loss func(tp *autodiff.Tape[float64]) *autodiff.Var[float64]
	// MaxEntries limits how many entries per parameter are perturbed (chosen
	// at random); 0 checks all.
	MaxEntries int
}

// Result summarises a check.
type Result struct {
	Checked  int
	MaxRel   float64 // max |a−n| / max(|a|, |n|, Floor)
	NonZero  int     // analytic entries with |a| > Floor among the checked
	MaxAbsAn float64
}

// Analytic returns the analytic gradient of c's loss w.r.t. each parameter.
func Analytic(c Case) [][]float64 {
	tp := autodiff.NewTape[float64]()
	for _, p := range c.Params {
		p.Grad = make([]float64, len(p.Value.Data))
	}
	loss := c.Loss(tp)
	tp.Backward(loss)
	tp.AccumulateGrads()
	out := make([][]float64, len(c.Params))
	for i, p := range c.Params {
		out[i] = append([]float64(nil), p.Grad...)
	}
	return out
}

// Numeric returns the central difference of c's loss w.r.t. entry j of
// parameter p.
func Numeric(c Case, tp *autodiff.Tape[float64], p *autodiff.Param[float64], j int) float64 {
	v := p.Value.Data[j]
	p.Value.Data[j] = v + Step
	tp.Reset()
	fp := c.Loss(tp).Value.Data[0]
	p.Value.Data[j] = v - Step
	tp.Reset()
	fm := c.Loss(tp).Value.Data[0]
	p.Value.Data[j] = v
	return (fp - fm) / (2 * Step)
}

// Check compares analytic and numeric gradients and fails t on any entry
// outside Tol, on NaN, or when every checked analytic entry is below Floor
// (a check that cannot fail).
func Check(t testing.TB, c Case, rng *rand.Rand) Result {
	t.Helper()
	an := Analytic(c)
	tp := autodiff.NewTape[float64]()
	var res Result
	for pi, p := range c.Params {
		idx := entries(len(p.Value.Data), c.MaxEntries, rng)
		for _, j := range idx {
			a := an[pi][j]
			n := Numeric(c, tp, p, j)
			rel := math.Abs(a-n) / math.Max(math.Max(math.Abs(a), math.Abs(n)), Floor)
			if math.IsNaN(rel) || rel > Tol {
				t.Errorf("%s: d/d%s[%d]: analytic %.10g, numeric %.10g (rel %.3g > %g)", c.Name, name(p, pi), j, a, n, rel, Tol)
			}
			res.Checked++
			res.MaxRel = math.Max(res.MaxRel, rel)
			if math.Abs(a) > Floor {
				res.NonZero++
			}
			res.MaxAbsAn = math.Max(res.MaxAbsAn, math.Abs(a))
		}
	}
	if res.NonZero == 0 {
		t.Errorf("%s: all %d checked gradient entries are below %g: the check cannot fail", c.Name, res.Checked, Floor)
	}
	return res
}

func name(p *autodiff.Param[float64], i int) string {
	if p.Name != "" {
		return p.Name
	}
	return fmt.Sprintf("param%d", i)
}

func entries(n, limit int, rng *rand.Rand) []int {
	if limit <= 0 || limit >= n {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	return rng.Perm(n)[:limit]
}

// RandParam returns a parameter with entries uniform in [lo, hi).
func RandParam(rng *rand.Rand, name string, lo, hi float64, dims ...int) *autodiff.Param[float64] {
	p := autodiff.NewParam[float64](name, dims...)
	for i := range p.Value.Data {
		p.Value.Data[i] = lo + (hi-lo)*rng.Float64()
	}
	return p
}

// RandSlice returns n values uniform in [lo, hi).
func RandSlice(rng *rand.Rand, n int, lo, hi float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + (hi-lo)*rng.Float64()
	}
	return out
}
