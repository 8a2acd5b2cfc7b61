package fasd

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
)

// zeroModel predicts zero noise.
type zeroModel struct{}

func (zeroModel) Predict(_ float64, _, _ []float32, _, _ int, outX, outA []float32) error {
	clear(outX)
	clear(outA)
	return nil
}

// linearModel predicts out = c·state (A: off-diagonal), a smooth stand-in.
type linearModel struct{ c float32 }

func (m linearModel) Predict(_ float64, x, a []float32, n, _ int, outX, outA []float32) error {
	for i := range x {
		outX[i] = m.c * x[i]
	}
	for i := range a {
		outA[i] = m.c * a[i]
	}
	zeroDiag(outA, n)
	return nil
}

// gaussOracle is the exact ε-prediction for data X₀ ~ N(0, s²) entrywise:
// X_t ~ N(0, v) with v = m²s² + σ², score −x/v, so out = −σ·score = σx/v.
type gaussOracle struct {
	sdeX, sdeA VPSDE
	sX, sA     float64
}

func (g gaussOracle) Predict(t float64, x, a []float32, n, _ int, outX, outA []float32) error {
	f := func(sde VPSDE, s float64) float64 {
		m, sg := sde.Mean(t), sde.Std(t)
		return sg / (m*m*s*s + sg*sg)
	}
	kx, ka := f(g.sdeX, g.sX), f(g.sdeA, g.sA)
	for i := range x {
		outX[i] = float32(kx * float64(x[i]))
	}
	for i := range a {
		outA[i] = float32(ka * float64(a[i]))
	}
	zeroDiag(outA, n)
	return nil
}

// Ensure the three reverse grids.
func TestDebiasOptions_Grid(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  DebiasOptions
		want []Step
	}{
		{"fixed", DebiasOptions{Steps: 3}, []Step{{0.03, 0.01}, {0.02, 0.01}, {0.01, 0.01}}},
		{"fixed-dt", DebiasOptions{Steps: 2, DtRev: 0.05}, []Step{{0.1, 0.05}, {0.05, 0.05}}},
		{"span", DebiasOptions{Steps: 4, Schedule: ScheduleSpan, TStart: 1}, []Step{{1, 0.25}, {0.75, 0.25}, {0.5, 0.25}, {0.25, 0.25}}},
		{"gdss", DebiasOptions{Steps: 3, Schedule: ScheduleGDSSFull}, []Step{{1, 1.0 / 3}, {0.50005, 1.0 / 3}, {1e-4, 1.0 / 3}}},
		{"gdss1", DebiasOptions{Steps: 1, Schedule: ScheduleGDSSFull}, []Step{{1, 1}}},
	} {
		p, err := NewDebiaser(tc.opt)
		if err != nil {
			t.Fatal(tc.name, err)
		}
		got := p.Grid()
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %v", tc.name, got)
		}
		for i := range got {
			if math.Abs(got[i].T-tc.want[i].T) > 1e-12 || math.Abs(got[i].Dt-tc.want[i].Dt) > 1e-12 {
				t.Errorf("%s: step %d = %+v, want %+v", tc.name, i, got[i], tc.want[i])
			}
		}
	}
	for name, o := range map[string]DebiasOptions{
		"nosteps": {},
		"toolong": {Steps: 200, DtRev: 0.01},
		"negdt":   {Steps: 2, DtRev: -1},
		"span":    {Steps: 2, Schedule: ScheduleSpan},
		"sched":   {Steps: 2, Schedule: 9},
		"order":   {Steps: 2, Order: 9},
		"init":    {Steps: 2, Init: 9},
		"snr":     {Steps: 2, SNRX: -1},
		"sde":     {Steps: 2, SDEX: VPSDE{BetaMin: 1, BetaMax: 0.5, NumScales: 10}},
	} {
		if _, err := NewDebiaser(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func randomState(n, d int, seed uint64) (x, a []float32) {
	rng := NewRand(seed)
	x = make([]float32, n*d)
	for i := range x {
		x[i] = float32(2*rng.Float64() - 1)
	}
	a = make([]float32, n*n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			if rng.Float64() < 0.4 {
				a[i*n+j], a[j*n+i] = 1, 1
			}
		}
	}
	return x, a
}

// Ensure that with a zero network one predictor mean step (last iteration:
// no noise; corrector skipped since ‖S‖ = 0) is exactly (1 + ½βΔt)·X, and
// likewise for A's off-diagonal entries.
func TestDebiaser_ZeroNetworkMeanStep(t *testing.T) {
	const n, d = 6, 4
	x0, a0 := randomState(n, d, 1)
	for _, order := range []Order{OrderPC, OrderCP} {
		p, err := NewDebiaser(DebiasOptions{Steps: 1, DtRev: 0.02, Order: order})
		if err != nil {
			t.Fatal(err)
		}
		x, a := make([]float32, n*d), make([]float32, n*n)
		if err := p.Run(zeroModel{}, x0, a0, n, d, NewRand(1), x, a); err != nil {
			t.Fatal(err)
		}
		f := 1 + 0.5*DefaultVPSDE().Beta(0.02)*0.02
		for i := range x {
			if want := float32(float64(x0[i]) * f); math.Abs(float64(x[i]-want)) > 1e-7*math.Abs(float64(want)) {
				t.Fatalf("X[%d] = %v, want %v", i, x[i], want)
			}
		}
		for i := range a {
			if want := float32(float64(a0[i]) * f); a[i] != want {
				t.Fatalf("A[%d] = %v, want %v", i, a[i], want)
			}
		}
	}
}

// Ensure that ω and the update match the Langevin formula for known S and z.
func TestLangevinStep_Formula(t *testing.T) {
	x := []float32{1, 2, 3}
	s := []float32{0.5, -1, 2}  // ‖s‖² = 5.25
	z := []float32{1, -2, 0.25} // ‖z‖² = 5.0625
	const alpha, snr, scale = 0.999, 0.05, 0.7
	wantOmega := 2 * alpha * snr * snr * 5.0625 / 5.25
	got := slices.Clone(x)
	omega := langevinStep(got, s, z, alpha, snr, scale, true)
	if math.Abs(omega-wantOmega) > 1e-15 {
		t.Fatalf("ω = %v, want %v", omega, wantOmega)
	}
	for i := range x {
		want := float64(x[i]) + wantOmega*float64(s[i]) + math.Sqrt(2*wantOmega)*scale*float64(z[i])
		if math.Abs(float64(got[i])-want) > 1e-6 {
			t.Errorf("x[%d] = %v, want %v", i, got[i], want)
		}
	}
	mean := slices.Clone(x)
	langevinStep(mean, s, z, alpha, snr, scale, false)
	for i := range x {
		if want := float64(x[i]) + wantOmega*float64(s[i]); math.Abs(float64(mean[i])-want) > 1e-6 {
			t.Errorf("mean x[%d] = %v, want %v", i, mean[i], want)
		}
	}
	still := slices.Clone(x)
	if langevinStep(still, []float32{0, 0, 0}, z, alpha, snr, scale, true) != 0 || !slices.Equal(still, x) {
		t.Error("zero score must skip the step")
	}
}

// runOracle runs the full reverse sampler (1000 steps from t = 1) on exact
// samples of the t = 1 marginal and returns the sample variances of the
// resulting X and of A's upper triangle.
func runOracle(t *testing.T, opt DebiasOptions, sX, sA float64) (vX, vA float64) {
	t.Helper()
	const n, d = 60, 80
	sde := DefaultVPSDE()
	rng := NewRand(21)
	m1, s1 := sde.Mean(1), sde.Std(1)
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(math.Sqrt(m1*m1*sX*sX+s1*s1) * rng.NormFloat64())
	}
	a := make([]float32, n*n)
	FillSymNormal(rng, n, a)
	for i := range a {
		a[i] *= float32(math.Sqrt(m1*m1*sA*sA + s1*s1))
	}
	p, err := NewDebiaser(opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(gaussOracle{sde, sde, sX, sA}, x, a, n, d, rng, x, a); err != nil {
		return math.Inf(1), math.Inf(1)
	}
	xs := make([]float64, len(x))
	for i, v := range x {
		xs[i] = float64(v)
	}
	_, vX = meanVar(xs)
	var up []float64
	for i := range n {
		for j := i + 1; j < n; j++ {
			up = append(up, float64(a[i*n+j]))
		}
	}
	_, vA = meanVar(up)
	return vX, vA
}

// Ensure the Gaussian-oracle test of docs/method.md §14: with the exact score of
// N(0, s²) data, the full reverse sampler from t = 1 recovers variance s²
// for X and A, in both orders and without corrector; feeding the raw network
// output instead of −out/σ must fail it.
func TestDebiaser_GaussianOracle(t *testing.T) {
	const sX, sA = 0.5, 2.0
	for _, tc := range []struct {
		name string
		opt  DebiasOptions
	}{
		{"PC", DebiasOptions{Steps: 1000, Schedule: ScheduleGDSSFull}},
		{"CP", DebiasOptions{Steps: 1000, Schedule: ScheduleGDSSFull, Order: OrderCP}},
		{"P-only", DebiasOptions{Steps: 1000, Schedule: ScheduleGDSSFull, NoCorrector: true}},
	} {
		vX, vA := runOracle(t, tc.opt, sX, sA)
		t.Logf("%s: var X %.4f / %.4f, var A %.4f / %.4f", tc.name, vX, sX*sX, vA, sA*sA)
		// Sampling error of a variance over 4800 (X) and 1770 (A) values is
		// 2 % and 3.4 %; allow 10 % for it plus the Euler/Langevin bias.
		if math.Abs(vX/(sX*sX)-1) > 0.10 || math.Abs(vA/(sA*sA)-1) > 0.10 {
			t.Errorf("%s: variances X %.4f (want %.4f), A %.4f (want %.4f)", tc.name, vX, sX*sX, vA, sA*sA)
		}
		raw := tc.opt
		raw.rawScore = true
		rX, rA := runOracle(t, raw, sX, sA)
		if math.Abs(rX/(sX*sX)-1) < 0.5 && math.Abs(rA/(sA*sA)-1) < 0.5 {
			t.Errorf("%s: raw output as score passed the oracle test (X %.4f, A %.4f)", tc.name, rX, rA)
		}
	}
}

// Ensure that scale_eps = 0.7 (GDSS's config) is not an exact sampler: the
// corrector's stationary law has variance ≈ 0.7²·v, so after 1000 corrector
// steps the recovered variance is about half of s².
func TestDebiaser_GaussianOracleScaleEps(t *testing.T) {
	const sX, sA = 0.5, 2.0
	vX, vA := runOracle(t, DebiasOptions{Steps: 1000, Schedule: ScheduleGDSSFull, ScaleEps: Some(0.7)}, sX, sA)
	if math.Abs(vX/(sX*sX)-0.49) > 0.1 || math.Abs(vA/(sA*sA)-0.49) > 0.1 {
		t.Errorf("variance ratios X %.3f, A %.3f, want ≈ 0.49", vX/(sX*sX), vA/(sA*sA))
	}
}

// Ensure determinism per seed, that the generator consumption does not depend
// on the model, in-place use, and that another seed gives another result.
func TestDebiaser_Determinism(t *testing.T) {
	const n, d = 8, 5
	x0, a0 := randomState(n, d, 2)
	for _, init := range []Init{InitClean, InitForward} {
		opt := DebiasOptions{Steps: 5, Init: init}
		p, _ := NewDebiaser(opt)
		run := func(m ScoreModel, seed uint64) ([]float32, []float32, uint64) {
			x, a := make([]float32, n*d), make([]float32, n*n)
			rng := NewRand(seed)
			if err := p.Run(m, x0, a0, n, d, rng, x, a); err != nil {
				t.Fatal(err)
			}
			return x, a, rng.Uint64()
		}
		x1, a1, next1 := run(linearModel{0.3}, 7)
		x2, a2, next2 := run(linearModel{0.3}, 7)
		if !slices.Equal(x1, x2) || !slices.Equal(a1, a2) {
			t.Fatal("not deterministic")
		}
		_, _, next3 := run(zeroModel{}, 7)
		if next1 != next2 || next1 != next3 {
			t.Error("generator consumption depends on the model")
		}
		x4, _, _ := run(linearModel{0.3}, 8)
		if slices.Equal(x1, x4) {
			t.Error("seed has no effect")
		}
		xi, ai := slices.Clone(x0), slices.Clone(a0)
		if err := p.Run(linearModel{0.3}, xi, ai, n, d, NewRand(7), xi, ai); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(xi, x1) || !slices.Equal(ai, a1) {
			t.Error("in-place run differs")
		}
		for i := range n {
			if a1[i*n+i] != 0 {
				t.Fatal("diagonal not zero")
			}
			for j := range n {
				if a1[i*n+j] != a1[j*n+i] {
					t.Fatal("A not symmetric")
				}
			}
		}
	}
}

// Ensure that InitForward diffuses to the start time before the reverse run.
func TestDebiaser_InitForward(t *testing.T) {
	const n, d = 3, 2
	x0, a0 := randomState(n, d, 3)
	p, _ := NewDebiaser(DebiasOptions{Steps: 1, DtRev: 0.1, Init: InitForward, NoCorrector: true})
	x, a := make([]float32, n*d), make([]float32, n*n)
	if err := p.Run(zeroModel{}, x0, a0, n, d, NewRand(4), x, a); err != nil {
		t.Fatal(err)
	}
	sde := DefaultVPSDE()
	rng := NewRand(4)
	ex, ea := make([]float32, n*d), make([]float32, n*n)
	FillNormal(rng, ex)
	FillSymNormal(rng, n, ea)
	f := 1 + 0.5*sde.Beta(0.1)*0.1
	for i := range x {
		start := float32(sde.Mean(0.1)*float64(x0[i]) + sde.Std(0.1)*float64(ex[i]))
		if want := float64(start) * f; math.Abs(float64(x[i])-want) > 1e-6 {
			t.Fatalf("X[%d] = %v, want %v", i, x[i], want)
		}
	}
	for i := range a {
		start := float32(sde.Mean(0.1)*float64(a0[i]) + sde.Std(0.1)*float64(ea[i]))
		if want := float64(start) * f; math.Abs(float64(a[i])-want) > 1e-6 {
			t.Fatalf("A[%d] = %v, want %v", i, a[i], want)
		}
	}
}

// Ensure single-node subgraphs work and leave A at zero.
func TestDebiaser_SingleNode(t *testing.T) {
	p, _ := NewDebiaser(DebiasOptions{Steps: 5})
	x0 := []float32{0.5, -0.2, 0.9}
	x, a := make([]float32, 3), []float32{0}
	if err := p.Run(linearModel{0.5}, x0, []float32{0}, 1, 3, NewRand(1), x, a); err != nil {
		t.Fatal(err)
	}
	if a[0] != 0 || slices.Equal(x, x0) {
		t.Errorf("x %v a %v", x, a)
	}
}

// Ensure that with Δt_rev → 0 the output stays close to the input.
func TestDebiaser_SmallStepKeepsInput(t *testing.T) {
	const n, d = 10, 6
	x0, a0 := randomState(n, d, 5)
	p, _ := NewDebiaser(DebiasOptions{Steps: 5, DtRev: 1e-6})
	x, a := make([]float32, n*d), make([]float32, n*n)
	if err := p.Run(linearModel{0.3}, x0, a0, n, d, NewRand(1), x, a); err != nil {
		t.Fatal(err)
	}
	if r := FeatureChange(x0, x); r > 0.01 {
		t.Errorf("relative feature change %v", r)
	}
	if err := PostProcess(a, n, nil); err != nil {
		t.Fatal(err)
	}
	if st := CompareEdges(a0, a, n); st.Added != 0 || st.Removed != 0 {
		t.Errorf("edges changed: %+v", st)
	}
}

type errModel struct{}

func (errModel) Predict(float64, []float32, []float32, int, int, []float32, []float32) error {
	return errors.New("boom")
}

type nanModel struct{}

func (nanModel) Predict(_ float64, _, _ []float32, _, _ int, outX, outA []float32) error {
	for i := range outX {
		outX[i] = float32(math.NaN())
	}
	clear(outA)
	return nil
}

// Ensure errors from the model, bad shapes and non-finite outputs surface.
func TestDebiaser_Errors(t *testing.T) {
	p, _ := NewDebiaser(DebiasOptions{Steps: 2})
	x, a := make([]float32, 4), make([]float32, 4)
	if err := p.Run(errModel{}, x, a, 2, 2, NewRand(1), x, a); err == nil || err.Error() == "boom" {
		t.Errorf("model error: %v", err)
	}
	if err := p.Run(zeroModel{}, x, a, 2, 3, NewRand(1), x, a); !errors.Is(err, ErrShape) {
		t.Errorf("shape: %v", err)
	}
	if err := p.Run(nanModel{}, x, a, 2, 2, NewRand(1), x, a); !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN: %v", err)
	}
}

// batchLinear implements BatchScoreModel by looping linearModel, counting
// calls.
type batchLinear struct {
	linearModel
	calls *int
}

func (m batchLinear) PredictBatch(t float64, xs, as [][]float32, ns []int, d int, outXs, outAs [][]float32) error {
	*m.calls++
	for k := range xs {
		if err := m.Predict(t, xs[k], as[k], ns[k], d, outXs[k], outAs[k]); err != nil {
			return err
		}
	}
	return nil
}

// Ensure that a batched run equals per-subgraph runs bit for bit (with and
// without a BatchScoreModel), for mixed sizes including a single node, and
// that a cancelled context stops the run.
func TestDebiaser_RunBatchEqualsRun(t *testing.T) {
	const d = 4
	sizes := []int{5, 1, 9, 3}
	for _, opt := range []DebiasOptions{{Steps: 4}, {Steps: 3, Order: OrderCP, Init: InitForward}} {
		p, _ := NewDebiaser(opt)
		want := make([][2][]float32, len(sizes))
		items := make([]DebiasItem, len(sizes))
		for k, n := range sizes {
			x0, a0 := randomState(n, d, uint64(10+k))
			x, a := make([]float32, n*d), make([]float32, n*n)
			if err := p.Run(linearModel{0.2}, x0, a0, n, d, NewRand(uint64(k)), x, a); err != nil {
				t.Fatal(err)
			}
			want[k] = [2][]float32{x, a}
			items[k] = DebiasItem{N: n, X0: x0, A0: a0, DstX: make([]float32, n*d), DstA: make([]float32, n*n)}
		}
		calls := 0
		for _, m := range []ScoreModel{linearModel{0.2}, batchLinear{linearModel{0.2}, &calls}} {
			for k := range items {
				items[k].Rng = NewRand(uint64(k))
			}
			if err := p.RunBatch(context.Background(), m, items, d); err != nil {
				t.Fatal(err)
			}
			for k := range items {
				if !slices.Equal(items[k].DstX, want[k][0]) || !slices.Equal(items[k].DstA, want[k][1]) {
					t.Fatalf("%T: item %d differs from Run", m, k)
				}
			}
		}
		if calls != 2*opt.Steps {
			t.Errorf("PredictBatch called %d times, want %d", calls, 2*opt.Steps)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := p.RunBatch(ctx, linearModel{0.2}, items, d); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v", err)
		}
		items[0].Rng = nil
		if err := p.RunBatch(context.Background(), linearModel{0.2}, items, d); !errors.Is(err, ErrShape) {
			t.Errorf("nil rng: %v", err)
		}
	}
}

// Ensure that an explicit zero corrector noise scale is honoured and is not
// the default: the unset scale runs as Some(DefaultScaleEps), and Some(0)
// runs as the smallest positive scale did (the sentinel older code used).
func TestDebiasOptions_ExplicitZeroScaleEps(t *testing.T) {
	const n, d = 5, 3
	x0, a0 := randomState(n, d, 2)
	run := func(scale Opt[float64]) []float32 {
		t.Helper()
		p, err := NewDebiaser(DebiasOptions{Steps: 2, ScaleEps: scale})
		if err != nil {
			t.Fatal(err)
		}
		x, a := make([]float32, n*d), make([]float32, n*n)
		if err := p.Run(linearModel{c: 0.5}, x0, a0, n, d, NewRand(7), x, a); err != nil {
			t.Fatal(err)
		}
		return append(x, a...)
	}
	unset, def, zero := run(Opt[float64]{}), run(Some(DefaultScaleEps)), run(Some(0.0))
	if !slices.Equal(unset, def) {
		t.Error("unset scale_eps differs from the default")
	}
	if slices.Equal(zero, def) {
		t.Error("scale_eps = 0 runs as the default")
	}
	if !slices.Equal(zero, run(Some(math.SmallestNonzeroFloat64))) {
		t.Error("scale_eps = 0 differs from the smallest positive scale")
	}
	if err := (DebiasOptions{Steps: 2, ScaleEps: Some(-1.0)}).Validate(); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("negative scale: %v", err)
	}
}
