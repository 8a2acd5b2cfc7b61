package autodiff_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// Gradient buffers are not zeroed when recorded: the first backward writer
// overwrites them. These cases check that stale arena memory never leaks into
// a gradient: inputs used twice by one op, a value no gradient reaches, a view
// (Reshape), and a tape whose arena holds the previous step's gradients;
// with pooled intermediate gradients (the default) and with KeepGrads.
func TestBackward_FirstWriterOverwrites(t *testing.T) {
	for _, keep := range []bool{false, true} {
		firstWriterOverwrites(t, keep)
	}
}

func firstWriterOverwrites(t *testing.T, keep bool) {
	rng := rand.New(rand.NewPCG(11, 12))
	randT := func(dims ...int) tensor.Dense[float64] {
		d := tensor.New[float64](dims...)
		for i := range d.Data {
			d.Data[i] = rng.Float64()*2 - 1
		}
		return d
	}
	const n = 3
	type result struct{ gx, ga, gunused []float64 }
	run := func(tp *autodiff.Tape[float64], x, a tensor.Dense[float64]) result {
		tp.Reset()
		tp.KeepGrads(keep)
		xv := tp.Input(x, true)
		av := tp.Input(a, true)
		h := tp.Scale(xv, 1.5) // intermediate: pending gradient buffer
		unused := tp.Scale(h, 2)
		aa := tp.Scale(av, 1)
		cat := tp.ConcatLast(h, h) // h twice in one op
		mm := tp.MatMul(aa, aa)    // aa as both operands
		sm := tp.Scale(mm, 1)
		r := tp.Reshape(sm, tensor.S(1, n*n))
		loss := tp.Add(tp.Sum(cat), tp.Sum(tp.Scale(r, 0.5)))
		tp.Backward(loss)
		if !keep && (unused.Grad != nil || h.Grad != nil || mm.Grad != nil) {
			t.Fatalf("pooled intermediate gradients still bound after Backward")
		}
		if keep && (unused.Grad == nil || h.Grad == nil) {
			t.Fatalf("KeepGrads: no gradient buffer for an intermediate value")
		}
		if sm.Grad == nil || r.Grad == nil {
			t.Fatalf("a reshaped value and its view must keep their gradient")
		}
		return result{append([]float64(nil), xv.Grad...), append([]float64(nil), av.Grad...), append([]float64(nil), unused.Grad...)}
	}
	// Reference: d/dx Σ[1.5x, 1.5x] = 3; d/dA ½Σ(A·A) = ½(1·1ᵀ·Aᵀ + Aᵀ·1·1ᵀ).
	want := func(a tensor.Dense[float64]) []float64 {
		g := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for k := 0; k < n; k++ {
					s += a.Data[j*n+k] + a.Data[k*n+i]
				}
				g[i*n+j] = s / 2
			}
		}
		return g
	}
	tp := autodiff.NewTape[float64]()
	for step := 0; step < 3; step++ {
		x, a := randT(1, n, 2), randT(1, n, n)
		got := run(tp, x, a)
		fresh := run(autodiff.NewTape[float64](), x, a)
		for i, v := range got.gx {
			if v != 3 || fresh.gx[i] != 3 {
				t.Fatalf("keep %v, step %d: dx[%d] = %v (fresh tape %v), want 3", keep, step, i, v, fresh.gx[i])
			}
		}
		for i, w := range want(a) {
			if math.Abs(got.ga[i]-w) > 1e-12 || got.ga[i] != fresh.ga[i] {
				t.Fatalf("keep %v, step %d: dA[%d] = %v (fresh tape %v), want %v", keep, step, i, got.ga[i], fresh.ga[i], w)
			}
		}
		for i, v := range got.gunused {
			if v != 0 {
				t.Fatalf("keep %v, step %d: gradient of an unused value [%d] = %v, want 0", keep, step, i, v)
			}
		}
	}
}

// ensure that an activation that is the first gradient writer of its input
// sets (not adds) the gradient on a reused tape, for every activation.
func TestBackward_ActFirstWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	tp := autodiff.NewTape[float32]()
	for _, act := range []autodiff.Activation{autodiff.ReLU, autodiff.ELU, autodiff.Tanh, autodiff.Sigmoid} {
		for step := 0; step < 3; step++ {
			x := tensor.New[float32](3, 7) // 21 values: AVX2 lanes and a tail
			for i := range x.Data {
				x.Data[i] = float32(rng.Float64()*4 - 2)
			}
			tp.Reset()
			xv := tp.Input(x, true)
			h := tp.Scale(xv, 1) // pending gradient buffer, written first by Act
			y := tp.Act(h, act)
			tp.Backward(tp.Sum(y))
			for i, g := range xv.Grad {
				v := float64(y.Value.Data[i])
				var want float64
				switch act {
				case autodiff.ReLU:
					if v > 0 {
						want = 1
					}
				case autodiff.ELU:
					want = 1
					if v <= 0 {
						want = v + 1
					}
				case autodiff.Tanh:
					want = 1 - v*v
				case autodiff.Sigmoid:
					want = v * (1 - v)
				}
				if math.Abs(float64(g)-want) > 1e-6 {
					t.Fatalf("%v step %d: dx[%d] = %v, want %v", act, step, i, g, want)
				}
			}
		}
	}
}

// ensure that Attention and GatherCols, as first gradient writers of the
// fused Q|K|V (each covering only its own columns), leave no stale arena
// values: a reused tape gives bit for bit the gradient of a fresh one, with
// and without the V gather, over several steps with new inputs.
func TestBackward_AttentionGatherFirstWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const bn, nn, c, heads, dk, w = 2, 5, 2, 2, 4, 3
	g := 2*dk + w
	grad := func(tp *autodiff.Tape[float64], qkv tensor.Dense[float64], gather bool) []float64 {
		tp.Reset()
		x := tp.Input(qkv, true)
		h := tp.Scale(x, 1) // pending gradient buffer
		loss := tp.Sum(tp.Attention(h, c, heads, dk, 0.7))
		if gather {
			loss = tp.Add(loss, tp.Sum(tp.Scale(tp.GatherCols(h, g, 2*dk, w), 1.3)))
		}
		tp.Backward(loss)
		return append([]float64(nil), x.Grad...)
	}
	tp := autodiff.NewTape[float64]()
	for step := 0; step < 4; step++ {
		qkv := tensor.New[float64](bn, nn, c*g)
		for i := range qkv.Data {
			qkv.Data[i] = rng.Float64()*2 - 1
		}
		gather := step%2 == 0
		got, want := grad(tp, qkv, gather), grad(autodiff.NewTape[float64](), qkv, gather)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("step %d (gather %v): dqkv[%d] = %v on a reused tape, %v on a fresh one", step, gather, i, got[i], want[i])
			}
		}
		for r := 0; r < bn*nn; r++ {
			for ci := 0; ci < c; ci++ {
				for j := 2 * dk; j < g; j++ {
					v := got[r*c*g+ci*g+j]
					if (gather && v != 1.3) || (!gather && v != 0) {
						t.Fatalf("step %d (gather %v): V gradient %v", step, gather, v)
					}
				}
			}
		}
	}
}

// ensure that ActInPlace gives bit for bit Act's values and gradients after
// each op whose output it may overwrite, for every activation, on a reused
// tape with pooled and with kept gradients; and that it falls back to Act
// (leaving x intact) for a leaf, for a value that is not the last recorded
// and for the output of an Act.
func TestActInPlace_MatchesAct(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	const bn, nn, f = 2, 5, 3
	x := tensor.New[float32](bn, nn, f)
	a := tensor.New[float32](bn, nn, nn)
	w := tensor.New[float32](f, f)
	for _, d := range [][]float32{x.Data, a.Data, w.Data} {
		for i := range d {
			d[i] = float32(rng.Float64()*2 - 1)
		}
	}
	mask := []float32{1, 1, 1, 0, 0, 1, 1, 1, 1, 0}
	type result struct{ out, gx, ga, gw []float32 }
	ops := []string{"linear", "gcnprop", "masknodes", "chanlinear"}
	run := func(tp *autodiff.Tape[float32], op string, act autodiff.Activation, inPlace, keep bool) result {
		tp.Reset()
		tp.KeepGrads(keep)
		xv, av, wv := tp.Input(x, true), tp.Input(a, true), tp.Input(w, true)
		var pre *autodiff.Var[float32]
		switch op {
		case "linear":
			pre = tp.Linear(xv, wv, nil)
		case "gcnprop":
			pre = tp.GCNProp(tp.GCNNorm(av), tp.Linear(xv, wv, nil), nil)
		case "masknodes":
			pre = tp.MaskNodes(tp.Linear(xv, wv, nil), mask)
		case "chanlinear":
			cw := tensor.New[float32](nn, 2)
			copy(cw.Data, w.Data)
			pre = tp.ChanLinear(tp.Reshape(tp.Scale(av, 1), tensor.S(bn, nn, nn, 1)), tp.Input(cw, false), nil)
		}
		var y *autodiff.Var[float32]
		if inPlace {
			y = tp.ActInPlace(pre, act)
		} else {
			y = tp.Act(pre, act)
		}
		// A consumer that reads y's value in its backward step.
		tp.Backward(tp.Sum(tp.Mul(y, y)))
		cp := func(s []float32) []float32 { return append([]float32(nil), s...) }
		return result{cp(y.Value.Data), cp(xv.Grad), cp(av.Grad), cp(wv.Grad)}
	}
	same := func(a, b []float32) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				return false
			}
		}
		return true
	}
	tp := autodiff.NewTape[float32]()
	for _, keep := range []bool{false, true} {
		for _, op := range ops {
			for _, act := range []autodiff.Activation{autodiff.ReLU, autodiff.ELU, autodiff.Tanh, autodiff.Sigmoid} {
				want := run(autodiff.NewTape[float32](), op, act, false, keep)
				got := run(tp, op, act, true, keep)
				if !same(got.out, want.out) || !same(got.gx, want.gx) || !same(got.ga, want.ga) || !same(got.gw, want.gw) {
					t.Fatalf("keep %v, %s then %v: ActInPlace differs from Act", keep, op, act)
				}
			}
		}
	}
	// Fallbacks: x intact.
	tp.Reset()
	xv := tp.Input(x, false)
	before := append([]float32(nil), x.Data...)
	_ = tp.ActInPlace(xv, autodiff.Tanh) // leaf
	h := tp.Scale(xv, 2)
	hb := append([]float32(nil), h.Value.Data...)
	_ = tp.Scale(xv, 3)
	_ = tp.ActInPlace(h, autodiff.Tanh) // not the last recorded
	y := tp.Act(tp.Scale(xv, 1), autodiff.Tanh)
	yb := append([]float32(nil), y.Value.Data...)
	_ = tp.ActInPlace(y, autodiff.Tanh) // output of an Act
	if !same(x.Data, before) || !same(h.Value.Data, hb) || !same(y.Value.Data, yb) {
		t.Fatal("ActInPlace overwrote a value it must not")
	}
}
