package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/autodiff/adtest"
	"github.com/fasd-db/fasd/fasd/tensor"
)

type p64 = autodiff.Param[float64]

// inputParams wraps a batch's X and A as parameters so that the gradient
// check also covers ∇_X and ∇_A (A through the GCN normalisation).
func inputParams(g graphBatch[float64]) (*p64, *p64) {
	x := &p64{Name: "X", Value: g.X, Grad: make([]float64, len(g.X.Data))}
	a := &p64{Name: "A", Value: g.A, Grad: make([]float64, len(g.A.Data))}
	return x, a
}

// netCheck checks a network's gradient w.r.t. its parameters (sampled
// entries) and its inputs X and A (all valid off-diagonal entries of A are
// perturbed one at a time, i.e. the raw, non-symmetric gradient).
func netCheck(t *testing.T, name string, params []*p64, g graphBatch[float64], maxEntries int,
	fwd func(tp *autodiff.Tape[float64], x, a *autodiff.Var[float64]) *autodiff.Var[float64]) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 14))
	x, a := inputParams(g)
	var w []float64
	c := adtest.Case{Name: name, Params: append(append([]*p64{}, params...), x, a), MaxEntries: maxEntries,
		Loss: func(tp *autodiff.Tape[float64]) *autodiff.Var[float64] {
			out := fwd(tp, tp.Param(x), tp.Param(a))
			if w == nil {
				w = adtest.RandSlice(rng, len(out.Value.Data), -1, 1)
			}
			return tp.Dot(out, w)
		}}
	adtest.Check(t, c, rng)
}

// ensure that Linear, GCN and MLP gradients (w.r.t. input, weights and, for
// the GCN, the adjacency through the normalisation) match finite differences.
func TestLayers_Grad(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	g := randBatch[float64](rng, 5, 3, []int{5, 3}, 0.3)
	lin := NewLinear[float64]("lin", 3, 4, rng)
	netCheck(t, "Linear", lin.Params(), g, 0, func(tp *autodiff.Tape[float64], x, a *autodiff.Var[float64]) *autodiff.Var[float64] {
		return lin.Forward(tp, x)
	})
	gcn := NewGCN[float64]("gcn", 3, 4, rng)
	for i := range gcn.B.Value.Data {
		gcn.B.Value.Data[i] = rng.Float64() - 0.5
	}
	netCheck(t, "GCN", gcn.Params(), g, 0, func(tp *autodiff.Tape[float64], x, a *autodiff.Var[float64]) *autodiff.Var[float64] {
		return gcn.Forward(tp, tp.GCNNorm(a), x)
	})
	mlp := NewMLP[float64]("mlp", []int{3, 5, 2}, autodiff.ELU, rng)
	netCheck(t, "MLP", mlp.Params(), g, 0, func(tp *autodiff.Tape[float64], x, a *autodiff.Var[float64]) *autodiff.Var[float64] {
		return tp.MaskNodes(mlp.Forward(tp, x), g.Mask)
	})
	cm := NewMLP[float64]("cmlp", []int{1, 3, 2}, autodiff.ELU, rng)
	netCheck(t, "MLPChan", cm.Params(), g, 0, func(tp *autodiff.Tape[float64], x, a *autodiff.Var[float64]) *autodiff.Var[float64] {
		return cm.ForwardChan(tp, tp.Reshape(a, tensor.S(2, 1, 5, 5)))
	})
}

func smallScoreA(d int) ScoreAConfig {
	return ScoreAConfig{In: d, Layers: 3, CInit: 2, CHid: 3, CFinal: 2, Hidden: 4, AttnDim: 4, Heads: 2, NumLinears: 2}
}

// ensure that one GMH attention layer's gradients (params, H, channel stack)
// match finite differences.
func TestAttentionLayer_Grad(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	cfg := smallScoreA(3)
	g := randBatch[float64](rng, 4, 3, []int{4, 3}, 0.5)
	l := newAttnLayer[float64]("att", cfg, 3, 2, 3, true, rng)
	netCheck(t, "AttentionLayer", l.params(), g, 0, func(tp *autodiff.Tape[float64], x, a *autodiff.Var[float64]) *autodiff.Var[float64] {
		c := tp.ConcatChan(a, tp.MatMul(a, a))
		h, cn := l.forward(tp, &cfg, x, c, g.Mask)
		return tp.ConcatLast(tp.Reshape(cn, tensor.S(2, 4, 4*3)), h)
	})
}

// ensure that the full s_θ, s_φ, g_sen and f gradients w.r.t. parameters, X
// and A match finite differences (ScoreX with both activations).
func TestNetworks_Grad(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g := randBatch[float64](rng, 5, 3, []int{5, 4}, 0.5)
	for _, act := range []autodiff.Activation{autodiff.ReLU, autodiff.ELU} {
		sx, err := NewScoreX[float64](ScoreXConfig{In: 3, Hidden: 4, Depth: 3, Act: act}, rng)
		if err != nil {
			t.Fatal(err)
		}
		netCheck(t, "ScoreX/"+act.String(), sx.Params(), g, 6, func(tp *autodiff.Tape[float64], x, a *autodiff.Var[float64]) *autodiff.Var[float64] {
			return sx.Forward(tp, x, a, g.Mask)
		})
	}
	sa, err := NewScoreA[float64](smallScoreA(3), rng)
	if err != nil {
		t.Fatal(err)
	}
	netCheck(t, "ScoreA", sa.Params(), g, 6, func(tp *autodiff.Tape[float64], x, a *autodiff.Var[float64]) *autodiff.Var[float64] {
		return sa.Forward(tp, x, a, g.Mask)
	})
	root := ClassifierConfig(3)
	root.Root = true
	head := GCNNetConfig{In: 3, GCN: []int{5}, Out: 2, Dropout: 0.3, GCNHead: true}
	headRoot := head
	headRoot.Root = true
	for _, cfg := range []GCNNetConfig{GSenConfig(3), ClassifierConfig(3), root, head, headRoot} {
		net, err := NewGCNNet[float64](cfg, rng)
		if err != nil {
			t.Fatal(err)
		}
		// Training mode: a fixed-seed dropout rng per evaluation keeps the mask fixed.
		netCheck(t, "GCNNet", net.Params(), g, 6, func(tp *autodiff.Tape[float64], x, a *autodiff.Var[float64]) *autodiff.Var[float64] {
			return net.Forward(tp, x, a, g.Mask, rand.NewPCG(9, 9))
		})
	}
}

// ensure that s_φ at its full default size (docs/method.md §7) has correct
// gradients on a sample of entries.
func TestScoreADefault_Grad(t *testing.T) {
	if testing.Short() {
		t.Skip("full-size s_φ check skipped in -short")
	}
	rng := rand.New(rand.NewPCG(8, 1))
	g := randBatch[float64](rng, 6, 4, []int{6, 5}, 0.5)
	sa, err := NewScoreA[float64](DefaultScoreAConfig(4), rng)
	if err != nil {
		t.Fatal(err)
	}
	netCheck(t, "ScoreADefault", sa.Params(), g, 2, func(tp *autodiff.Tape[float64], x, a *autodiff.Var[float64]) *autodiff.Var[float64] {
		return tp.Scale(sa.Forward(tp, x, a, g.Mask), 10)
	})
}
