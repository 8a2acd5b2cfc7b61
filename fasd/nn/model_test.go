package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// equivTol: float64 results of the same network on permuted or padded inputs
// differ only by summation order (sums of ≤ ~400 terms of size ≤ ~10), i.e.
// by a few hundred ulps of 1e-16.
const equivTol = 1e-11

type anyNet interface {
	run(tp *autodiff.Tape[float64], g graphBatch[float64]) tensor.Dense[float64]
	name() string
	pairs() bool // output is (B, N, N)
}

type sxNet struct{ m *ScoreX[float64] }
type saNet struct{ m *ScoreA[float64] }
type gcNet struct {
	m *GCNNet[float64]
	n string
}

func evalVars(tp *autodiff.Tape[float64], g graphBatch[float64]) (*autodiff.Var[float64], *autodiff.Var[float64]) {
	tp.Reset()
	tp.SetNoGrad(true)
	return tp.Input(g.X, false), tp.Input(g.A, false)
}

func (s sxNet) run(tp *autodiff.Tape[float64], g graphBatch[float64]) tensor.Dense[float64] {
	x, a := evalVars(tp, g)
	return s.m.Forward(tp, x, a, g.Mask).Value.Clone()
}
func (s sxNet) name() string { return "ScoreX" }
func (s sxNet) pairs() bool  { return false }
func (s saNet) run(tp *autodiff.Tape[float64], g graphBatch[float64]) tensor.Dense[float64] {
	x, a := evalVars(tp, g)
	return s.m.Forward(tp, x, a, g.Mask).Value.Clone()
}
func (s saNet) name() string { return "ScoreA" }
func (s saNet) pairs() bool  { return true }
func (s gcNet) run(tp *autodiff.Tape[float64], g graphBatch[float64]) tensor.Dense[float64] {
	x, a := evalVars(tp, g)
	return s.m.Forward(tp, x, a, g.Mask, nil).Value.Clone()
}
func (s gcNet) name() string { return s.n }
func (s gcNet) pairs() bool  { return false }

func testNets(t *testing.T, d int) []anyNet {
	rng := rand.New(rand.NewPCG(21, 1))
	sx, err1 := NewScoreX[float64](DefaultScoreXConfig(d), rng)
	sa, err2 := NewScoreA[float64](DefaultScoreAConfig(d), rng)
	gs, err3 := NewGCNNet[float64](GSenConfig(d), rng)
	f, err4 := NewGCNNet[float64](ClassifierConfig(d), rng)
	rootCfg := ClassifierConfig(d)
	rootCfg.Root = true
	fr, err5 := NewGCNNet[float64](rootCfg, rng)
	fg, err6 := NewGCNNet[float64](GCNNetConfig{In: d, GCN: []int{8}, Out: 2, Dropout: 0.3, GCNHead: true}, rng)
	for _, err := range []error{err1, err2, err3, err4, err5, err6} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return []anyNet{sxNet{sx}, saNet{sa}, gcNet{gs, "GSen"}, gcNet{f, "Classifier"}, gcNet{fr, "Classifier/root"}, gcNet{fg, "Classifier/gcn-head"}}
}

// ensure that the root weight is an addition to the GCN layer and nothing
// else: a root network whose R are zero computes what the plain network
// with the same W and b computes (gradients: TestNetworks_Grad).
func TestGCNNet_RootPath(t *testing.T) {
	const n, d = 6, 4
	rng := rand.New(rand.NewPCG(8, 1))
	g := randBatch[float64](rng, n, d, []int{6, 4}, 0.3)
	plainCfg := ClassifierConfig(d)
	rootCfg := plainCfg
	rootCfg.Root = true
	plain, err := NewGCNNet[float64](plainCfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	root, err := NewGCNNet[float64](rootCfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(root.Params()), len(plain.Params())+len(plain.GCNs); got != want {
		t.Fatalf("root network has %d parameters, want %d (one R per GCN layer)", got, want)
	}
	for i, gl := range root.GCNs {
		copy(gl.W.Value.Data, plain.GCNs[i].W.Value.Data)
		copy(gl.B.Value.Data, plain.GCNs[i].B.Value.Data)
		clear(gl.R.Value.Data)
	}
	for i, l := range root.FCs {
		copy(l.W.Value.Data, plain.FCs[i].W.Value.Data)
		copy(l.B.Value.Data, plain.FCs[i].B.Value.Data)
	}
	tp := autodiff.NewTape[float64]()
	want := gcNet{plain, "plain"}.run(tp, g)
	got := gcNet{root, "root"}.run(tp, g)
	for i := range want.Data {
		if got.Data[i] != want.Data[i] {
			t.Fatalf("R = 0: out[%d] = %v, plain GCN %v", i, got.Data[i], want.Data[i])
		}
	}
	if rootCfg.Validate() != nil || len(root.GCNs[0].Params()) != 3 || len(plain.GCNs[0].Params()) != 2 {
		t.Fatal("layer parameter lists: want W, b, R with a root weight and W, b without")
	}
}

// ensure that a GCN head is a GCN layer in place of the linear output
// layer and nothing else: on graphs without edges (Â = I) it computes what
// the same network with a linear output layer of the same weights
// computes, and on graphs with edges it does not (the head propagates).
func TestGCNNet_GCNHead(t *testing.T) {
	const n, d, h = 6, 4, 5
	rng := rand.New(rand.NewPCG(8, 2))
	for _, root := range []bool{false, true} {
		headCfg := GCNNetConfig{In: d, GCN: []int{h}, Out: 2, GCNHead: true, Root: root}
		linCfg := GCNNetConfig{In: d, GCN: []int{h}, Out: 2, Root: root}
		head, err := NewGCNNet[float64](headCfg, rng)
		if err != nil {
			t.Fatal(err)
		}
		lin, err := NewGCNNet[float64](linCfg, rng)
		if err != nil {
			t.Fatal(err)
		}
		if len(head.GCNs) != 2 || len(head.FCs) != 0 || len(lin.GCNs) != 1 || len(lin.FCs) != 1 {
			t.Fatalf("root=%v: head %d GCN %d FC, linear %d GCN %d FC", root, len(head.GCNs), len(head.FCs), len(lin.GCNs), len(lin.FCs))
		}
		copy(lin.GCNs[0].W.Value.Data, head.GCNs[0].W.Value.Data)
		copy(lin.GCNs[0].B.Value.Data, head.GCNs[0].B.Value.Data)
		out := head.GCNs[1]
		copy(lin.FCs[0].W.Value.Data, out.W.Value.Data)
		copy(lin.FCs[0].B.Value.Data, out.B.Value.Data)
		if root {
			copy(lin.GCNs[0].R.Value.Data, head.GCNs[0].R.Value.Data)
			// The head's root path adds H·R to Â·H·W: with Â = I that is
			// H·(W + R), so the linear layer gets W + R.
			for i, r := range out.R.Value.Data {
				lin.FCs[0].W.Value.Data[i] += r
			}
		}
		tp := autodiff.NewTape[float64]()
		bare := randBatch[float64](rng, n, d, []int{6, 3}, 0)
		clear(bare.A.Data)
		want := gcNet{lin, "linear"}.run(tp, bare)
		got := gcNet{head, "head"}.run(tp, bare)
		for i := range want.Data {
			if math.Abs(got.Data[i]-want.Data[i]) > 1e-12 {
				t.Fatalf("root=%v, no edges: out[%d] = %v, linear head %v", root, i, got.Data[i], want.Data[i])
			}
		}
		g := randBatch[float64](rng, n, d, []int{6, 3}, 0)
		want = gcNet{lin, "linear"}.run(tp, g)
		got = gcNet{head, "head"}.run(tp, g)
		same := true
		for i := range want.Data {
			same = same && math.Abs(got.Data[i]-want.Data[i]) <= 1e-12
		}
		if same {
			t.Fatalf("root=%v: the GCN head ignores the edges", root)
		}
	}
	if err := (GCNNetConfig{In: d, GCN: []int{h}, FC: []int{h}, Out: 2, GCNHead: true}).Validate(); err == nil {
		t.Fatal("GCNHead with FC layers validated")
	}
}

// ensure that s_θ, s_φ, g_sen and f are permutation-equivariant:
// net(ΠX, ΠAΠᵀ) = Π·net(X, A) (and ·Πᵀ for s_φ), per subgraph of a padded
// batch, with the padding permuted in among the valid nodes.
func TestNetworks_Equivariance(t *testing.T) {
	const n, d = 7, 5
	rng := rand.New(rand.NewPCG(2, 2))
	g := randBatch[float64](rng, n, d, []int{7, 5}, 0.4)
	perms := [][]int{rng.Perm(n), rng.Perm(n)}
	gp := permute(g, perms)
	tp := autodiff.NewTape[float64]()
	for _, net := range testNets(t, d) {
		out, outP := net.run(tp, g), net.run(tp, gp)
		w := out.Shape.Dim(-1)
		for b, p := range perms {
			for i := 0; i < n; i++ {
				for k := 0; k < w; k++ {
					want := out.Data[(b*n+p[i])*w+k]
					if net.pairs() {
						want = out.Data[(b*n+p[i])*n+p[k]]
					}
					if got := outP.Data[(b*n+i)*w+k]; math.Abs(got-want) > equivTol {
						t.Fatalf("%s: permuted out[%d,%d,%d] = %v, want %v", net.name(), b, i, k, got, want)
					}
				}
			}
		}
	}
}

// ensure that padding does not change valid outputs and that padded outputs
// are exactly 0: a subgraph run alone (B=1, N=n, all-ones mask) equals its
// valid block inside a batch padded to N_max next to another subgraph.
func TestNetworks_PaddingEquivariance(t *testing.T) {
	const nmax, nv, d = 9, 6, 5
	rng := rand.New(rand.NewPCG(3, 3))
	padded := randBatch[float64](rng, nmax, d, []int{nmax, nv}, 0.4)
	alone := graphBatch[float64]{X: tensor.New[float64](1, nv, d), A: tensor.New[float64](1, nv, nv), Mask: make([]float64, nv)}
	for i := 0; i < nv; i++ {
		alone.Mask[i] = 1
		copy(alone.X.Data[i*d:(i+1)*d], padded.X.Data[(nmax+i)*d:])
		copy(alone.A.Data[i*nv:(i+1)*nv], padded.A.Data[(nmax+i)*nmax:(nmax+i)*nmax+nv])
	}
	// Garbage in the padded feature rows must not matter either.
	for i := nv; i < nmax; i++ {
		for k := 0; k < d; k++ {
			padded.X.Data[((nmax+i)*d)+k] = 3
		}
	}
	tp := autodiff.NewTape[float64]()
	for _, net := range testNets(t, d) {
		pOut, aOut := net.run(tp, padded), net.run(tp, alone)
		w := aOut.Shape.Dim(-1)
		wp := pOut.Shape.Dim(-1)
		for i := 0; i < nmax; i++ {
			for k := 0; k < wp; k++ {
				got := pOut.Data[(nmax+i)*wp+k]
				valid := i < nv && (!net.pairs() || k < nv)
				if !valid {
					if got != 0 {
						t.Fatalf("%s: padded output [%d,%d] = %v, want 0", net.name(), i, k, got)
					}
					continue
				}
				if want := aOut.Data[i*w+k]; math.Abs(got-want) > equivTol {
					t.Fatalf("%s: padded run [%d,%d] = %v, alone %v", net.name(), i, k, got, want)
				}
			}
		}
	}
}

// ensure that s_φ's output and every channel are exactly symmetric with a
// zero diagonal, in float32 (bitwise, not within a tolerance).
func TestScoreA_Symmetry(t *testing.T) {
	const n, d = 8, 6
	rng := rand.New(rand.NewPCG(4, 4))
	g := randBatch[float32](rng, n, d, []int{8, 6, 3}, 0.7)
	sa, err := NewScoreA[float32](DefaultScoreAConfig(d), rng)
	if err != nil {
		t.Fatal(err)
	}
	tp := autodiff.NewTape[float32]()
	out := sa.Forward(tp, tp.Input(g.X, false), tp.Input(g.A, false), g.Mask).Value
	nonzero := 0
	for b := 0; b < 3; b++ {
		for i := 0; i < n; i++ {
			if out.Data[(b*n+i)*n+i] != 0 {
				t.Fatalf("diagonal [%d,%d] = %v", b, i, out.Data[(b*n+i)*n+i])
			}
			for j := 0; j < n; j++ {
				x, y := out.Data[(b*n+i)*n+j], out.Data[(b*n+j)*n+i]
				if x != y {
					t.Fatalf("out[%d,%d,%d] = %v but [%d,%d] = %v", b, i, j, x, j, i, y)
				}
				if x != 0 {
					nonzero++
				}
			}
		}
	}
	if nonzero == 0 {
		t.Fatal("output is identically zero")
	}
	// Every channel stack produced by the attention layers is symmetric too.
	h, c := tp.Input(g.X, false), tp.ConcatChan(tp.Input(g.A, false), tp.MatMul(tp.Input(g.A, false), tp.Input(g.A, false)))
	for li, l := range sa.layers {
		h, c = l.forward(tp, &sa.Config, h, c, g.Mask)
		mats, nn := c.Value.Shape.Len()/(n*n), n
		for m := 0; m < mats; m++ {
			for i := 0; i < nn; i++ {
				for j := 0; j < nn; j++ {
					if c.Value.Data[m*n*n+i*n+j] != c.Value.Data[m*n*n+j*n+i] {
						t.Fatalf("layer %d channel matrix %d not symmetric at (%d,%d)", li, m, i, j)
					}
				}
			}
		}
		if h == nil && li != len(sa.layers)-1 {
			t.Fatalf("layer %d has no node output", li)
		}
	}
}

// ensure that s_θ and s_φ can drive the score-matching loss on one fixed
// subgraph with fixed (t, ε) targets to near zero (float32, Adam lr 1e-2/5e-3).
func TestScoreNets_Overfit(t *testing.T) {
	const n, d = 8, 6
	rng := rand.New(rand.NewPCG(6, 6))
	g := randBatch[float32](rng, n, d, []int{n}, 0.3)
	tx := make([]float32, n*d)
	ta := make([]float32, n*n)
	for i := range tx {
		tx[i] = float32(rng.NormFloat64())
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			v := float32(rng.NormFloat64())
			ta[i*n+j], ta[j*n+i] = v, v
		}
	}
	sx, _ := NewScoreX[float32](DefaultScoreXConfig(d), rng)
	sa, _ := NewScoreA[float32](DefaultScoreAConfig(d), rng)
	ox := NewAdam(sx.Params(), AdamConfig{LR: 1e-2})
	oa := NewAdam(sa.Params(), AdamConfig{LR: 5e-3})
	tp := autodiff.NewTape[float32]()
	var first, lx, la float32
	steps := 600
	if testing.Short() {
		steps = 300
	}
	for it := 0; it < steps; it++ {
		ZeroGrads(sx.Params())
		ZeroGrads(sa.Params())
		tp.Reset()
		x, a := tp.Input(g.X, false), tp.Input(g.A, false)
		lossX := tp.SquaredError(sx.Forward(tp, x, a, g.Mask), tx, 1)
		lossA := tp.SquaredError(sa.Forward(tp, x, a, g.Mask), ta, 1)
		loss := tp.Add(lossX, lossA)
		tp.Backward(loss)
		tp.AccumulateGrads()
		ClipGradNorm(sx.Params(), 1)
		ClipGradNorm(sa.Params(), 1)
		ox.Step()
		oa.Step()
		lx, la = lossX.Value.Data[0], lossA.Value.Data[0]
		if it == 0 {
			first = lx + la
		}
	}
	// Start: ½Σε² ≈ ½(n·d + n(n−1)) = 52. "Near zero": below 1% of it for each net.
	t.Logf("loss %v → s_θ %v, s_φ %v after %d steps", first, lx, la, steps)
	if lx > 0.01*first || la > 0.01*first || math.IsNaN(float64(lx+la)) {
		t.Fatalf("did not overfit: start %v, s_θ %v, s_φ %v", first, lx, la)
	}
}
