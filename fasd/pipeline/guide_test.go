package pipeline

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/nn"
)

// probeAcc is the class-balanced accuracy of the linear guide (w, b) on the
// distinct nodes of v with known s.
func probeAcc(v *view, d int, w []float32, b float32) float64 {
	var hit, tot [2]float64
	seen := map[uint32]bool{}
	for i, g := range v.sgs {
		for u := 0; u < g.N(); u++ {
			if g.S[u] < 0 || seen[g.Nodes[u]] {
				continue
			}
			seen[g.Nodes[u]] = true
			z := float64(b)
			for j, x := range v.xs[i][u*d : (u+1)*d] {
				z += float64(w[j]) * float64(x)
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

// plantedGuideView is a 300-node toy graph whose features carry s along one
// direction, as the original view of its subgraphs.
func plantedGuideView(t testing.TB) (*Input, *view) {
	g := newToyGraph(300, 8, 6, 0.8, 0, 1.5, 11)
	in := g.input(t, 1, 6)
	sgs, _, _, _, err := in.validate()
	if err != nil {
		t.Fatal(err)
	}
	return in, originalView(sgs, in.D, nil)
}

// ensure that the linear guides read a planted sensitive direction, that
// guidance toward chance removes what a freshly fitted probe can read, and
// that the guides survive the model bundle.
func TestLinearGuides(t *testing.T) {
	in, v := plantedGuideView(t)
	ctx := context.Background()
	ps, err := trainLinearGuides(ctx, v, in.D, 2, GuideLinear)
	if err != nil {
		t.Fatal(err)
	}
	before := probeAcc(v, in.D, ps[0].Value.Data, ps[1].Value.Data[0])
	if before < 0.75 {
		t.Fatalf("first guide reads s with balanced accuracy %.3f, want ≥ 0.75", before)
	}
	again, _ := trainLinearGuides(ctx, v, in.D, 2, GuideLinear)
	for i := range ps {
		for j := range ps[i].Value.Data {
			if ps[i].Value.Data[j] != again[i].Value.Data[j] {
				t.Fatal("guide training is not deterministic")
			}
		}
	}

	m, deb, fresh := guidedDebias(t, in, v, GuideLinear, ps)
	after := probeAcc(deb, in.D, fresh[0].Value.Data, fresh[1].Value.Data[0])
	t.Logf("balanced accuracy of a linear probe: %.3f before, %.3f after guidance", before, after)
	if !(after < before-0.1) {
		t.Errorf("a fresh probe still reads s at %.3f (before %.3f)", after, before)
	}

	guidesRoundTrip(t, m, ps)
	// A config without guides refuses an engine that would need them.
	m3 := *m
	m3.Guides = nil
	if _, err := m3.NewEngine(); err == nil {
		t.Error("engine built without the guides its config needs")
	}
}

func TestEvenlyKept(t *testing.T) {
	for _, c := range []struct{ n, k int }{{1, 1}, {5, 5}, {5, 9}, {10, 3}, {300, 100}, {1000, 7}, {65537, 65536}, {1 << 20, 1 << 16}} {
		kept, last, first := 0, -1, -1
		lo, hi := c.n/c.k, (c.n+c.k-1)/c.k
		for q := 0; q < c.n; q++ {
			if !evenlyKept(q, c.n, c.k) {
				continue
			}
			if first < 0 {
				first = q
			}
			if last >= 0 && c.n > c.k {
				if gap := q - last; gap < lo || gap > hi {
					t.Fatalf("n %d, k %d: items %d and %d kept, %d apart (want %d..%d)", c.n, c.k, last, q, gap, lo, hi)
				}
			}
			kept, last = kept+1, q
		}
		if want := min(c.n, c.k); kept != want || first != 0 {
			t.Errorf("n %d, k %d: kept %d (first %d), want %d (first 0)", c.n, c.k, kept, first, want)
		}
	}
}

// ensure that the linear guides fit on every node up to their cap, and on an
// evenly spaced sample beyond it that still reads the planted direction.
func TestLinearGuides_Sample(t *testing.T) {
	in, v := plantedGuideView(t)
	ctx := context.Background()
	n := guideNodes(v.sgs)
	if n <= 100 || n > guideMaxNodes {
		t.Fatalf("toy graph has %d nodes with known s", n)
	}
	fit := func(k int) []float32 {
		ps, err := trainLinearGuidesAtMost(ctx, v, in.D, 2, k, GuideLinear)
		if err != nil {
			t.Fatal(err)
		}
		var out []float32
		for _, p := range ps {
			out = append(out, p.Value.Data...)
		}
		return out
	}
	def, err := trainLinearGuides(ctx, v, in.D, 2, GuideLinear)
	if err != nil {
		t.Fatal(err)
	}
	var defW []float32
	for _, p := range def {
		defW = append(defW, p.Value.Data...)
	}
	all, atN, sample := fit(n+1), fit(n), fit(100)
	for i, w := range all {
		if w != atN[i] || w != defW[i] {
			t.Fatalf("weight %d: %v with room for every node, %v with exactly enough, %v by default", i, w, atN[i], defW[i])
		}
	}
	same := true
	for i := range all {
		same = same && all[i] == sample[i]
	}
	if same {
		t.Fatal("the fit on 100 sampled nodes equals the fit on all of them")
	}
	if acc := probeAcc(v, in.D, sample[:in.D], sample[in.D]); acc < 0.75 {
		t.Errorf("guide fitted on 100 of %d nodes reads s with balanced accuracy %.3f, want ≥ 0.75", n, acc)
	}
}

// ensure that the linear guide's gradient and loss are, bit for bit, those
// of the plain loops (one float64 dot product per node and round), for node
// counts on either side of its four-row blocks.
func TestLinearGuide_GradMatchesLoops(t *testing.T) {
	const d, rounds = 7, 3
	rng := rand.New(rand.NewPCG(3, 4))
	ps := newGuideParams(rounds, d)
	for _, p := range ps {
		for j := range p.Value.Data {
			p.Value.Data[j] = float32(rng.NormFloat64())
		}
	}
	for _, n := range []int{1, 3, 4, 5, 8, 21} {
		x := make([]float32, n*d)
		for i := range x {
			x[i] = float32(2 * rng.NormFloat64())
		}
		g := newLinearGuide(ps, 0.05, GuideLinear)
		gx, ga := make([]float32, n*d), make([]float32, n*n)
		for i := range ga {
			ga[i] = 1 // must be cleared
		}
		l, err := g.Grad(x, nil, n, d, gx, ga)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float32, n*d)
		var wl float64
		for r := 0; r < rounds; r++ {
			w, b := ps[2*r].Value.Data, float64(ps[2*r+1].Value.Data[0])
			for u := 0; u < n; u++ {
				z := b
				for j, v := range x[u*d : (u+1)*d] {
					z += float64(w[j]) * float64(v)
				}
				e := 1/(1+math.Exp(-z)) - 0.5
				if math.Abs(e) <= 0.05 {
					continue
				}
				wl += math.Abs(z)/2 + math.Log1p(math.Exp(-math.Abs(z))) - math.Ln2
				for j := 0; j < d; j++ {
					want[u*d+j] += float32(e * float64(w[j]))
				}
			}
		}
		if l != wl {
			t.Errorf("n %d: loss %v, want %v", n, l, wl)
		}
		for i := range want {
			if gx[i] != want[i] {
				t.Fatalf("n %d: ∇x[%d] = %v, want %v", n, i, gx[i], want[i])
			}
		}
		for i, v := range ga {
			if v != 0 {
				t.Fatalf("n %d: ∇A[%d] = %v, want 0", n, i, v)
			}
		}
	}
}

// guidedDebias debiases v with the linear guides ps of kind net alone
// (score networks that predict zero noise isolate the guidance; ODE, ten
// guide steps of weight 2) and fits one fresh guide of the same kind on
// the result. It returns the models, the debiased view and that guide.
func guidedDebias(t *testing.T, in *Input, v *view, net GuideNet, ps []*nn.Param[float32]) (*Models, *view, []*nn.Param[float32]) {
	t.Helper()
	cfg := fastConfig(t)
	cfg.Debias.GuideWeight, cfg.Debias.GuideSteps, cfg.Debias.GuideNet, cfg.Debias.GuideRounds = 2, 10, net, len(ps)/2
	cfg.Debias.Reverse = "ode"
	m, err := newModels(&cfg, in.D, true, true, false, false, fasd.NewRand(3))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(m.ScoreX.Params(), m.ScoreA.Params()...) {
		clear(p.Value.Data)
	}
	m.Guides = ps
	ctx := context.Background()
	deb, err := debiasAll(ctx, m, v, 2, nil, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := trainLinearGuides(ctx, deb, in.D, 1, net)
	if err != nil {
		t.Fatal(err)
	}
	return m, deb, fresh
}

// guidesRoundTrip writes m to a model bundle and reads it back, checking
// that the bundle's guides are ps, value for value, and returns the models
// read.
func guidesRoundTrip(t *testing.T, m *Models, ps []*nn.Param[float32]) *Models {
	t.Helper()
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	m2, err := UnmarshalModels(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(m2.Guides) != len(ps) {
		t.Fatalf("%d guide params after the round trip, want %d", len(m2.Guides), len(ps))
	}
	for i := range ps {
		if len(m2.Guides[i].Value.Data) != len(ps[i].Value.Data) {
			t.Fatalf("guide param %d: %d values after the round trip, want %d", i, len(m2.Guides[i].Value.Data), len(ps[i].Value.Data))
		}
		for j := range ps[i].Value.Data {
			if m2.Guides[i].Value.Data[j] != ps[i].Value.Data[j] {
				t.Fatal("guide changed in the bundle")
			}
		}
	}
	return m2
}
