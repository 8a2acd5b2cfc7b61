package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/autodiff/adtest"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// closedFormGSen evaluates docs/method.md §3's hand-derived ∇_X L_sen and the raw
// ∂L/∂A (G, before symmetrisation) for one unpadded subgraph, with plain
// loops, as an oracle independent of the tape.
func closedFormGSen(m *GCNNet[float64], x, a []float64, n, d int, s, w []float64) (gx, graw []float64) {
	mat := func(r, c int) []float64 { return make([]float64, r*c) }
	mul := func(A []float64, r, k int, B []float64, c int) []float64 { // (r×k)(k×c)
		out := mat(r, c)
		for i := 0; i < r; i++ {
			for p := 0; p < k; p++ {
				for j := 0; j < c; j++ {
					out[i*c+j] += A[i*k+p] * B[p*c+j]
				}
			}
		}
		return out
	}
	tr := func(A []float64, r, c int) []float64 {
		out := mat(c, r)
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				out[j*r+i] = A[i*c+j]
			}
		}
		return out
	}
	addBias := func(A []float64, r, c int, b []float64) {
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				A[i*c+j] += b[j]
			}
		}
	}
	relu := func(A []float64) []float64 {
		out := append([]float64(nil), A...)
		for i := range out {
			out[i] = math.Max(out[i], 0)
		}
		return out
	}
	// Â.
	at := append([]float64(nil), a...)
	r := make([]float64, n)
	dg := make([]float64, n)
	for i := 0; i < n; i++ {
		at[i*n+i] = 1
		for j := 0; j < n; j++ {
			dg[i] += at[i*n+j]
		}
		r[i] = 1 / math.Sqrt(math.Max(1, dg[i]))
	}
	ah := mat(n, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			ah[i*n+j] = r[i] * at[i*n+j] * r[j]
		}
	}
	W1, b1 := m.GCNs[0].W.Value.Data, m.GCNs[0].B.Value.Data
	W2, b2 := m.GCNs[1].W.Value.Data, m.GCNs[1].B.Value.Data
	W3, b3 := m.FCs[0].W.Value.Data, m.FCs[0].B.Value.Data
	w4, b4 := m.FCs[1].W.Value.Data, m.FCs[1].B.Value.Data
	h1w, h2w, h3w := 64, 32, 16
	XW1 := mul(x, n, d, W1, h1w)
	P1 := mul(ah, n, n, XW1, h1w)
	addBias(P1, n, h1w, b1)
	H1 := relu(P1)
	H1W2 := mul(H1, n, h1w, W2, h2w)
	P2 := mul(ah, n, n, H1W2, h2w)
	addBias(P2, n, h2w, b2)
	H2 := relu(P2)
	P3 := mul(H2, n, h2w, W3, h3w)
	addBias(P3, n, h3w, b3)
	H3 := relu(P3)
	z := mul(H3, n, h3w, w4, 1)
	dz := make([]float64, n)
	for u := 0; u < n; u++ {
		z[u] += b4[0]
		dz[u] = w[u] * (1/(1+math.Exp(-z[u])) - s[u])
	}
	gate := func(D, P []float64) {
		for i := range D {
			if P[i] <= 0 {
				D[i] = 0
			}
		}
	}
	dP3 := mul(dz, n, 1, tr(w4, h3w, 1), h3w)
	gate(dP3, P3)
	dP2 := mul(dP3, n, h3w, tr(W3, h2w, h3w), h2w)
	gate(dP2, P2)
	dH1 := mul(mul(tr(ah, n, n), n, n, dP2, h2w), n, h2w, tr(W2, h1w, h2w), h1w)
	dP1 := append([]float64(nil), dH1...)
	gate(dP1, P1)
	gx = mul(mul(tr(ah, n, n), n, n, dP1, h1w), n, h1w, tr(W1, d, h1w), d)
	// M = δP1·(XW1)ᵀ + δP2·(H1W2)ᵀ; c_i; G_ij = r_i r_j M_ij − ½ r_i³ c_i 1[d_i>1].
	M := mul(dP1, n, h1w, tr(XW1, n, h1w), n)
	M2 := mul(dP2, n, h2w, tr(H1W2, n, h2w), n)
	for i := range M {
		M[i] += M2[i]
	}
	c := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			c[i] += M[i*n+j]*at[i*n+j]*r[j] + M[j*n+i]*at[j*n+i]*r[j]
		}
	}
	graw = mat(n, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			v := r[i] * r[j] * M[i*n+j]
			if dg[i] > 1 {
				v -= 0.5 * r[i] * r[i] * r[i] * c[i]
			}
			graw[i*n+j] = v
		}
	}
	return gx, graw
}

// closedFormTol: the oracle and the tape evaluate the same float64
// expressions in different summation orders (≈1e-16 relative each, ~1e3
// terms), so agreement to 1e-10 relative to the largest entry is expected.
const closedFormTol = 1e-10

// ensure that g_sen's ∇_X and ∇_A from the tape equal the closed form of
// docs/method.md §3 (raw G and its symmetrisation ½(G+Gᵀ)), that SensitiveGrads
// returns them per subgraph of a padded batch with zero diagonal and padding,
// and that the symmetric gradient matches a finite difference that moves
// (i,j) and (j,i) together (= 2·∇_A[i,j]).
func TestGSen_SensitiveGrads_ClosedFormGrad(t *testing.T) {
	const nmax, d = 7, 5
	rng := rand.New(rand.NewPCG(12, 1))
	g := randBatch[float64](rng, nmax, d, []int{7, 5}, 0) // binary A, as for clean subgraphs
	net, err := NewGCNNet[float64](GSenConfig(d), rng)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range net.Params() { // non-zero biases so that every term matters
		for i := range p.Value.Data {
			if p.Value.Data[i] == 0 {
				p.Value.Data[i] = 0.1 * (rng.Float64() - 0.5)
			}
		}
	}
	s := make([]float64, 2*nmax)
	w := make([]float64, 2*nmax)
	for i := range s {
		s[i] = float64(rng.IntN(2))
		w[i] = g.Mask[i]
		if i == 2 {
			w[i] = 0 // s unknown for one node
		}
	}
	var gx, ga tensor.Dense[float64]
	tp := autodiff.NewTape[float64]()
	net.SensitiveGrads(tp, g.X, g.A, g.Mask, s, w, &gx, &ga)

	for b, nv := range []int{7, 5} {
		x := make([]float64, nv*d)
		a := make([]float64, nv*nv)
		for i := 0; i < nv; i++ {
			copy(x[i*d:(i+1)*d], g.X.Data[(b*nmax+i)*d:])
			copy(a[i*nv:(i+1)*nv], g.A.Data[(b*nmax+i)*nmax:])
		}
		cx, craw := closedFormGSen(net, x, a, nv, d, s[b*nmax:b*nmax+nv], w[b*nmax:b*nmax+nv])
		scale := 0.0
		for _, v := range append(append([]float64(nil), cx...), craw...) {
			scale = math.Max(scale, math.Abs(v))
		}
		if scale < 1e-3 {
			t.Fatalf("subgraph %d: closed-form gradient is ~0 (%g)", b, scale)
		}
		for i := 0; i < nmax; i++ {
			for k := 0; k < d; k++ {
				got := gx.Data[(b*nmax+i)*d+k]
				want := 0.0
				if i < nv {
					want = cx[i*d+k]
				}
				if math.Abs(got-want) > closedFormTol*scale {
					t.Fatalf("∇_X[%d,%d,%d] = %v, closed form %v", b, i, k, got, want)
				}
			}
			for j := 0; j < nmax; j++ {
				got := ga.Data[(b*nmax+i)*nmax+j]
				want := 0.0
				if i < nv && j < nv {
					want = (craw[i*nv+j] + craw[j*nv+i]) / 2
				}
				if math.Abs(got-want) > closedFormTol*scale {
					t.Fatalf("∇_A[%d,%d,%d] = %v, closed form %v", b, i, j, got, want)
				}
			}
		}
		// Raw (non-symmetric) G against the tape's raw input gradient.
		tp.Reset()
		xv := tp.Input(tensor.FromSlice(x, 1, nv, d), true)
		av := tp.Input(tensor.FromSlice(a, 1, nv, nv), true)
		ones := make([]float64, nv)
		for i := range ones {
			ones[i] = 1
		}
		tp.Backward(tp.BCEWithLogits(net.Forward(tp, xv, av, ones, nil), s[b*nmax:b*nmax+nv], w[b*nmax:b*nmax+nv], 1))
		for i, v := range craw {
			if math.Abs(av.Grad[i]-v) > closedFormTol*scale {
				t.Fatalf("raw ∂L/∂A[%d] = %v, closed form %v", i, av.Grad[i], v)
			}
		}
	}

	// Symmetric perturbation: moving A[i,j] and A[j,i] together by ±h changes
	// L by 2·∇_A[i,j]·h.
	loss := func() float64 {
		tp.Reset()
		z := net.Forward(tp, tp.Input(g.X, false), tp.Input(g.A, false), g.Mask, nil)
		return tp.BCEWithLogits(z, s, w, 1).Value.Data[0]
	}
	// An isolated node has degree exactly 1, the kink of the clamp max(1, d):
	// §3 takes the gradient there with 1[d_i > 1] (the flat side), which a
	// two-sided difference cannot reproduce, so pairs touching one are skipped.
	isolated := func(b, i int) bool {
		for j := 0; j < nmax; j++ {
			if g.A.Data[(b*nmax+i)*nmax+j] != 0 {
				return false
			}
		}
		return true
	}
	checked := 0
	for b := 0; b < 2; b++ {
		for i := 0; i < 5; i++ {
			for j := i + 1; j < 5; j++ {
				if isolated(b, i) || isolated(b, j) {
					continue
				}
				ij, ji := (b*nmax+i)*nmax+j, (b*nmax+j)*nmax+i
				v := g.A.Data[ij]
				g.A.Data[ij], g.A.Data[ji] = v+adtest.Step, v+adtest.Step
				fp := loss()
				g.A.Data[ij], g.A.Data[ji] = v-adtest.Step, v-adtest.Step
				fm := loss()
				g.A.Data[ij], g.A.Data[ji] = v, v
				num := (fp - fm) / (2 * adtest.Step)
				want := 2 * ga.Data[ij]
				if math.Abs(num-want) > adtest.Tol*math.Max(math.Max(math.Abs(num), math.Abs(want)), adtest.Floor) {
					t.Fatalf("symmetric FD at [%d,%d,%d]: %v, 2·∇_A = %v", b, i, j, num, want)
				}
				checked++
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d symmetric entries checked", checked)
	}
}
