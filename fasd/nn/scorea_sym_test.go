package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// forwardAllPairs is the attention layer as first written: the edge MLP on
// all N² pairs, then Symmetrize. It is the reference for the packed layer.
func (l *attnLayer[T]) forwardAllPairs(t *Tape[T], cfg *ScoreAConfig, h, c *Var[T], mask []T) (*Var[T], *Var[T]) {
	ahat := t.GCNNorm(c)
	qkv := l.qkv.Forward(t, ahat, h)
	att := t.Attention(qkv, l.cin, cfg.Heads, cfg.AttnDim, T(1/math.Sqrt(float64(cfg.Hidden))))
	var hn *Var[T]
	if l.withNode {
		v := t.GatherCols(qkv, l.g, 2*cfg.AttnDim, cfg.Hidden)
		hn = t.Act(t.MaskNodes(l.node.Forward(t, v), mask), autodiff.Tanh)
	}
	e := l.edge.ForwardChan(t, t.ConcatChan(att, c))
	return hn, t.MaskPairs(t.Symmetrize(e, 1), mask, false)
}

// forwardAllPairs is s_φ with every pair MLP on all N² pairs.
func (m *ScoreA[T]) forwardAllPairs(t *Tape[T], x, a *Var[T], mask []T) *Var[T] {
	var pows [16]*Var[T]
	pows[0] = a
	for p := 1; p < m.Config.CInit; p++ {
		pows[p] = t.MatMul(pows[p-1], a)
	}
	c := a
	if m.Config.CInit > 1 {
		c = t.ConcatChan(pows[:m.Config.CInit]...)
	}
	var chans [16]*Var[T]
	chans[0] = c
	h := x
	for i, l := range m.layers {
		h, c = l.forwardAllPairs(t, &m.Config, h, c, mask)
		chans[i+1] = c
	}
	all := t.ConcatChan(chans[:len(m.layers)+1]...)
	out := t.MaskPairs(m.Readout.ForwardChan(t, all), mask, true)
	s := a.Value.Shape
	return t.Reshape(out, tensor.S(s.Dim(0), s.Dim(1), s.Dim(2)))
}

// ensure that s_φ with its pair MLPs on the packed upper triangle gives,
// in float32 and with each GEMM kernel, bit for bit the output of the
// all-pairs computation, and parameter gradients equal up to summation order.
func TestScoreA_PackedSymmetricMatchesAllPairs(t *testing.T) {
	for _, kern := range []bool{false, true} {
		prev := tensor.ForceGonumGemm(kern)
		const n, d = 9, 7
		rng := rand.New(rand.NewPCG(17, 3))
		g := randBatch[float32](rng, n, d, []int{9, 7, 4, 1}, 0.5)
		sa, err := NewScoreA[float32](DefaultScoreAConfig(d), rng)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float32, len(g.A.Data))
		for i := range w {
			w[i] = float32(2*rng.Float64() - 1)
		}
		run := func(packed bool) ([]float32, [][]float32) {
			ZeroGrads(sa.Params())
			tp := autodiff.NewTape[float32]()
			x, a := tp.Input(g.X, false), tp.Input(g.A, false)
			var out *Var[float32]
			if packed {
				out = sa.Forward(tp, x, a, g.Mask)
			} else {
				out = sa.forwardAllPairs(tp, x, a, g.Mask)
			}
			tp.Backward(tp.Dot(out, w))
			tp.AccumulateGrads()
			var grads [][]float32
			for _, p := range sa.Params() {
				grads = append(grads, append([]float32(nil), p.Grad...))
			}
			return append([]float32(nil), out.Value.Data...), grads
		}
		full, gFull := run(false)
		packed, gPacked := run(true)
		tensor.ForceGonumGemm(prev)
		for i := range full {
			if full[i] != packed[i] {
				t.Fatalf("gonum=%v: out[%d] = %v packed, %v all pairs", kern, i, packed[i], full[i])
			}
		}
		for pi, p := range sa.Params() {
			scale := 1e-3
			for _, v := range gFull[pi] {
				scale = max(scale, float64(abs32(v)))
			}
			for j := range gFull[pi] {
				// Summation order only: a few float32 roundings relative to the largest entry.
				if d := float64(abs32(gFull[pi][j] - gPacked[pi][j])); d > 1e-4*scale {
					t.Fatalf("gonum=%v: %s grad[%d] = %v packed, %v all pairs", kern, p.Name, j, gPacked[pi][j], gFull[pi][j])
				}
			}
		}
	}
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}
