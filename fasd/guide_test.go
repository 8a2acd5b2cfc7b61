package fasd

import (
	"math"
	"testing"
)

// planeGuide is L = Σ_u log cosh(z_u/2), z_u = w·x_u + b, the loss of a
// linear sensitive predictor pushed to chance; it counts its calls.
type planeGuide struct {
	w     []float32
	b     float64
	calls int
}

func (g *planeGuide) z(x []float32, u, d int) float64 {
	z := g.b
	for j := 0; j < d; j++ {
		z += float64(g.w[j]) * float64(x[u*d+j])
	}
	return z
}

func (g *planeGuide) Grad(x, _ []float32, n, d int, gx, ga []float32) (float64, error) {
	g.calls++
	clear(gx)
	clear(ga)
	var l float64
	for u := 0; u < n; u++ {
		z := g.z(x, u, d)
		l += math.Log(math.Cosh(z / 2))
		e := 1/(1+math.Exp(-z)) - 0.5
		for j := 0; j < d; j++ {
			gx[u*d+j] = float32(e * float64(g.w[j]))
		}
	}
	return l, nil
}

// ensure that the ODE integrator is the probability-flow step (half the
// score, no noise, no corrector) and consumes no randomness.
func TestDebiaser_ODE(t *testing.T) {
	const n, d = 5, 3
	x0, a0 := randomState(n, d, 2)
	p, err := NewDebiaser(DebiasOptions{Steps: 1, DtRev: 0.02, Reverse: ReverseODE})
	if err != nil {
		t.Fatal(err)
	}
	x, a := make([]float32, n*d), make([]float32, n*n)
	rng := NewRand(3)
	if err := p.Run(linearModel{c: 0.3}, x0, a0, n, d, rng, x, a); err != nil {
		t.Fatal(err)
	}
	if rng.Uint64() != NewRand(3).Uint64() {
		t.Error("the ODE run drew random numbers")
	}
	sde := DefaultVPSDE()
	beta, sigma := sde.Beta(0.02), sde.Std(0.02)
	for i := range x {
		s := -0.3 * float64(x0[i]) / sigma
		want := float64(x0[i]) + 0.02*(0.5*beta*float64(x0[i])+0.5*beta*s)
		if math.Abs(float64(x[i])-want) > 1e-5*math.Max(1, math.Abs(want)) {
			t.Fatalf("X[%d] = %v, want %v", i, x[i], want)
		}
	}
}

// ensure that guidance drives a linear guide's logits toward 0 (the
// projection onto its hyperplane), that more weight or steps get closer,
// and that the component orthogonal to w is left alone.
func TestDebiaser_GuidanceProjects(t *testing.T) {
	const n, d = 8, 4
	x0, a0 := randomState(n, d, 4)
	w := []float32{1.5, -0.5, 0, 2}
	base := &planeGuide{w: w, b: 0.3}
	var ww float64
	for _, v := range w {
		ww += float64(v) * float64(v)
	}
	maxZ := func(x []float32) float64 {
		m := 0.0
		for u := 0; u < n; u++ {
			m = math.Max(m, math.Abs(base.z(x, u, d)))
		}
		return m
	}
	prev := maxZ(x0)
	for _, tc := range []struct {
		weight float64
		steps  int
	}{{0.5, 1}, {1, 3}, {2, 10}} {
		p, err := NewDebiaser(DebiasOptions{Steps: 2, DtRev: 0.001, Reverse: ReverseODE, GuideWeight: tc.weight, GuideSteps: tc.steps})
		if err != nil {
			t.Fatal(err)
		}
		g := &planeGuide{w: w, b: 0.3}
		p.SetGuide(g)
		x, a := make([]float32, n*d), make([]float32, n*n)
		if err := p.Run(zeroModel{}, x0, a0, n, d, NewRand(1), x, a); err != nil {
			t.Fatal(err)
		}
		if g.calls == 0 || g.calls > 2*tc.steps {
			t.Errorf("weight %v steps %d: %d guide calls", tc.weight, tc.steps, g.calls)
		}
		got := maxZ(x)
		if !(got < prev) {
			t.Errorf("weight %v steps %d: max |z| %v, not below %v", tc.weight, tc.steps, got, prev)
		}
		prev = got
		// The edit is along w: x − x0·f has no component orthogonal to w
		// (f is the zero model's ODE mean factor).
		f := 1.0
		for range 2 {
			f *= 1 + 0.5*DefaultVPSDE().Beta(0.001)*0.001
		}
		for u := 0; u < n; u++ {
			var dot float64
			res := make([]float64, d)
			for j := 0; j < d; j++ {
				res[j] = float64(x[u*d+j]) - f*float64(x0[u*d+j])
				dot += res[j] * float64(w[j])
			}
			for j := 0; j < d; j++ {
				if orth := res[j] - dot/ww*float64(w[j]); math.Abs(orth) > 1e-5 {
					t.Fatalf("node %d: edit has an orthogonal component %v", u, orth)
				}
			}
		}
	}
	if prev > 0.05 {
		t.Errorf("strong guidance left max |z| = %v", prev)
	}
	if _, err := NewDebiaser(DebiasOptions{Steps: 1, GuideWeight: 1}); err == nil {
		t.Error("guidance without steps accepted")
	}
}
