package autodiff

import (
	"math"

	"github.com/fasd-db/fasd/fasd/tensor"
)

// squareMats returns (number of matrices, N) for a tensor whose last two
// dimensions are N×N.
func squareMats(s tensor.Shape, op string) (int, int) {
	if !(s.Rank() >= 2 && s.Dim(-1) == s.Dim(-2)) {
		panicShape("%s: %v is not a stack of square matrices", op, s)
	}
	nn := s.Dim(-1)
	if nn == 0 {
		return 0, 0
	}
	return s.Len() / (nn * nn), nn
}

// GCNNorm returns the GCN-normalised adjacency of every matrix in a (…, N, N):
// Ã is a with its diagonal overwritten by 1, d_i = max(1, Σ_j Ã_ij),
// r_i = d_i^{-1/2} and the result is r_i·Ã_ij·r_j. The gradient flows to the
// off-diagonal entries of a (the diagonal is overwritten) and through the
// degrees where d_i > 1 (the clamp is flat elsewhere). Weighted and negative
// entries are allowed.
func (t *Tape[T]) GCNNorm(a *Var[T]) *Var[T] {
	mats, nn := squareMats(a.Value.Shape, "GCNNorm")
	out := t.newVar(a.Value.Shape, a.req)
	r := t.buf(mats * nn)
	unc := t.buf(mats * nn)
	ad, od := a.Value.Data, out.Value.Data
	for m := 0; m < mats; m++ {
		am, om := ad[m*nn*nn:(m+1)*nn*nn], od[m*nn*nn:(m+1)*nn*nn]
		rm, um := r[m*nn:(m+1)*nn], unc[m*nn:(m+1)*nn]
		for i := 0; i < nn; i++ {
			d := T(1)
			row := am[i*nn : (i+1)*nn]
			for j, v := range row {
				if j != i {
					d += v
				}
			}
			um[i] = 0
			if d > 1 {
				um[i] = 1
			} else {
				d = 1
			}
			rm[i] = T(1 / math.Sqrt(float64(d)))
		}
		for i := 0; i < nn; i++ {
			ri := rm[i]
			row, orow := am[i*nn:(i+1)*nn], om[i*nn:(i+1)*nn]
			for j, v := range row {
				orow[j] = ri * v * rm[j]
			}
			orow[i] = ri * ri
		}
	}
	n := t.push(opGCNNorm)
	n.out, n.a = out, a
	n.aux, n.aux2 = r, unc
	n.i[0], n.i[1] = mats, nn
	return out
}

func (t *Tape[T]) bwGCNNorm(n *node[T]) {
	if !n.a.req {
		return
	}
	mats, nn := n.i[0], n.i[1]
	ad, g, ga := n.a.Value.Data, n.out.Grad, n.a.Grad
	cbuf := t.buf(nn)
	for m := 0; m < mats; m++ {
		off := m * nn * nn
		am, gm, gam := ad[off:off+nn*nn], g[off:off+nn*nn], ga[off:off+nn*nn]
		rm, um := n.aux[m*nn:(m+1)*nn], n.aux2[m*nn:(m+1)*nn]
		// c_i = ∂L/∂r_i = Σ_j G_ij·Ã_ij·r_j + Σ_k G_ki·Ã_ki·r_k.
		clear(cbuf)
		for i := 0; i < nn; i++ {
			ri := rm[i]
			var s T
			for j := 0; j < nn; j++ {
				at := am[i*nn+j]
				if j == i {
					at = 1
				}
				p := gm[i*nn+j] * at
				s += p * rm[j]
				cbuf[j] += p * ri
			}
			cbuf[i] += s
		}
		for i := 0; i < nn; i++ {
			ri := rm[i]
			corr := -0.5 * ri * ri * ri * cbuf[i] * um[i]
			grow, garow := gm[i*nn:(i+1)*nn], gam[i*nn:(i+1)*nn]
			for j := 0; j < nn; j++ {
				if j != i {
					garow[j] += grow[j]*ri*rm[j] + corr
				}
			}
		}
	}
}

// GCNProp propagates per-channel column blocks through normalised channel
// matrices: ahat is (B, C, N, N) (or (B, N, N) for C = 1), p is (B, N, C·G),
// bias is (C·G) or nil, and out[b, :, cG:(c+1)G] = ahat[b,c]·p[b, :, cG:(c+1)G]
// + bias. With C = 1 it is the propagation step Â·(H·W) + b of a GCN layer.
func (t *Tape[T]) GCNProp(ahat, p, bias *Var[T]) *Var[T] {
	ps := p.Value.Shape
	bn, c, nn, g := gcnPropShape(ahat.Value.Shape, ps, bias, "GCNProp")
	out := t.newVar(ps, anyReq(ahat, p, bias))
	t.gcnPropItems(out, ahat, p, bias, 0, bn, c, g)
	t.pushGCNProp(out, ahat, p, bias, bn, c, nn, g)
	return out
}

// LinearGCNProp is GCNProp(ahat, Linear(x, w, nil), bias) for x (B, N, D)
// and w (D, C·G), computed a few subgraphs at a time: each block of x·w is
// propagated while it is still in cache, instead of after the whole (B, N,
// C·G) product has been written out. It records the same two operations
// with the same values (a row of x·w does not depend on the other rows), so
// values and gradients are those of the two calls, bit for bit.
func (t *Tape[T]) LinearGCNProp(ahat, x, w, bias *Var[T]) *Var[T] {
	xs, ws := x.Value.Shape, w.Value.Shape
	if !(ws.Rank() == 2 && xs.Rank() == 3 && xs.Dim(2) == ws.Dim(0)) {
		panicShape("LinearGCNProp: x %v, w %v", xs, ws)
	}
	in, cg := ws.Dim(0), ws.Dim(1)
	ps := xs.WithDim(-1, cg)
	bn, c, nn, g := gcnPropShape(ahat.Value.Shape, ps, bias, "LinearGCNProp")
	p := t.newVar(ps, anyReq(x, w))
	out := t.newVar(ps, anyReq(ahat, p, bias))
	xd, wd, pd := x.Value.Data, w.Value.Data, p.Value.Data
	step := max(1, propBlockElems/max(1, nn*cg))
	for b0 := 0; b0 < bn; b0 += step {
		b1 := min(bn, b0+step)
		t.gemm(false, false, (b1-b0)*nn, cg, in, 1, xd[b0*nn*in:], in, wd, cg, 0, pd[b0*nn*cg:], cg)
		t.gcnPropItems(out, ahat, p, bias, b0, b1, c, g)
	}
	n := t.push(opLinear)
	n.out, n.a, n.b, n.c = p, x, w, nil
	n.i[0], n.i[1], n.i[2] = bn*nn, in, cg
	t.pushGCNProp(out, ahat, p, bias, bn, c, nn, g)
	return out
}

// propBlockElems is about how many values of x·w LinearGCNProp computes
// before propagating them (256 KiB of float32, as much again for the
// output): a block that stays in a core's L2.
var propBlockElems = 64 << 10

// gcnPropShape checks GCNProp's operands and returns the number of
// subgraphs B, channels C, nodes N and columns per channel G.
func gcnPropShape[T Float](as, ps tensor.Shape, bias *Var[T], op string) (bn, c, nn, g int) {
	mats, nn := squareMats(as, op)
	if !(ps.Rank() == 3 && ps.Dim(0) == as.Dim(0) && ps.Dim(1) == nn) {
		panicShape("%s: ahat %v, p %v", op, as, ps)
	}
	bn = ps.Dim(0)
	c = 1
	if bn > 0 {
		c = mats / bn
	}
	cg := ps.Dim(2)
	if !(c > 0 && cg%c == 0) {
		panicShape("%s: %d columns for %d channels", op, cg, c)
	}
	if bias != nil && !(bias.Value.Shape.Len() == cg) {
		panicShape("%s: bias %v for %d columns", op, bias.Value.Shape, cg)
	}
	return bn, c, nn, cg / c
}

// gcnPropItems computes GCNProp's output for subgraphs [b0, b1).
func (t *Tape[T]) gcnPropItems(out, ahat, p, bias *Var[T], b0, b1, c, g int) {
	nn := p.Value.Shape.Dim(1)
	cg := c * g
	od, ad, pd := out.Value.Data, ahat.Value.Data, p.Value.Data
	var beta T
	if bias != nil {
		for r := b0 * nn; r < b1*nn; r++ {
			copy(od[r*cg:(r+1)*cg], bias.Value.Data)
		}
		beta = 1
	}
	for bi := b0; bi < b1; bi++ {
		for ci := 0; ci < c; ci++ {
			ao := (bi*c + ci) * nn * nn
			po := bi*nn*cg + ci*g
			t.gemm(false, false, nn, g, nn, 1, ad[ao:], nn, pd[po:], cg, beta, od[po:], cg)
		}
	}
}

func (t *Tape[T]) pushGCNProp(out, ahat, p, bias *Var[T], bn, c, nn, g int) {
	nd := t.push(opGCNProp)
	nd.out, nd.a, nd.b, nd.c = out, ahat, p, bias
	nd.i[0], nd.i[1], nd.i[2], nd.i[3] = bn, c, nn, g
}

func (t *Tape[T]) bwGCNProp(n *node[T]) {
	ahat, p, bias, gy := n.a, n.b, n.c, n.out.Grad
	bn, c, nn, g := n.i[0], n.i[1], n.i[2], n.i[3]
	cg := c * g
	// The (bi, ci) blocks cover p.Grad and ahat.Grad: the first writer of
	// each overwrites.
	var bp, ba T
	if p.req {
		bp = accBeta(p)
	}
	if ahat.req {
		ba = accBeta(ahat)
	}
	for bi := 0; bi < bn; bi++ {
		for ci := 0; ci < c; ci++ {
			ao := (bi*c + ci) * nn * nn
			po := bi*nn*cg + ci*g
			if p.req {
				t.gemm(true, false, nn, g, nn, 1, ahat.Value.Data[ao:], nn, gy[po:], cg, bp, p.Grad[po:], cg)
			}
			if ahat.req {
				t.gemm(false, true, nn, nn, g, 1, gy[po:], cg, p.Value.Data[po:], cg, ba, ahat.Grad[ao:], nn)
			}
		}
	}
	if bias != nil && bias.req {
		t.ready(bias)
		colSumAdd(bias.Grad, gy, bn*nn, cg)
	}
}

// Attention computes the GMH attention maps of s_φ for C channels at once.
// qkv is (B, N, C·G) with, per channel c, the column block
// [q (dk) | k (dk) | v (G−2dk)] starting at c·G. Q and K are split into heads
// of dk/heads columns; per head S = tanh(scale·Q_h·K_hᵀ), the heads are
// averaged and the map is symmetrised: out[b,c] = ½(M + Mᵀ), M = mean_h S_h.
// The result is (B, C, N, N). No mask is applied.
func (t *Tape[T]) Attention(qkv *Var[T], c, heads, dk int, scale T) *Var[T] {
	qs := qkv.Value.Shape
	if !(qs.Rank() == 3 && c > 0 && qs.Dim(2)%c == 0) {
		panicShape("Attention: qkv %v for %d channels", qs, c)
	}
	bn, nn, cg := qs.Dim(0), qs.Dim(1), qs.Dim(2)
	g := cg / c
	if !(heads > 0 && dk%heads == 0 && 2*dk <= g) {
		panicShape("Attention: dk %d, heads %d, group %d", dk, heads, g)
	}
	dh := dk / heads
	out := t.newVar(tensor.S(bn, c, nn, nn), qkv.req)
	s := t.buf(bn * c * heads * nn * nn)
	od, qd := out.Value.Data, qkv.Value.Data
	invH := 1 / T(heads)
	// The mean over heads accumulates m += tanh(·)·(1/heads) through
	// tensor.MulAcc (the product rounded before the sum, as the plain loop).
	invHs := t.buf(nn * nn)
	for i := range invHs {
		invHs[i] = invH
	}
	// Subgraphs of at most tensor.NTCols nodes take the small-product
	// kernel where it runs (the same bits as gemm): K's dk columns packed
	// once per channel, one product per head.
	var kt []T
	if nn <= tensor.NTCols && tensor.HaveGemmNT[T]() {
		kt = t.zbuf(dk * tensor.NTCols)
	}
	for bi := 0; bi < bn; bi++ {
		for ci := 0; ci < c; ci++ {
			m := od[(bi*c+ci)*nn*nn : (bi*c+ci+1)*nn*nn]
			clear(m)
			if kt != nil {
				tensor.PackNT(kt, qd[bi*nn*cg+ci*g+dk:], cg, nn, dk)
			}
			for h := 0; h < heads; h++ {
				sh := s[((bi*c+ci)*heads+h)*nn*nn : ((bi*c+ci)*heads+h+1)*nn*nn]
				qo := bi*nn*cg + ci*g + h*dh
				ko := qo + dk
				if kt != nil {
					tensor.GemmNT(nn, nn, dh, scale, qd[qo:], cg, kt[h*dh*tensor.NTCols:], sh, nn)
					t.flops += 2 * int64(nn) * int64(nn) * int64(dh)
				} else {
					t.gemm(false, true, nn, nn, dh, scale, qd[qo:], cg, qd[ko:], cg, 0, sh, nn)
				}
				tensor.TanhTo(sh, sh)
				tensor.MulAcc(m, sh, invHs)
			}
			for i := 0; i < nn; i++ {
				for j := i + 1; j < nn; j++ {
					v := (m[i*nn+j] + m[j*nn+i]) / 2
					m[i*nn+j], m[j*nn+i] = v, v
				}
			}
		}
	}
	out.sym = true
	nd := t.push(opAttention)
	nd.out, nd.a = out, qkv
	nd.aux = s
	nd.aux2 = t.buf(2 * nn * nn)
	nd.i = [4]int{c, heads, dk, 0}
	nd.f = scale
	return out
}

func (t *Tape[T]) bwAttention(n *node[T]) {
	qkv := n.a
	if !qkv.req {
		return
	}
	c, heads, dk := n.i[0], n.i[1], n.i[2]
	qs := qkv.Value.Shape
	bn, nn, cg := qs.Dim(0), qs.Dim(1), qs.Dim(2)
	g, dh, scale := cg/c, dk/heads, n.f
	dm, dpre := n.aux2[:nn*nn], n.aux2[nn*nn:]
	gy, qd, gq := n.out.Grad, qkv.Value.Data, qkv.Grad
	invH := 1 / T(heads)
	// First writer: every Q and K column block is written by exactly one
	// product below, so those run with beta 0 and only the rest of each
	// group (V) is zeroed.
	var beta T = 1
	if first(qkv) {
		beta = 0
		for r := 0; r < bn*nn; r++ {
			for ci := 0; ci < c; ci++ {
				clear(gq[r*cg+ci*g+2*dk : r*cg+(ci+1)*g])
			}
		}
	}
	for bi := 0; bi < bn; bi++ {
		for ci := 0; ci < c; ci++ {
			go_ := gy[(bi*c+ci)*nn*nn : (bi*c+ci+1)*nn*nn]
			// dM = ½(dOut + dOutᵀ), folded with the 1/heads of the mean.
			for i := 0; i < nn; i++ {
				for j := 0; j < nn; j++ {
					dm[i*nn+j] = (go_[i*nn+j] + go_[j*nn+i]) * 0.5 * invH
				}
			}
			for h := 0; h < heads; h++ {
				sh := n.aux[((bi*c+ci)*heads+h)*nn*nn : ((bi*c+ci)*heads+h+1)*nn*nn]
				for i, v := range sh {
					dpre[i] = dm[i] * (1 - v*v)
				}
				qo := bi*nn*cg + ci*g + h*dh
				ko := qo + dk
				t.gemm(false, false, nn, dh, nn, scale, dpre, nn, qd[ko:], cg, beta, gq[qo:], cg)
				t.gemm(true, false, nn, dh, nn, scale, dpre, nn, qd[qo:], cg, beta, gq[ko:], cg)
			}
		}
	}
}

// Transpose swaps the last two dimensions of every matrix in x (…, R, C).
func (t *Tape[T]) Transpose(x *Var[T]) *Var[T] {
	xs := x.Value.Shape
	if !(xs.Rank() >= 2) {
		panicShape("Transpose: rank %d", xs.Rank())
	}
	r, c := xs.Dim(-2), xs.Dim(-1)
	os := xs.WithDim(-2, c).WithDim(-1, r)
	out := t.newVar(os, x.req)
	mats := 0
	if r*c > 0 {
		mats = xs.Len() / (r * c)
	}
	transposeMats(out.Value.Data, x.Value.Data, mats, r, c, false)
	n := t.push(opTranspose)
	n.out, n.a = out, x
	n.i[0], n.i[1], n.i[2] = mats, r, c
	return out
}

// transposeMats writes (or, with add, adds) the transpose of each r×c matrix
// of src into dst.
func transposeMats[T Float](dst, src []T, mats, r, c int, add bool) {
	for m := 0; m < mats; m++ {
		s, d := src[m*r*c:(m+1)*r*c], dst[m*r*c:(m+1)*r*c]
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				if add {
					d[j*r+i] += s[i*c+j]
				} else {
					d[j*r+i] = s[i*c+j]
				}
			}
		}
	}
}

func (t *Tape[T]) bwTranspose(n *node[T]) {
	if n.a.req {
		// out is c×r per matrix; its transpose adds back into the r×c input.
		transposeMats(n.a.Grad, n.out.Grad, n.i[0], n.i[2], n.i[1], !first(n.a))
	}
}

// Symmetrize returns s·(X + Xᵀ) for every square matrix X of x.
func (t *Tape[T]) Symmetrize(x *Var[T], s T) *Var[T] {
	mats, nn := squareMats(x.Value.Shape, "Symmetrize")
	out := t.newVar(x.Value.Shape, x.req)
	symMats(out.Value.Data, x.Value.Data, mats, nn, s, false)
	n := t.push(opSymmetrize)
	n.out, n.a, n.f = out, x, s
	n.i[0], n.i[1] = mats, nn
	return out
}

func symMats[T Float](dst, src []T, mats, nn int, s T, add bool) {
	for m := 0; m < mats; m++ {
		x, d := src[m*nn*nn:(m+1)*nn*nn], dst[m*nn*nn:(m+1)*nn*nn]
		for i := 0; i < nn; i++ {
			for j := 0; j < nn; j++ {
				v := s * (x[i*nn+j] + x[j*nn+i])
				if add {
					d[i*nn+j] += v
				} else {
					d[i*nn+j] = v
				}
			}
		}
	}
}

func (t *Tape[T]) bwSymmetrize(n *node[T]) {
	if n.a.req {
		symMats(n.a.Grad, n.out.Grad, n.i[0], n.i[1], n.f, !first(n.a))
	}
}

// SetDiag returns x with the diagonal of every square matrix overwritten by v
// (no gradient flows to the overwritten entries). SetDiag(x, 0) zeroes the
// diagonal.
func (t *Tape[T]) SetDiag(x *Var[T], v T) *Var[T] {
	mats, nn := squareMats(x.Value.Shape, "SetDiag")
	out := t.newVar(x.Value.Shape, x.req)
	copy(out.Value.Data, x.Value.Data)
	for m := 0; m < mats; m++ {
		for i := 0; i < nn; i++ {
			out.Value.Data[m*nn*nn+i*nn+i] = v
		}
	}
	n := t.push(opSetDiag)
	n.out, n.a = out, x
	n.i[0], n.i[1] = mats, nn
	return out
}

func (t *Tape[T]) bwSetDiag(n *node[T]) {
	if !n.a.req {
		return
	}
	mats, nn := n.i[0], n.i[1]
	g := n.out.Grad
	for m := 0; m < mats; m++ {
		for i := 0; i < nn; i++ {
			for j := 0; j < nn; j++ {
				if i != j {
					n.a.Grad[m*nn*nn+i*nn+j] += g[m*nn*nn+i*nn+j]
				}
			}
		}
	}
}

// MaskNodes multiplies row n of every subgraph b of x (B, N, F) by
// mask[b·N+n] (GDSS mask_x).
func (t *Tape[T]) MaskNodes(x *Var[T], mask []T) *Var[T] {
	xs := x.Value.Shape
	if !(xs.Rank() == 3 && len(mask) == xs.Dim(0)*xs.Dim(1)) {
		panicShape("MaskNodes: x %v, mask %d", xs, len(mask))
	}
	f := xs.Dim(2)
	out := t.newVar(xs, x.req)
	for r, mv := range mask {
		src, dst := x.Value.Data[r*f:(r+1)*f], out.Value.Data[r*f:(r+1)*f]
		for j, v := range src {
			dst[j] = v * mv
		}
	}
	n := t.push(opMaskNodes)
	n.out, n.a, n.cst = out, x, mask
	n.i[0] = f
	return out
}

func (t *Tape[T]) bwMaskNodes(n *node[T]) {
	if !n.a.req {
		return
	}
	f := n.i[0]
	add := !first(n.a)
	for r, mv := range n.cst {
		g, ga := n.out.Grad[r*f:(r+1)*f], n.a.Grad[r*f:(r+1)*f]
		if !add {
			for j, v := range g {
				ga[j] = v * mv
			}
			continue
		}
		for j, v := range g {
			ga[j] += v * mv
		}
	}
}

// MaskPairs multiplies entry (u,v) of every matrix of subgraph b of x
// ((B, N, N) or (B, C, N, N)) by mask[b,u]·mask[b,v] (GDSS mask_adjs); with
// zeroDiag the diagonal is zeroed as well.
func (t *Tape[T]) MaskPairs(x *Var[T], mask []T, zeroDiag bool) *Var[T] {
	xs := x.Value.Shape
	mats, nn := squareMats(xs, "MaskPairs")
	bn := xs.Dim(0)
	if !(len(mask) == bn*nn) {
		panicShape("MaskPairs: x %v, mask %d", xs, len(mask))
	}
	out := t.newVar(xs, x.req)
	maskPairs(out.Value.Data, x.Value.Data, mask, mats, bn, nn, zeroDiag, false)
	// v·(m_i·m_j) is v·(m_j·m_i): masking keeps a symmetric value so.
	out.sym = x.sym
	n := t.push(opMaskPairs)
	n.out, n.a, n.cst = out, x, mask
	n.i[0], n.i[1], n.i[2] = mats, bn, nn
	if zeroDiag {
		n.i[3] = 1
	}
	return out
}

func maskPairs[T Float](dst, src, mask []T, mats, bn, nn int, zeroDiag, add bool) {
	per := 1
	if bn > 0 {
		per = mats / bn
	}
	for m := 0; m < mats; m++ {
		mk := mask[(m/per)*nn : (m/per+1)*nn]
		s, d := src[m*nn*nn:(m+1)*nn*nn], dst[m*nn*nn:(m+1)*nn*nn]
		for i := 0; i < nn; i++ {
			srow, drow, mi := s[i*nn:(i+1)*nn], d[i*nn:(i+1)*nn], mk[i]
			diag := drow[i]
			if add {
				for j, v := range srow {
					drow[j] += v * (mi * mk[j])
				}
			} else {
				for j, v := range srow {
					drow[j] = v * (mi * mk[j])
				}
			}
			if zeroDiag {
				// Weight 0 on the diagonal: nothing added, or a zero written.
				if add {
					drow[i] = diag
				} else {
					drow[i] = 0
				}
			}
		}
	}
}

func (t *Tape[T]) bwMaskPairs(n *node[T]) {
	if n.a.req {
		maskPairs(n.a.Grad, n.out.Grad, n.cst, n.i[0], n.i[1], n.i[2], n.i[3] == 1, !first(n.a))
	}
}
