package autodiff

import (
	"math"
	"math/rand/v2"

	"github.com/fasd-db/fasd/fasd/pcg"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// Dropout zeroes each entry with probability p and scales the survivors by
// 1/(1−p) (inverted dropout). It draws one src.Uint64() per entry, in
// order: entry i is dropped when the low 53 bits of the i-th draw are below
// ⌈p·2^53⌉, the decision rand.New(src).Float64() < p makes on the same
// draw, and src is left where len(x) calls of src.Uint64 leave it. With src
// == nil (eval mode) or p == 0 it returns x unchanged.
//
// The draws are those of src, bit for bit, made in blocks by pcg.Fill
// (sixteen at once on AVX-512), and the keep-or-drop choice has no branch
// (tensor.DropMask: sixteen entries per step on AVX-512): a mask of random
// bits is the worst case for a branch predictor (TestDropoutStream).
func (t *Tape[T]) Dropout(x *Var[T], p float64, src *rand.PCG) *Var[T] {
	if src == nil || p <= 0 {
		return x
	}
	if !(p < 1) {
		panicShape("Dropout: p = %v", p)
	}
	out := t.newVar(x.Value.Shape, x.req)
	xs := x.Value.Data
	m := t.buf(len(xs))
	o := out.Value.Data[:len(xs)]
	keep := T(1 / (1 - p))
	// rng.Float64() < p decided on the 53-bit integer Float64 divides by
	// 2^53: the same draws and decisions without the conversion.
	thr := dropThreshold(p)
	hi, lo := pcg.Load(src)
	var draws [1024]uint64
	for base := 0; base < len(xs); base += len(draws) {
		r := draws[:min(len(draws), len(xs)-base)]
		hi, lo = pcg.Fill(hi, lo, r)
		tensor.DropMask(r, xs[base:base+len(r)], m[base:base+len(r)], o[base:base+len(r)], thr, keep)
	}
	pcg.Store(src, hi, lo)
	n := t.push(opDropout)
	n.out, n.a, n.aux = out, x, m
	return out
}

// dropThreshold is ⌈p·2^53⌉: Float64() = x/2^53 with x = Uint64() mod 2^53
// (exact), and x/2^53 < p ⟺ x < p·2^53 ⟺ x < ⌈p·2^53⌉ for an integer x.
func dropThreshold(p float64) uint64 { return uint64(math.Ceil(math.Ldexp(p, 53))) }

func (t *Tape[T]) bwDropout(n *node[T]) {
	if n.a.req {
		tensor.MulAcc(n.a.Grad, n.out.Grad, n.aux)
	}
}
