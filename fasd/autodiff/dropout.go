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
// (sixteen at once on AVX-512), and the keep-or-drop choice has no branch:
// a mask of random bits is the worst case for a branch predictor
// (TestDropoutStream).
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
	// ks[1] when dropped: x − thr wraps to a number with its top bit set
	// exactly when x < thr (both below 2^54), so no branch to mispredict.
	ks := [2]T{keep, 0}
	hi, lo := pcg.Load(src)
	var draws [1024]uint64
	for base := 0; base < len(xs); base += len(draws) {
		r := draws[:min(len(draws), len(xs)-base)]
		hi, lo = pcg.Fill(hi, lo, r)
		dropBlock(r, xs[base:base+len(r)], m[base:base+len(r)], o[base:base+len(r)], thr, &ks)
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

// dropBlock sets m[i] to ks[1] (0) where the draw r[i]'s low 53 bits are
// below thr and to ks[0] (the keep scale) elsewhere, and o[i] = x[i]·m[i].
// x, m and o have len(r) entries.
func dropBlock[T tensor.Float](r []uint64, x, m, o []T, thr uint64, ks *[2]T) {
	x, m, o = x[:len(r)], m[:len(r)], o[:len(r)]
	for i, d := range r {
		k := ks[(d&(1<<53-1)-thr)>>63]
		m[i] = k
		o[i] = x[i] * k
	}
}
