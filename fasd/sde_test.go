package fasd

import (
	"math"
	"slices"
	"testing"
)

// Ensure the table of docs/method.md §4 (4 decimals, as printed).
func TestVPSDE_Table(t *testing.T) {
	s := DefaultVPSDE()
	tests := []struct{ t, beta, m, sigma float64 }{
		{1e-5, 0.100, 1.0000, 0.0010},
		{0.01, 0.109, 0.9995, 0.0323},
		{0.02, 0.118, 0.9989, 0.0467},
		{0.05, 0.145, 0.9969, 0.0781},
		{0.1, 0.190, 0.9928, 0.1200},
		{0.2, 0.280, 0.9812, 0.1931},
		{0.5, 0.550, 0.9220, 0.3873},
		{1.0, 1.000, 0.7596, 0.6504},
	}
	for _, tc := range tests {
		if got := s.Beta(tc.t); math.Abs(got-tc.beta) > 5e-4 {
			t.Errorf("β(%v) = %v, want %v", tc.t, got, tc.beta)
		}
		if got := s.Mean(tc.t); math.Abs(got-tc.m) > 5e-5 {
			t.Errorf("m(%v) = %v, want %v", tc.t, got, tc.m)
		}
		if got := s.Std(tc.t); math.Abs(got-tc.sigma) > 5e-5 {
			t.Errorf("σ(%v) = %v, want %v", tc.t, got, tc.sigma)
		}
	}
	// Five significant digits from §14.
	if m, sg := s.Mean(1), s.Std(1); math.Abs(m-0.75957) > 5e-6 || math.Abs(sg-0.65042) > 5e-6 {
		t.Errorf("m(1) = %v, σ(1) = %v", m, sg)
	}
}

// Ensure m(0) = 1, σ(0) = 0, m² + σ² = 1 and m decreasing on [0, 1].
func TestVPSDE_Identities(t *testing.T) {
	for _, s := range []VPSDE{DefaultVPSDE(), {BetaMin: 0.5, BetaMax: 20, NumScales: 100}} {
		if s.Mean(0) != 1 || s.Std(0) != 0 {
			t.Errorf("m(0) = %v, σ(0) = %v", s.Mean(0), s.Std(0))
		}
		prev := 1.0
		for i := 1; i <= 1000; i++ {
			tt := float64(i) / 1000
			m, sg := s.Mean(tt), s.Std(tt)
			if math.Abs(m*m+sg*sg-1) > 1e-14 {
				t.Fatalf("m²+σ² = %v at t=%v", m*m+sg*sg, tt)
			}
			if m >= prev {
				t.Fatalf("m not decreasing at t=%v", tt)
			}
			prev = m
		}
	}
}

// Ensure m(t) = exp(−½∫₀ᵗβ) by composite Simpson quadrature.
func TestVPSDE_MeanQuadrature(t *testing.T) {
	s := VPSDE{BetaMin: 0.1, BetaMax: 1, NumScales: 1000}
	for _, tt := range []float64{0.01, 0.3, 0.77, 1} {
		const n = 1000 // even
		h := tt / n
		sum := s.Beta(0) + s.Beta(tt)
		for i := 1; i < n; i++ {
			w := 2.0
			if i%2 == 1 {
				w = 4
			}
			sum += w * s.Beta(float64(i)*h)
		}
		integral := sum * h / 3
		if got, want := s.Mean(tt), math.Exp(-0.5*integral); math.Abs(got-want) > 1e-12 {
			t.Errorf("t=%v: m = %v, quadrature %v", tt, got, want)
		}
	}
}

// Ensure that Euler–Maruyama simulation of the forward SDE (10⁴ steps)
// matches the marginal mean m(t)·x₀ and variance σ_t².
func TestVPSDE_ForwardMonteCarlo(t *testing.T) {
	if testing.Short() {
		t.Skip("Monte-Carlo test")
	}
	s := DefaultVPSDE()
	const samples, steps, x0 = 4000, 10000, 1.5
	rng := NewRand(11)
	x := make([]float64, samples)
	for i := range x {
		x[i] = x0
	}
	dt := 1.0 / steps
	check := map[int]float64{steps / 4: 0.25, steps: 1}
	for k := range steps {
		tt := float64(k) * dt
		b := s.Beta(tt)
		sq := math.Sqrt(b * dt)
		for i := range x {
			x[i] += -0.5*b*x[i]*dt + sq*rng.NormFloat64()
		}
		if at, ok := check[k+1]; ok {
			mean, v := meanVar(x)
			wantM, wantV := s.Mean(at)*x0, s.Std(at)*s.Std(at)
			// Standard errors: √(v/n) for the mean, v·√(2/n) for the variance;
			// allow 4 of them plus the O(dt) discretisation bias.
			if math.Abs(mean-wantM) > 4*math.Sqrt(wantV/samples)+1e-3 {
				t.Errorf("t=%v: mean %v, want %v", at, mean, wantM)
			}
			if math.Abs(v-wantV) > 4*wantV*math.Sqrt(2.0/samples)+1e-3 {
				t.Errorf("t=%v: var %v, want %v", at, v, wantV)
			}
		}
	}
}

func meanVar(x []float64) (float64, float64) {
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	s := 0.0
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return m, s / float64(len(x))
}

// Ensure GDSS's discrete Langevin α.
func TestVPSDE_LangevinAlpha(t *testing.T) {
	s := DefaultVPSDE()
	for _, tc := range []struct{ t, want float64 }{
		{0, 1 - 0.1/1000},
		{1, 1 - 1.0/1000},
		{0.05, 1 - (0.1+0.9*49.0/999)/1000}, // ⌊0.05·999⌋ = 49
		{0.5, 1 - (0.1+0.9*499.0/999)/1000},
	} {
		if got := s.LangevinAlpha(tc.t); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("α(%v) = %v, want %v", tc.t, got, tc.want)
		}
		if math.Abs(s.LangevinAlpha(tc.t)-(1-s.Beta(tc.t)/1000)) > 1e-6 {
			t.Errorf("α(%v) far from 1 − β/1000", tc.t)
		}
	}
}

// Ensure the noise generators: symmetric zero-diagonal ε_A with one draw per
// pair, and standard-normal moments.
func TestNoise(t *testing.T) {
	const n = 40
	a := make([]float32, n*n)
	for i := range a {
		a[i] = 7
	}
	r1, r2 := NewRand(1), NewRand(1)
	FillSymNormal(r1, n, a)
	for i := range n {
		if a[i*n+i] != 0 {
			t.Fatal("diagonal not zero")
		}
		for j := range n {
			if a[i*n+j] != a[j*n+i] {
				t.Fatal("not symmetric")
			}
		}
	}
	up := make([]float32, n*(n-1)/2)
	FillNormal(r2, up)
	k := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			if a[i*n+j] != up[k] {
				t.Fatalf("pair (%d,%d) not drawn in row-major order", i, j)
			}
			k++
		}
	}
	if r1.Uint64() != r2.Uint64() {
		t.Error("FillSymNormal consumed a different number of draws")
	}
	one := []float32{5}
	r3, r4 := NewRand(2), NewRand(2)
	FillSymNormal(r3, 1, one)
	if one[0] != 0 || r3.Uint64() != r4.Uint64() {
		t.Error("single node must draw nothing and zero the entry")
	}
	x := make([]float32, 20000)
	FillNormal(NewRand(3), x)
	xs := make([]float64, len(x))
	for i, v := range x {
		xs[i] = float64(v)
	}
	m, v := meanVar(xs)
	if math.Abs(m) > 0.03 || math.Abs(v-1) > 0.04 {
		t.Errorf("mean %v var %v", m, v)
	}
	for range 1000 {
		if tt := SampleTime(r1, 0); tt < DefaultTimeEps || tt > 1 {
			t.Fatalf("time %v", tt)
		}
	}
}

// Ensure both γ formulas, the zero-gradient rule and the norm ratios.
func TestFairnessScale(t *testing.T) {
	eps := []float32{1, 2, 2}  // ‖ε‖ = 3
	g := []float32{0, 3, 4, 0} // ‖G‖ = 5
	const lambda, sigma = 0.1, 0.5
	if got, want := FairnessScale(GammaLiteral, lambda, sigma, eps, g), lambda*(sigma*sigma*9)/25; math.Abs(got-want) > 1e-15 {
		t.Errorf("literal γ = %v, want %v", got, want)
	}
	if got, want := FairnessScale(GammaLinear, lambda, sigma, eps, g), lambda*sigma*3/5; math.Abs(got-want) > 1e-15 {
		t.Errorf("linear γ = %v, want %v", got, want)
	}
	tiny := []float32{1e-7, 0}
	if FairnessScale(GammaLiteral, lambda, sigma, eps, tiny) != 0 || FairnessScale(GammaLinear, lambda, sigma, eps, nil) != 0 ||
		FairnessScale(GammaLiteral, 0, sigma, eps, g) != 0 {
		t.Error("γ must be 0 for ‖G‖² < 1e-12, nil G or λ = 0")
	}
}

func perturbFixture(n, d int, seed uint64) *PerturbInput {
	rng := NewRand(seed)
	in := &PerturbInput{N: n, D: d, X0: make([]float32, n*d), A0: make([]float32, n*n), GX: make([]float32, n*d), GA: make([]float32, n*n)}
	for i := range in.X0 {
		in.X0[i] = float32(2*rng.Float64() - 1)
		in.GX[i] = float32(rng.NormFloat64() * 0.1)
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			if rng.Float64() < 0.3 {
				in.A0[i*n+j], in.A0[j*n+i] = 1, 1
			}
			gv := float32(rng.NormFloat64() * 0.05)
			in.GA[i*n+j], in.GA[j*n+i] = gv, gv
		}
	}
	return in
}

// Ensure that the perturbed subgraph and its targets satisfy
// (X_t − m·X₀)/σ = T_X, that A_t is symmetric with a zero diagonal, the ratio
// diagnostics, and the draw order.
func TestPerturb_Targets(t *testing.T) {
	in := perturbFixture(9, 5, 1)
	for _, mode := range []GammaMode{GammaLiteral, GammaLinear} {
		for _, tt := range []float64{1e-5, 0.05, 0.5, 1} {
			opt := &PerturbOptions{LambdaX: 0.1, LambdaA: 10, Gamma: mode}
			var p Perturbation
			if err := Perturb(opt, in, tt, NewRand(4), &p); err != nil {
				t.Fatal(err)
			}
			for i := range p.Xt {
				implied := (float64(p.Xt[i]) - p.MeanX*float64(in.X0[i])) / p.SigmaX
				// float32 rounding of X_t, divided by σ.
				if tol := 1e-6 * (1 + math.Abs(float64(p.Xt[i]))) / p.SigmaX; math.Abs(implied-float64(p.TX[i])) > tol {
					t.Fatalf("%v t=%v: implied target %v, T_X %v", mode, tt, implied, p.TX[i])
				}
			}
			n := in.N
			for i := range n {
				if p.At[i*n+i] != 0 || p.TA[i*n+i] != 0 {
					t.Fatal("A_t or T_A diagonal not zero")
				}
				for j := range n {
					if p.At[i*n+j] != p.At[j*n+i] || p.TA[i*n+j] != p.TA[j*n+i] {
						t.Fatal("A_t or T_A not symmetric")
					}
					implied := (float64(p.At[i*n+j]) - p.MeanA*float64(in.A0[i*n+j])) / p.SigmaA
					if tol := 1e-6 * (1 + math.Abs(float64(p.At[i*n+j]))) / p.SigmaA; math.Abs(implied-float64(p.TA[i*n+j])) > tol {
						t.Fatalf("implied A target %v, T_A %v", implied, p.TA[i*n+j])
					}
				}
			}
			wantRX := p.GammaX * Norm(in.GX) / (p.SigmaX * Norm(p.EpsX))
			if math.Abs(p.RatioX-wantRX) > 1e-9*wantRX {
				t.Errorf("ratio X %v, want %v", p.RatioX, wantRX)
			}
			if mode == GammaLinear && math.Abs(p.RatioA-10) > 1e-9 {
				t.Errorf("linear ratio A %v, want λ_A = 10", p.RatioA)
			}
			if mode == GammaLiteral {
				// ‖γG‖/‖σε‖ = λ·σ·‖ε‖/‖G‖.
				want := 0.1 * p.SigmaX * Norm(p.EpsX) / Norm(in.GX)
				if math.Abs(p.RatioX-want) > 1e-9*want {
					t.Errorf("literal ratio X %v, want %v", p.RatioX, want)
				}
			}
			// Draw order: ε_X then ε_A from the same generator.
			r := NewRand(4)
			ex := make([]float32, len(p.EpsX))
			ea := make([]float32, len(p.EpsA))
			FillNormal(r, ex)
			FillSymNormal(r, n, ea)
			if !slices.Equal(ex, p.EpsX) || !slices.Equal(ea, p.EpsA) {
				t.Fatal("noise not drawn as ε_X then ε_A")
			}
		}
	}
	if err := Perturb(&PerturbOptions{}, in, 0, NewRand(1), &Perturbation{}); err == nil {
		t.Error("t = 0 accepted")
	}
	bad := *in
	bad.GX = bad.GX[:3]
	if err := Perturb(&PerturbOptions{}, &bad, 0.5, NewRand(1), &Perturbation{}); err == nil {
		t.Error("short G_X accepted")
	}
	if err := (&PerturbOptions{LambdaX: -1, Gamma: 5, SDEA: VPSDE{BetaMin: 2, BetaMax: 1, NumScales: 10}}).Validate(); err == nil {
		t.Error("bad options accepted")
	}
}

// Ensure that with γ = 0 the zero network's loss has expectation ½·N·D for X
// and ½·N·(N−1) for A (docs/method.md §14).
func TestPerturb_ZeroNetworkLoss(t *testing.T) {
	in := perturbFixture(7, 4, 2)
	in.GX, in.GA = nil, nil
	rng := NewRand(5)
	var p Perturbation
	const draws = 4000
	var lx, la float64
	for range draws {
		if err := Perturb(&PerturbOptions{LambdaX: 1, LambdaA: 1}, in, SampleTime(rng, 0), rng, &p); err != nil {
			t.Fatal(err)
		}
		if p.GammaX != 0 || p.GammaA != 0 {
			t.Fatal("γ must be 0 without gradients")
		}
		lx += 0.5 * sqNorm(p.TX)
		la += 0.5 * sqNorm(p.TA)
	}
	lx /= draws
	la /= draws
	// loss_X = ½χ²_28 (std √14) and loss_A = χ²_21 (std √42): allow 5 standard
	// errors of the mean over the draws.
	if want := 0.5 * 7 * 4; math.Abs(lx-want) > 5*math.Sqrt(14)/math.Sqrt(draws) {
		t.Errorf("E[loss_X] = %v, want %v", lx, want)
	}
	if want := 0.5 * 7 * 6; math.Abs(la-want) > 5*math.Sqrt(42)/math.Sqrt(draws) {
		t.Errorf("E[loss_A] = %v, want %v", la, want)
	}
}
