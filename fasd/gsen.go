package fasd

import (
	"errors"
	"fmt"
	"math"
)

// GSenWeights are the parameters of the sensitive-attribute predictor g_sen
// of §3 in float64, for the closed-form reference gradients:
//
//	P1 = Â·X·W1 + b1, H1 = relu(P1)    (GCN D→H1)
//	P2 = Â·H1·W2 + b2, H2 = relu(P2)   (GCN H1→H2)
//	P3 = H2·W3 + b3,  H3 = relu(P3)    (FC H2→H3)
//	z  = H3·w4 + b4                    (FC H3→1, a logit per node)
//
// Weight matrices are row-major with shape in×out (W1 is D×H1), so a layer
// computes H·W + b. The paper's sizes are H1, H2, H3 = 64, 32, 16.
type GSenWeights struct {
	D, H1, H2, H3 int
	W1, B1        []float64 // D×H1, H1
	W2, B2        []float64 // H1×H2, H2
	W3, B3        []float64 // H2×H3, H3
	W4            []float64 // H3 (the single output column)
	B4            float64
}

// Validate checks that every slice matches the stated sizes.
func (w *GSenWeights) Validate() error {
	var errs []error
	chk := func(name string, got, want int) {
		if got != want {
			errs = append(errs, fmt.Errorf("%w: g_sen %s has %d values, want %d", ErrShape, name, got, want))
		}
	}
	if w.D < 0 || w.H1 < 1 || w.H2 < 1 || w.H3 < 1 {
		errs = append(errs, fmt.Errorf("%w: g_sen sizes D=%d H=(%d,%d,%d)", ErrShape, w.D, w.H1, w.H2, w.H3))
	}
	chk("W1", len(w.W1), w.D*w.H1)
	chk("B1", len(w.B1), w.H1)
	chk("W2", len(w.W2), w.H1*w.H2)
	chk("B2", len(w.B2), w.H2)
	chk("W3", len(w.W3), w.H2*w.H3)
	chk("B3", len(w.B3), w.H3)
	chk("W4", len(w.W4), w.H3)
	return errors.Join(errs...)
}

// gsenPass holds one forward pass and what the backward pass needs.
type gsenPass struct {
	n          int
	at         []float64 // Ã: A with the diagonal overwritten by 1
	deg, r     []float64 // d_i = max(1, Σ_j Ã_ij), r_i = d_i^(−1/2)
	ah         []float64 // Â = diag(r)·Ã·diag(r)
	xw1, p1, h []float64 // X·W1, P1, H1
	h1w2, p2   []float64 // H1·W2, P2
	h2, p3, h3 []float64
	z          []float64
}

// matMul returns a (n×k) · b (k×m) as n×m.
func matMul(a, b []float64, n, k, m int) []float64 {
	c := make([]float64, n*m)
	for i := range n {
		for l := range k {
			av := a[i*k+l]
			if av == 0 {
				continue
			}
			for j := range m {
				c[i*m+j] += av * b[l*m+j]
			}
		}
	}
	return c
}

// matMulTA returns aᵀ · b for a (k×n) and b (k×m), as n×m.
func matMulTA(a, b []float64, k, n, m int) []float64 {
	c := make([]float64, n*m)
	for l := range k {
		for i := range n {
			av := a[l*n+i]
			if av == 0 {
				continue
			}
			for j := range m {
				c[i*m+j] += av * b[l*m+j]
			}
		}
	}
	return c
}

// matMulTB returns a · bᵀ for a (n×k) and b (m×k), as n×m.
func matMulTB(a, b []float64, n, k, m int) []float64 {
	c := make([]float64, n*m)
	for i := range n {
		for j := range m {
			s := 0.0
			for l := range k {
				s += a[i*k+l] * b[j*k+l]
			}
			c[i*m+j] = s
		}
	}
	return c
}

func addBiasRelu(p, bias []float64, m int) (pre, post []float64) {
	post = make([]float64, len(p))
	for i := range p {
		p[i] += bias[i%m]
		post[i] = math.Max(p[i], 0)
	}
	return p, post
}

// gsenForward runs g_sen in eval mode. The GCN normalisation is the one of
// §3 with row-sum degrees, which also covers non-symmetric A (the raw
// finite-difference tests perturb single entries).
func gsenForward(w *GSenWeights, x, a []float64, n int) *gsenPass {
	p := &gsenPass{n: n}
	p.at = append([]float64(nil), a...)
	p.deg = make([]float64, n)
	p.r = make([]float64, n)
	for i := range n {
		p.at[i*n+i] = 1
		s := 0.0
		for j := range n {
			s += p.at[i*n+j]
		}
		p.deg[i] = math.Max(1, s)
		p.r[i] = 1 / math.Sqrt(p.deg[i])
	}
	p.ah = make([]float64, n*n)
	for i := range n {
		for j := range n {
			p.ah[i*n+j] = p.r[i] * p.at[i*n+j] * p.r[j]
		}
	}
	p.xw1 = matMul(x, w.W1, n, w.D, w.H1)
	p.p1, p.h = addBiasRelu(matMul(p.ah, p.xw1, n, n, w.H1), w.B1, w.H1)
	p.h1w2 = matMul(p.h, w.W2, n, w.H1, w.H2)
	p.p2, p.h2 = addBiasRelu(matMul(p.ah, p.h1w2, n, n, w.H2), w.B2, w.H2)
	p.p3, p.h3 = addBiasRelu(matMul(p.h2, w.W3, n, w.H2, w.H3), w.B3, w.H3)
	p.z = matMul(p.h3, w.W4, n, w.H3, 1)
	for i := range p.z {
		p.z[i] += w.B4
	}
	return p
}

// bceLogit returns the binary cross-entropy of logit z for target s ∈ {0,1}:
// softplus(z) − s·z, computed stably.
func bceLogit(z float64, s int8) float64 {
	return math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))) - float64(s)*z
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

func gsenCheck(w *GSenWeights, x, a []float64, n int, s []int8) error {
	if err := w.Validate(); err != nil {
		return err
	}
	if n < 1 || len(x) != n*w.D || len(a) != n*n || len(s) != n {
		return fmt.Errorf("%w: g_sen input N=%d D=%d with |X|=%d |A|=%d |s|=%d", ErrShape, n, w.D, len(x), len(a), len(s))
	}
	return nil
}

// GSenLogits writes g_sen's logit per node into dst (len n), in eval mode.
func GSenLogits(w *GSenWeights, x, a []float64, n int, dst []float64) error {
	if err := gsenCheck(w, x, a, n, make([]int8, n)); err != nil {
		return err
	}
	if len(dst) != n {
		return fmt.Errorf("%w: %d logits for %d nodes", ErrShape, len(dst), n)
	}
	copy(dst, gsenForward(w, x, a, n).z)
	return nil
}

// GSenLoss returns L_sen(X, A) = Σ over nodes with known s (s ≥ 0) of the
// binary cross-entropy of g_sen's logit: a sum over the subgraph, as in the
// paper.
func GSenLoss(w *GSenWeights, x, a []float64, n int, s []int8) (float64, error) {
	if err := gsenCheck(w, x, a, n, s); err != nil {
		return 0, err
	}
	return gsenLoss(gsenForward(w, x, a, n), s), nil
}

func gsenLoss(p *gsenPass, s []int8) float64 {
	l := 0.0
	for i, z := range p.z {
		if s[i] >= 0 {
			l += bceLogit(z, s[i])
		}
	}
	return l
}

// GSenGradients computes L_sen and its gradients with respect to X (into gx,
// n×D) and A (into ga, n×n) by the closed form of §3, in float64:
//
//	δz = σ(z) − s (0 where s is unknown)
//	δP3 = (δz·w4ᵀ) ⊙ 1[P3>0];  δP2 = (δP3·W3ᵀ) ⊙ 1[P2>0]
//	δP1 = (Âᵀ·δP2·W2ᵀ) ⊙ 1[P1>0];  ∇_X = Âᵀ·δP1·W1ᵀ
//	M = δP1·(X·W1)ᵀ + δP2·(H1·W2)ᵀ
//	c_i = Σ_j M_ij·Ã_ij·r_j + Σ_k M_ki·Ã_ki·r_k
//	G_ij = r_i·r_j·M_ij − ½·r_i³·c_i·1[d_i > 1] (i ≠ j),  G_ii = 0
//	∇_A = ½(G + Gᵀ)
//
// ∇_A is the gradient restricted to symmetric matrices: symmetric, zero
// diagonal, and dense (non-zero on non-edges too). It is the reference the
// autodiff implementation is compared with.
func GSenGradients(w *GSenWeights, x, a []float64, n int, s []int8, gx, ga []float64) (float64, error) {
	if err := gsenCheck(w, x, a, n, s); err != nil {
		return 0, err
	}
	if len(gx) != n*w.D || len(ga) != n*n {
		return 0, fmt.Errorf("%w: gradient buffers |gx|=%d |ga|=%d for N=%d D=%d", ErrShape, len(gx), len(ga), n, w.D)
	}
	p := gsenForward(w, x, a, n)
	dX, g := gsenBackward(w, p, s)
	copy(gx, dX)
	for i := range n {
		for j := range n {
			ga[i*n+j] = 0.5 * (g[i*n+j] + g[j*n+i])
		}
		ga[i*n+i] = 0
	}
	return gsenLoss(p, s), nil
}

// gsenBackward returns ∇_X L_sen and the raw (non-symmetrised) ∂L/∂A.
func gsenBackward(w *GSenWeights, p *gsenPass, s []int8) (dX, g []float64) {
	n := p.n
	dz := make([]float64, n)
	for i, z := range p.z {
		if s[i] >= 0 {
			dz[i] = sigmoid(z) - float64(s[i])
		}
	}
	dP3 := matMul(dz, w.W4, n, 1, w.H3) // δz·w4ᵀ: w4 as a 1×H3 row
	reluMask(dP3, p.p3)
	dP2 := matMulTB(dP3, w.W3, n, w.H3, w.H2)
	reluMask(dP2, p.p2)
	dH1W2 := matMulTA(p.ah, dP2, n, n, w.H2) // Âᵀ·δP2
	dP1 := matMulTB(dH1W2, w.W2, n, w.H2, w.H1)
	reluMask(dP1, p.p1)
	dXW1 := matMulTA(p.ah, dP1, n, n, w.H1) // Âᵀ·δP1
	dX = matMulTB(dXW1, w.W1, n, w.H1, w.D)

	m := matMulTB(dP1, p.xw1, n, w.H1, n)
	m2 := matMulTB(dP2, p.h1w2, n, w.H2, n)
	for i := range m {
		m[i] += m2[i]
	}
	c := make([]float64, n)
	for i := range n {
		for j := range n {
			c[i] += m[i*n+j] * p.at[i*n+j] * p.r[j]
			c[i] += m[j*n+i] * p.at[j*n+i] * p.r[j]
		}
	}
	g = make([]float64, n*n)
	for i := range n {
		corr := 0.0
		if p.deg[i] > 1 {
			corr = 0.5 * p.r[i] * p.r[i] * p.r[i] * c[i]
		}
		for j := range n {
			if i != j {
				g[i*n+j] = p.r[i]*p.r[j]*m[i*n+j] - corr
			}
		}
	}
	return dX, g
}

func reluMask(d, pre []float64) {
	for i := range d {
		if !(pre[i] > 0) {
			d[i] = 0
		}
	}
}
