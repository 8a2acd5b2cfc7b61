package pipeline

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// refGCN is the GCN baseline as baseline.go computed it before Â·X was
// formed once (commit a6bb958), kept as the straightforward reference: a 2-layer GCN
// Z = Â·(dropout(ReLU(Â·X·W1 + b1))·W2) + b2 with Â = D^{-1/2}(A + I)D^{-1/2}
// in CSR form, so it scales to Pokec-sized graphs. Its backward pass is
// written out by hand (Â is symmetric, so Âᵀ = Â).
type refGCN struct {
	n, d, h int
	rowPtr  []int32
	col     []uint32
	val     []float32
	x       []float32
	w1, b1  *autodiff.Param[float32]
	w2, b2  *autodiff.Param[float32]
	// forward intermediates
	xw1, p1, h1, drop, h1w2, z []float32
	// backward scratch
	dz, dq, dh1, dp1 []float32
}

func newRefGCN(n, d, h int, edges [][2]uint32, x []float32, rng *rand.Rand) (*refGCN, error) {
	if len(x) != n*d {
		return nil, fmt.Errorf("%w: baseline features |X|=%d, want %d·%d", ErrInput, len(x), n, d)
	}
	deg := make([]int32, n)
	for _, e := range edges {
		if int(e[0]) >= n || int(e[1]) >= n {
			return nil, fmt.Errorf("%w: baseline edge (%d, %d) beyond %d nodes", ErrInput, e[0], e[1], n)
		}
		if e[0] != e[1] {
			deg[e[0]]++
			deg[e[1]]++
		}
	}
	g := &refGCN{n: n, d: d, h: h, x: x, rowPtr: make([]int32, n+1)}
	for v := 0; v < n; v++ {
		g.rowPtr[v+1] = g.rowPtr[v] + deg[v] + 1
	}
	g.col = make([]uint32, g.rowPtr[n])
	g.val = make([]float32, g.rowPtr[n])
	fill := make([]int32, n)
	copy(fill, g.rowPtr[:n])
	put := func(u, v uint32) {
		g.col[fill[u]] = v
		fill[u]++
	}
	for v := 0; v < n; v++ {
		put(uint32(v), uint32(v))
	}
	for _, e := range edges {
		if e[0] != e[1] {
			put(e[0], e[1])
			put(e[1], e[0])
		}
	}
	for u := 0; u < n; u++ {
		du := 1 / math.Sqrt(float64(deg[u]+1))
		for k := g.rowPtr[u]; k < g.rowPtr[u+1]; k++ {
			g.val[k] = float32(du / math.Sqrt(float64(deg[g.col[k]]+1)))
		}
	}
	glorot := func(p *autodiff.Param[float32], in, out int) {
		b := math.Sqrt(6 / float64(in+out))
		for i := range p.Value.Data {
			p.Value.Data[i] = float32((2*rng.Float64() - 1) * b)
		}
	}
	g.w1, g.b1 = autodiff.NewParam[float32]("gcn.w1", d, h), autodiff.NewParam[float32]("gcn.b1", h)
	g.w2, g.b2 = autodiff.NewParam[float32]("gcn.w2", h, 2), autodiff.NewParam[float32]("gcn.b2", 2)
	glorot(g.w1, d, h)
	glorot(g.w2, h, 2)
	g.xw1, g.p1, g.h1, g.drop = make([]float32, n*h), make([]float32, n*h), make([]float32, n*h), make([]float32, n*h)
	g.dh1, g.dp1 = make([]float32, n*h), make([]float32, n*h)
	g.h1w2, g.z, g.dz, g.dq = make([]float32, n*2), make([]float32, n*2), make([]float32, n*2), make([]float32, n*2)
	return g, nil
}

func (g *refGCN) params() []*autodiff.Param[float32] {
	return []*autodiff.Param[float32]{g.w1, g.b1, g.w2, g.b2}
}

// prop computes dst = Â·src + bias for an n×c matrix src (bias may be nil).
func (g *refGCN) prop(src []float32, c int, bias []float32, dst []float32) {
	for u := 0; u < g.n; u++ {
		row := dst[u*c : (u+1)*c]
		if bias != nil {
			copy(row, bias)
		} else {
			clear(row)
		}
		for k := g.rowPtr[u]; k < g.rowPtr[u+1]; k++ {
			w := g.val[k]
			s := src[int(g.col[k])*c : int(g.col[k]+1)*c]
			for j := range row {
				row[j] += w * s[j]
			}
		}
	}
}

// forward fills z (n×2 logits). With rng != nil dropout p is applied to H1.
func (g *refGCN) forward(p float64, rng *rand.Rand) {
	n, d, h := g.n, g.d, g.h
	tensor.Gemm(false, false, n, h, d, 1, g.x, d, g.w1.Value.Data, h, 0, g.xw1, h)
	g.prop(g.xw1, h, g.b1.Value.Data, g.p1)
	scale := float32(1)
	if rng != nil && p > 0 {
		scale = float32(1 / (1 - p))
	}
	for i, v := range g.p1 {
		r := max(v, 0)
		g.drop[i] = scale
		if rng != nil && p > 0 && rng.Float64() < p {
			g.drop[i] = 0
		}
		g.h1[i] = r * g.drop[i]
	}
	tensor.Gemm(false, false, n, 2, h, 1, g.h1, h, g.w2.Value.Data, 2, 0, g.h1w2, 2)
	g.prop(g.h1w2, 2, g.b2.Value.Data, g.z)
}

// backward adds the gradients of the mean cross-entropy over the train
// nodes to the parameters' Grad and returns the loss.
func (g *refGCN) backward(train []uint32, labels []int8) float64 {
	n, d, h := g.n, g.d, g.h
	clear(g.dz)
	var loss float64
	inv := 1 / float64(len(train))
	for _, u := range train {
		a, b := float64(g.z[2*u]), float64(g.z[2*u+1])
		m := max(a, b)
		ea, eb := math.Exp(a-m), math.Exp(b-m)
		pa, pb := ea/(ea+eb), eb/(ea+eb)
		y := labels[u]
		if y == 1 {
			loss -= math.Log(pb)
			pb--
		} else {
			loss -= math.Log(pa)
			pa--
		}
		g.dz[2*u], g.dz[2*u+1] = float32(pa*inv), float32(pb*inv)
	}
	for _, p := range g.params() {
		if len(p.Grad) != len(p.Value.Data) {
			p.Grad = make([]float32, len(p.Value.Data))
		}
	}
	for u := 0; u < n; u++ {
		g.b2.Grad[0] += g.dz[2*u]
		g.b2.Grad[1] += g.dz[2*u+1]
	}
	g.prop(g.dz, 2, nil, g.dq) // dQ = Âᵀ·dZ
	tensor.Gemm(true, false, h, 2, n, 1, g.h1, h, g.dq, 2, 1, g.w2.Grad, 2)
	tensor.Gemm(false, true, n, h, 2, 1, g.dq, 2, g.w2.Value.Data, 2, 0, g.dh1, h)
	for i, v := range g.dh1 {
		if g.p1[i] > 0 {
			g.dh1[i] = v * g.drop[i]
		} else {
			g.dh1[i] = 0
		}
	}
	for u := 0; u < n; u++ {
		for j := 0; j < h; j++ {
			g.b1.Grad[j] += g.dh1[u*h+j]
		}
	}
	g.prop(g.dh1, h, nil, g.dp1) // d(XW1) = Âᵀ·dP1
	tensor.Gemm(true, false, d, h, n, 1, g.x, d, g.dp1, h, 1, g.w1.Grad, h)
	return loss * inv
}
