package pipeline

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// aggProbeAcc is the class-balanced accuracy of the linear_agg guide (w over
// [x_u, m_u], b) on the distinct nodes of v with known s, each read from
// the first subgraph that shows it, as trainLinearGuides reads them.
func aggProbeAcc(t testing.TB, v *view, d int, w []float32, b float32) float64 {
	t.Helper()
	var hit, tot [2]float64
	seen := map[uint32]bool{}
	for i, g := range v.sgs {
		x, err := v.x(i, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := v.a(i, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, _, _ := neighbourMean(nil, nil, nil, x, a, g.N(), d)
		for u := 0; u < g.N(); u++ {
			if g.S[u] < 0 || seen[g.Nodes[u]] {
				continue
			}
			seen[g.Nodes[u]] = true
			z := float64(b)
			for j := 0; j < d; j++ {
				z += float64(w[j])*float64(x[u*d+j]) + float64(w[d+j])*float64(m[u*d+j])
			}
			s := g.S[u]
			tot[s]++
			if (z > 0) == (s == 1) {
				hit[s]++
			}
		}
	}
	return (hit[0]/tot[0] + hit[1]/tot[1]) / 2
}

// ensure that neighbourMean is the weighted mean of a node's own and its
// neighbours' features, negative weights counting as no edge.
func TestNeighbourMean(t *testing.T) {
	const d = 2
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	cases := []struct {
		name string
		a    []float32
		want []float32
		deg  []float64
	}{
		{"no edges", make([]float32, 16), x, []float64{1, 1, 1, 1}},
		{"path 0-1-2, weight 1", []float32{
			0, 1, 0, 0,
			1, 0, 1, 0,
			0, 1, 0, 0,
			0, 0, 0, 0}, []float32{2, 3, 3, 4, 4, 5, 7, 8}, []float64{2, 3, 2, 1}},
		{"weight 0.5 and a negative entry", []float32{
			0, 0.5, 0, -1,
			0.5, 0, 0, 0,
			0, 0, 0, 0,
			-1, 0, 0, 0}, []float32{(1 + 0.5*3) / 1.5, (2 + 0.5*4) / 1.5, (3 + 0.5*1) / 1.5, (4 + 0.5*2) / 1.5, 5, 6, 7, 8}, []float64{1.5, 1.5, 1, 1}},
	}
	for _, c := range cases {
		m, deg, _ := neighbourMean(nil, nil, nil, x, c.a, 4, d)
		for i := range c.want {
			if math.Abs(float64(m[i]-c.want[i])) > 1e-6 {
				t.Errorf("%s: m[%d] = %v, want %v", c.name, i, m[i], c.want[i])
			}
		}
		for u := range c.deg {
			if deg[u] != c.deg[u] {
				t.Errorf("%s: deg[%d] = %v, want %v", c.name, u, deg[u], c.deg[u])
			}
		}
	}
}

// ensure that the linear_agg guide's ∇_X L is the gradient of its loss
// (central differences), neighbours' terms included, on states whose
// adjacency has fractional and negative weights.
func TestLinearAggGuide_GradFiniteDiff(t *testing.T) {
	const d, rounds = 4, 2
	rng := rand.New(rand.NewPCG(5, 6))
	ps := newGuideParams(rounds, guideWidth(GuideLinearAgg, d))
	for _, p := range ps {
		for j := range p.Value.Data {
			p.Value.Data[j] = float32(0.7 * rng.NormFloat64())
		}
	}
	for _, n := range []int{1, 2, 5, 9} {
		x := make([]float32, n*d)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		a := make([]float32, n*n)
		for u := 0; u < n; u++ {
			for v := u + 1; v < n; v++ {
				w := float32(rng.Float64()*1.4 - 0.4) // some negative: no edge
				a[u*n+v], a[v*n+u] = w, w
			}
		}
		g := newLinearGuide(ps, 0, GuideLinearAgg) // tol 0: L is smooth
		gx, ga := make([]float32, n*d), make([]float32, n*n)
		if _, err := g.Grad(x, a, n, d, gx, ga); err != nil {
			t.Fatal(err)
		}
		loss := func(x []float32) float64 {
			l, err := newLinearGuide(ps, 0, GuideLinearAgg).Grad(x, a, n, d, make([]float32, n*d), make([]float32, n*n))
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		const h = 1e-2
		for i := range x {
			xp, xm := append([]float32(nil), x...), append([]float32(nil), x...)
			xp[i] += h
			xm[i] -= h
			fd := (loss(xp) - loss(xm)) / float64(xp[i]-xm[i])
			if math.Abs(fd-float64(gx[i])) > 1e-3*(1+math.Abs(fd)) {
				t.Errorf("n %d: ∂L/∂x[%d] = %v, central difference %v", n, i, gx[i], fd)
			}
		}
		for i, v := range ga {
			if v != 0 {
				t.Fatalf("n %d: ∇A[%d] = %v, want 0 (the guide moves features only)", n, i, v)
			}
		}
	}
}

// ensure that a linear_agg guide whose neighbourhood weights are 0 is the
// linear guide of its feature weights, bit for bit.
func TestLinearAggGuide_ZeroMeanWeightsIsLinear(t *testing.T) {
	const d, rounds, n = 5, 3, 7
	rng := rand.New(rand.NewPCG(8, 9))
	lin, agg := newGuideParams(rounds, d), newGuideParams(rounds, 2*d)
	for r := 0; r < rounds; r++ {
		for j := 0; j < d; j++ {
			w := float32(rng.NormFloat64())
			lin[2*r].Value.Data[j], agg[2*r].Value.Data[j] = w, w
		}
		b := float32(rng.NormFloat64())
		lin[2*r+1].Value.Data[0], agg[2*r+1].Value.Data[0] = b, b
	}
	x, a := make([]float32, n*d), make([]float32, n*n)
	for i := range x {
		x[i] = float32(2 * rng.NormFloat64())
	}
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			if rng.Float64() < 0.5 {
				a[u*n+v], a[v*n+u] = 1, 1
			}
		}
	}
	gl, ga := make([]float32, n*d), make([]float32, n*d)
	ll, err := newLinearGuide(lin, 0.05, GuideLinear).Grad(x, a, n, d, gl, make([]float32, n*n))
	if err != nil {
		t.Fatal(err)
	}
	la, err := newLinearGuide(agg, 0.05, GuideLinearAgg).Grad(x, a, n, d, ga, make([]float32, n*n))
	if err != nil {
		t.Fatal(err)
	}
	if ll != la {
		t.Errorf("loss %v (linear_agg) against %v (linear)", la, ll)
	}
	for i := range gl {
		if gl[i] != ga[i] {
			t.Fatalf("∇x[%d] = %v (linear_agg) against %v (linear)", i, ga[i], gl[i])
		}
	}
	// Weights of the wrong width are an error, not a silent misread.
	if _, err := newLinearGuide(lin, 0.05, GuideLinearAgg).Grad(x, a, n, d, ga, make([]float32, n*n)); !errors.Is(err, ErrModels) {
		t.Errorf("linear_agg guide over %d weights for %d features: err %v, want ErrModels", d, d, err)
	}
}

// ensure that on a graph whose features carry s only weakly and whose edges
// follow s, the linear_agg guides read s better than the linear ones (the
// neighbourhood mean averages the noise away), that their fit is
// deterministic, that guidance with them removes what a fresh linear_agg
// probe reads, and that they survive the model bundle at their width.
func TestLinearAggGuides(t *testing.T) {
	tg := newToyGraph(300, 8, 8, 0.9, 0, 0.4, 13)
	in := tg.input(t, 1, 6)
	sgs, _, _, _, err := in.validate()
	if err != nil {
		t.Fatal(err)
	}
	v := originalView(sgs, in.D, nil)
	ctx := context.Background()
	lin, err := trainLinearGuides(ctx, v, in.D, 1, GuideLinear)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := trainLinearGuides(ctx, v, in.D, 2, GuideLinearAgg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(ps[0].Value.Data), 2*in.D; got != want {
		t.Fatalf("linear_agg guide has %d weights, want %d", got, want)
	}
	linAcc := probeAcc(v, in.D, lin[0].Value.Data, lin[1].Value.Data[0])
	before := aggProbeAcc(t, v, in.D, ps[0].Value.Data, ps[1].Value.Data[0])
	t.Logf("balanced accuracy of s: %.3f from the features, %.3f with the neighbourhood mean beside them", linAcc, before)
	if !(before > linAcc+0.03) {
		t.Errorf("the linear_agg guide reads s at %.3f, the linear one at %.3f: the mean adds nothing", before, linAcc)
	}
	again, _ := trainLinearGuides(ctx, v, in.D, 2, GuideLinearAgg)
	for i := range ps {
		for j := range ps[i].Value.Data {
			if ps[i].Value.Data[j] != again[i].Value.Data[j] {
				t.Fatal("guide training is not deterministic")
			}
		}
	}

	m, deb, fresh := guidedDebias(t, in, v, GuideLinearAgg, ps)
	after := aggProbeAcc(t, deb, in.D, fresh[0].Value.Data, fresh[1].Value.Data[0])
	t.Logf("a fresh linear_agg probe: %.3f before guidance, %.3f after", before, after)
	if !(after < before-0.1) {
		t.Errorf("a fresh linear_agg probe still reads s at %.3f (before %.3f)", after, before)
	}

	m2 := guidesRoundTrip(t, m, ps)
	if _, err := m2.NewEngine(); err != nil {
		t.Fatalf("engine from the bundle: %v", err)
	}
}

// ensure that one run's settings share one kind of linear guide.
func TestGuideNetOf(t *testing.T) {
	mk := func(net GuideNet, w float64) *Config {
		c := Config{}
		c.Debias.GuideWeight, c.Debias.GuideNet, c.Debias.GuideRounds = w, net, 2
		return &c
	}
	cases := []struct {
		name string
		cfgs []*Config
		want GuideNet
		err  bool
	}{
		{"none", nil, GuideLinear, false},
		{"gsen only", []*Config{mk(GuideGSen, 2)}, GuideLinear, false},
		{"agg", []*Config{mk(GuideLinearAgg, 2)}, GuideLinearAgg, false},
		{"agg with gsen retune", []*Config{mk(GuideLinearAgg, 2), mk(GuideGSen, 1)}, GuideLinearAgg, false},
		{"agg unguided, linear retune", []*Config{mk(GuideLinearAgg, 0), mk(GuideLinear, 1)}, GuideLinear, false},
		{"linear and agg", []*Config{mk(GuideLinear, 2), mk(GuideLinearAgg, 1)}, "", true},
	}
	for _, c := range cases {
		got, err := guideNetOf(c.cfgs...)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("%s: %q, %v; want %q, error %v", c.name, got, err, c.want, c.err)
		}
		if err != nil && !errors.Is(err, ErrConfig) {
			t.Errorf("%s: error %v does not wrap ErrConfig", c.name, err)
		}
	}
}

// ensure that a run whose retune settings ask for the other kind of linear
// guide is refused before it trains anything.
func TestRun_RefusesTwoGuideKinds(t *testing.T) {
	g := newToyGraph(80, 4, 6, 0.8, 0, 1, 3)
	in := g.input(t, 1, 4)
	cfg := fastConfig(t)
	cfg.Debias.GuideWeight, cfg.Debias.GuideSteps, cfg.Debias.GuideNet, cfg.Debias.GuideRounds = 2, 2, GuideLinearAgg, 2
	opt := &Options{Variants: []Variant{VariantFASD}, Retune: []Retune{{Set: []string{"debias.guide_net=linear"}}}}
	var began []Stage
	opt.Callbacks.StageStart = func(s Stage, _ int) { began = append(began, s) }
	_, err := Run(context.Background(), cfg, in, opt)
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("err %v, want ErrConfig", err)
	}
	if len(began) > 0 {
		t.Errorf("stages %v began before the refusal", began)
	}
	if !strings.Contains(err.Error(), "guide_net") {
		t.Errorf("error %q does not name debias.guide_net", err)
	}
}
