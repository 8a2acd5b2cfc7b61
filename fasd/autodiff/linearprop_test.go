package autodiff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd/tensor"
)

// TestLinearGCNProp_SameBits checks LinearGCNProp against the two calls it
// replaces, GCNProp(ahat, Linear(x, w, nil), bias): the same output and the
// same gradients of x, w, ahat and the bias, bit for bit, in float32 (the
// assembly GEMM) and float64, for blocks of one subgraph, several and all,
// with one and several channels, with and without a bias, and with a k above
// the GEMM's k-block (x·w summed in two slices).
func TestLinearGCNProp_SameBits(t *testing.T) {
	defer func(v int) { propBlockElems = v }(propBlockElems)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ bn, nn, c, g, in int }{
		{1, 1, 1, 1, 1},
		{3, 5, 1, 4, 3},
		{7, 6, 2, 11, 5},
		{9, 21, 3, 40, 32},
		{4, 8, 8, 12, 300},
		{0, 5, 1, 4, 3},
	} {
		for _, block := range []int{1, 17, 200, 64 << 10} {
			propBlockElems = block
			for _, withBias := range []bool{false, true} {
				for _, reqX := range []bool{false, true} {
					name := func() string {
						return fmt.Sprintf("B=%d N=%d C=%d G=%d D=%d", tc.bn, tc.nn, tc.c, tc.g, tc.in)
					}
					checkLinearGCNProp[float32](t, rng, tc.bn, tc.nn, tc.c, tc.g, tc.in, withBias, reqX, name)
					checkLinearGCNProp[float64](t, rng, tc.bn, tc.nn, tc.c, tc.g, tc.in, withBias, reqX, name)
				}
			}
		}
	}
}

func checkLinearGCNProp[T Float](t *testing.T, rng *rand.Rand, bn, nn, c, g, in int, withBias, reqX bool, name func() string) {
	t.Helper()
	fill := func(shape ...int) tensor.Dense[T] {
		d := tensor.New[T](shape...)
		for i := range d.Data {
			d.Data[i] = T(rng.Float64()*2 - 1)
		}
		return d
	}
	x, w, a, b := fill(bn, nn, in), fill(in, c*g), fill(bn, c, nn, nn), fill(c*g)
	weights := make([]T, bn*nn*c*g)
	for i := range weights {
		weights[i] = T(rng.Float64()*2 - 1)
	}
	type result struct{ out, gx, gw, ga, gb []T }
	run := func(fused bool) result {
		tp := NewTape[T]()
		tp.KeepGrads(true)
		xv, wv, av := tp.Input(x, reqX), tp.Input(w, true), tp.Input(a, true)
		var bv *Var[T]
		if withBias {
			bv = tp.Input(b, true)
		}
		var out *Var[T]
		if fused {
			out = tp.LinearGCNProp(av, xv, wv, bv)
		} else {
			out = tp.GCNProp(av, tp.Linear(xv, wv, nil), bv)
		}
		// A second use of x·w's inputs, so that the gradients accumulate.
		tp.Backward(tp.Add(tp.Dot(out, weights), tp.Sum(tp.Linear(xv, wv, nil))))
		cp := func(s []T) []T { return append([]T(nil), s...) }
		r := result{out: cp(out.Value.Data), gw: cp(wv.Grad), ga: cp(av.Grad)}
		if reqX {
			r.gx = cp(xv.Grad)
		}
		if withBias {
			r.gb = cp(bv.Grad)
		}
		return r
	}
	want, got := run(false), run(true)
	for _, f := range []struct {
		what      string
		want, got []T
	}{{"out", want.out, got.out}, {"∂x", want.gx, got.gx}, {"∂w", want.gw, got.gw}, {"∂ahat", want.ga, got.ga}, {"∂bias", want.gb, got.gb}} {
		if len(f.want) != len(f.got) {
			t.Fatalf("%s block %d bias %t: %s has %d values, want %d", name(), propBlockElems, withBias, f.what, len(f.got), len(f.want))
		}
		for i := range f.want {
			if math.Float64bits(float64(f.want[i])) != math.Float64bits(float64(f.got[i])) {
				t.Fatalf("%s (%T) block %d bias %t: %s[%d] = %v, want %v", name(), f.want[i], propBlockElems, withBias, f.what, i, f.got[i], f.want[i])
			}
		}
	}
}
