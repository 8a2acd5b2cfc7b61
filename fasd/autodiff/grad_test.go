package autodiff_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/autodiff/adtest"
	"github.com/fasd-db/fasd/fasd/tensor"
)

type tp = autodiff.Tape[float64]
type v64 = autodiff.Var[float64]
type p64 = autodiff.Param[float64]

// opCase builds an op output from its parameter leaves; the check reduces the
// output with random weights (Dot) so that every output entry matters.
type opCase struct {
	name   string
	params func(rng *rand.Rand) []*p64
	out    func(t *tp, in []*v64) *v64
}

// mask returns a B·N node mask with the last `pad` nodes of each subgraph off.
func mask(b, n, pad int) []float64 {
	m := make([]float64, b*n)
	for i := 0; i < b; i++ {
		for j := 0; j < n-pad; j++ {
			m[i*n+j] = 1
		}
	}
	return m
}

// clampedAdj returns B×N×N weights in [lo,hi) whose diag-overwritten row sums
// stay at least 0.05 away from the degree clamp's kink at 1.
func clampedAdj(rng *rand.Rand, name string, b, n int, lo, hi float64) *p64 {
	for {
		p := adtest.RandParam(rng, name, lo, hi, b, n, n)
		ok := true
		for r := 0; r < b*n; r++ {
			d := 1.0
			for j := 0; j < n; j++ {
				if j != r%n {
					d += p.Value.Data[r*n+j]
				}
			}
			if math.Abs(d-1) < 0.05 {
				ok = false
			}
		}
		if ok {
			return p
		}
	}
}

func opCases() []opCase {
	const b, n = 2, 5
	return []opCase{
		{"Linear", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "x", -1, 1, b, n, 4), adtest.RandParam(r, "w", -1, 1, 4, 3), adtest.RandParam(r, "b", -1, 1, 3)}
		}, func(t *tp, in []*v64) *v64 { return t.Linear(in[0], in[1], in[2]) }},
		{"LinearNoBias", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "x", -1, 1, 7, 4), adtest.RandParam(r, "w", -1, 1, 4, 3)}
		}, func(t *tp, in []*v64) *v64 { return t.Linear(in[0], in[1], nil) }},
		{"AddBias", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "x", -1, 1, b, n, 3), adtest.RandParam(r, "b", -1, 1, 3)}
		}, func(t *tp, in []*v64) *v64 { return t.AddBias(in[0], in[1]) }},
		{"ChanLinear", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "x", -1, 1, b, 3, n, n), adtest.RandParam(r, "w", -1, 1, 3, 4), adtest.RandParam(r, "b", -1, 1, 4)}
		}, func(t *tp, in []*v64) *v64 { return t.ChanLinear(in[0], in[1], in[2]) }},
		{"MatMul", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "a", -1, 1, b, n, 3), adtest.RandParam(r, "b", -1, 1, b, 3, 4)}
		}, func(t *tp, in []*v64) *v64 { return t.MatMul(in[0], in[1]) }},
		{"MatMulSquare", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "a", -1, 1, b, n, n)}
		}, func(t *tp, in []*v64) *v64 { return t.MatMul(in[0], in[0]) }},
		{"GCNNormPositive", func(r *rand.Rand) []*p64 {
			return []*p64{clampedAdj(r, "a", b, n, 0, 1)}
		}, func(t *tp, in []*v64) *v64 { return t.GCNNorm(in[0]) }},
		{"GCNNormClamped", func(r *rand.Rand) []*p64 {
			// Entries in [-0.7, 0.3): several rows have degree ≤ 1 and hit the clamp.
			return []*p64{clampedAdj(r, "a", b, n, -0.7, 0.3)}
		}, func(t *tp, in []*v64) *v64 { return t.GCNNorm(in[0]) }},
		{"GCNNormChannels", func(r *rand.Rand) []*p64 {
			return []*p64{clampedAdj(r, "a", b*3, n, -0.3, 0.8)}
		}, func(t *tp, in []*v64) *v64 {
			return t.GCNNorm(t.Reshape(in[0], tensor.S(b, 3, n, n)))
		}},
		{"GCNProp", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "ahat", -1, 1, b, 2, n, n), adtest.RandParam(r, "p", -1, 1, b, n, 6), adtest.RandParam(r, "bias", -1, 1, 6)}
		}, func(t *tp, in []*v64) *v64 { return t.GCNProp(in[0], in[1], in[2]) }},
		{"LinearGCNProp", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "ahat", -1, 1, b, 2, n, n), adtest.RandParam(r, "x", -1, 1, b, n, 3), adtest.RandParam(r, "w", -1, 1, 3, 6), adtest.RandParam(r, "bias", -1, 1, 6)}
		}, func(t *tp, in []*v64) *v64 { return t.LinearGCNProp(in[0], in[1], in[2], in[3]) }},
		{"GCNLayerWrtA", func(r *rand.Rand) []*p64 {
			return []*p64{clampedAdj(r, "a", b, n, -0.2, 1), adtest.RandParam(r, "h", -1, 1, b, n, 3), adtest.RandParam(r, "w", -1, 1, 3, 4), adtest.RandParam(r, "bias", -1, 1, 4)}
		}, func(t *tp, in []*v64) *v64 {
			return t.GCNProp(t.GCNNorm(in[0]), t.Linear(in[1], in[2], nil), in[3])
		}},
		{"Attention", func(r *rand.Rand) []*p64 {
			// 2 channels, group = 2·dk + dv = 2·4 + 3, 2 heads.
			return []*p64{adtest.RandParam(r, "qkv", -1.5, 1.5, b, n, 2*11)}
		}, func(t *tp, in []*v64) *v64 { return t.Attention(in[0], 2, 2, 4, 1/math.Sqrt(3)) }},
		{"GatherCols", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "x", -1, 1, b, n, 3*5)}
		}, func(t *tp, in []*v64) *v64 { return t.GatherCols(in[0], 5, 2, 3) }},
		{"ConcatLast", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "a", -1, 1, b, n, 2), adtest.RandParam(r, "b", -1, 1, b, n, 3)}
		}, func(t *tp, in []*v64) *v64 { return t.ConcatLast(in[0], in[1], in[0]) }},
		{"ConcatChan", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "a", -1, 1, b, n, n), adtest.RandParam(r, "c", -1, 1, b, 2, n, n)}
		}, func(t *tp, in []*v64) *v64 { return t.ConcatChan(in[0], in[1], in[0]) }},
		{"ReLU", func(r *rand.Rand) []*p64 { return []*p64{adtest.RandParam(r, "x", -1, 1, b, n, 3)} },
			func(t *tp, in []*v64) *v64 { return t.Act(in[0], autodiff.ReLU) }},
		{"ELU", func(r *rand.Rand) []*p64 { return []*p64{adtest.RandParam(r, "x", -2, 2, b, n, 3)} },
			func(t *tp, in []*v64) *v64 { return t.Act(in[0], autodiff.ELU) }},
		{"Tanh", func(r *rand.Rand) []*p64 { return []*p64{adtest.RandParam(r, "x", -2, 2, b, n, 3)} },
			func(t *tp, in []*v64) *v64 { return t.Act(in[0], autodiff.Tanh) }},
		{"Sigmoid", func(r *rand.Rand) []*p64 { return []*p64{adtest.RandParam(r, "x", -3, 3, b, n, 3)} },
			func(t *tp, in []*v64) *v64 { return t.Act(in[0], autodiff.Sigmoid) }},
		{"Add", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "a", -1, 1, b, n), adtest.RandParam(r, "b", -1, 1, b, n)}
		}, func(t *tp, in []*v64) *v64 { return t.Add(in[0], in[1]) }},
		{"Mul", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "a", -1, 1, b, n), adtest.RandParam(r, "b", -1, 1, b, n)}
		}, func(t *tp, in []*v64) *v64 { return t.Mul(in[0], t.Mul(in[1], in[0])) }},
		{"Scale", func(r *rand.Rand) []*p64 { return []*p64{adtest.RandParam(r, "x", -1, 1, b, n)} },
			func(t *tp, in []*v64) *v64 { return t.Scale(in[0], -2.5) }},
		{"Transpose", func(r *rand.Rand) []*p64 { return []*p64{adtest.RandParam(r, "x", -1, 1, b, 3, 4)} },
			func(t *tp, in []*v64) *v64 { return t.Transpose(in[0]) }},
		{"Symmetrize", func(r *rand.Rand) []*p64 { return []*p64{adtest.RandParam(r, "x", -1, 1, b, 2, n, n)} },
			func(t *tp, in []*v64) *v64 { return t.Symmetrize(in[0], 0.5) }},
		{"SetDiag", func(r *rand.Rand) []*p64 { return []*p64{adtest.RandParam(r, "x", -1, 1, b, n, n)} },
			func(t *tp, in []*v64) *v64 { return t.SetDiag(in[0], 1) }},
		{"MaskNodes", func(r *rand.Rand) []*p64 { return []*p64{adtest.RandParam(r, "x", -1, 1, b, n, 3)} },
			func(t *tp, in []*v64) *v64 { return t.MaskNodes(in[0], mask(b, n, 2)) }},
		{"MaskPairs", func(r *rand.Rand) []*p64 { return []*p64{adtest.RandParam(r, "x", -1, 1, b, 2, n, n)} },
			func(t *tp, in []*v64) *v64 { return t.MaskPairs(in[0], mask(b, n, 1), true) }},
		{"Dropout", func(r *rand.Rand) []*p64 { return []*p64{adtest.RandParam(r, "x", -1, 1, b, n, 4)} },
			func(t *tp, in []*v64) *v64 {
				// A fresh rng with a fixed seed per evaluation keeps the mask fixed.
				return t.Dropout(in[0], 0.3, rand.NewPCG(7, 7))
			}},
		{"PackSym", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "a", -1, 1, b, n, n), adtest.RandParam(r, "c", -1, 1, b, 2, n, n)}
		}, func(t *tp, in []*v64) *v64 { return t.PackSym(in[0], in[1], in[0]) }},
		{"UnpackSym", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "x", -1, 1, b, 3, autodiff.SymPairs(n))}
		}, func(t *tp, in []*v64) *v64 { return t.UnpackSym(in[0], n, 2) }},
		{"PackUnpackMLP", func(r *rand.Rand) []*p64 {
			return []*p64{adtest.RandParam(r, "x", -1, 1, b, 2, n, n), adtest.RandParam(r, "w", -1, 1, 2, 3), adtest.RandParam(r, "b", -1, 1, 3)}
		}, func(t *tp, in []*v64) *v64 {
			return t.UnpackSym(t.Act(t.ChanLinear(t.PackSym(in[0]), in[1], in[2]), autodiff.ELU), n, 2)
		}},
		{"Sum", func(r *rand.Rand) []*p64 { return []*p64{adtest.RandParam(r, "x", -1, 1, b, n)} },
			func(t *tp, in []*v64) *v64 { return t.Sum(t.Mul(in[0], in[0])) }},
	}
}

// ensure that every op's gradient matches central finite differences.
func TestOps_Grad(t *testing.T) {
	for _, oc := range opCases() {
		t.Run(oc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, 3))
			params := oc.params(rng)
			var w []float64
			c := adtest.Case{Name: oc.name, Params: params, Loss: func(tape *tp) *v64 {
				in := make([]*v64, len(params))
				for i, p := range params {
					in[i] = tape.Param(p)
				}
				out := oc.out(tape, in)
				if w == nil {
					w = adtest.RandSlice(rng, len(out.Value.Data), -1, 1)
				}
				return tape.Dot(out, w)
			}}
			adtest.Check(t, c, rng)
		})
	}
}

// ensure that the three losses' gradients match central finite differences.
func TestLosses_Grad(t *testing.T) {
	const b, n = 3, 4
	rng := rand.New(rand.NewPCG(5, 5))
	z := adtest.RandParam(rng, "z", -3, 3, b, n, 1)
	target := make([]float64, b*n)
	weight := make([]float64, b*n)
	for i := range target {
		target[i] = float64(rng.IntN(2))
		weight[i] = float64(rng.IntN(3)) // 0 drops the node, 2 counts it twice
	}
	adtest.Check(t, adtest.Case{Name: "BCEWithLogits", Params: []*p64{z}, Loss: func(tape *tp) *v64 {
		return tape.BCEWithLogits(tape.Param(z), target, weight, b)
	}}, rng)

	logits := adtest.RandParam(rng, "logits", -3, 3, b, n, 3)
	labels := make([]int32, b*n)
	for i := range labels {
		labels[i] = int32(rng.IntN(3))
		if weight[i] == 0 {
			labels[i] = -1 // unlabelled rows must be skipped
		}
	}
	adtest.Check(t, adtest.Case{Name: "SoftmaxNLL", Params: []*p64{logits}, Loss: func(tape *tp) *v64 {
		return tape.SoftmaxNLL(tape.Param(logits), labels, weight, 7)
	}}, rng)

	x := adtest.RandParam(rng, "x", -2, 2, b, n, n)
	tgt := adtest.RandSlice(rng, b*n*n, -2, 2)
	adtest.Check(t, adtest.Case{Name: "SquaredError", Params: []*p64{x}, Loss: func(tape *tp) *v64 {
		return tape.SquaredError(tape.Param(x), tgt, b)
	}}, rng)
}

// ensure that the loss values equal their definitions computed directly.
func TestLosses_Values(t *testing.T) {
	tape := autodiff.NewTape[float64]()
	z := tape.Input(tensor.FromSlice([]float64{2, -1, 0.5}, 3), false)
	got := tape.BCEWithLogits(z, []float64{1, 0, 1}, []float64{1, 1, 0}, 2).Value.Data[0]
	want := (math.Log1p(math.Exp(2)) - 2 + math.Log1p(math.Exp(-1))) / 2
	if math.Abs(got-want) > 1e-14 {
		t.Fatalf("BCE %v want %v", got, want)
	}
	l := tape.Input(tensor.FromSlice([]float64{1, 2, 3, 0, 0, 5}, 2, 3), false)
	got = tape.SoftmaxNLL(l, []int32{2, 0}, []float64{1, 1}, 2).Value.Data[0]
	lse1 := math.Log(math.Exp(1) + math.Exp(2) + math.Exp(3))
	lse2 := math.Log(2 + math.Exp(5))
	want = ((lse1 - 3) + (lse2 - 0)) / 2
	if math.Abs(got-want) > 1e-14 {
		t.Fatalf("NLL %v want %v", got, want)
	}
	x := tape.Input(tensor.FromSlice([]float64{1, 2, 3}, 3), false)
	if got := tape.SquaredError(x, []float64{0, 2, 5}, 2).Value.Data[0]; got != 0.5*(1+4)/2 {
		t.Fatalf("SquaredError %v", got)
	}
}

// ensure that the attention op equals its definition evaluated naively.
func TestAttention_MatchesDefinition(t *testing.T) {
	const b, n, c, heads, dk, dv = 2, 4, 3, 2, 4, 2
	g := 2*dk + dv
	rng := rand.New(rand.NewPCG(2, 9))
	q := tensor.FromSlice(adtest.RandSlice(rng, b*n*c*g, -1, 1), b, n, c*g)
	tape := autodiff.NewTape[float64]()
	scale := 1 / math.Sqrt(dv)
	out := tape.Attention(tape.Input(q, false), c, heads, dk, scale)
	at := func(bi, i, col int) float64 { return q.Data[(bi*n+i)*c*g+col] }
	for bi := 0; bi < b; bi++ {
		for ci := 0; ci < c; ci++ {
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					var want float64
					for _, pr := range [][2]int{{i, j}, {j, i}} {
						for h := 0; h < heads; h++ {
							var s float64
							for d := 0; d < dk/heads; d++ {
								s += at(bi, pr[0], ci*g+h*dk/heads+d) * at(bi, pr[1], ci*g+dk+h*dk/heads+d)
							}
							want += math.Tanh(s*scale) / heads / 2
						}
					}
					got := out.Value.Data[((bi*c+ci)*n+i)*n+j]
					if math.Abs(got-want) > 1e-14 {
						t.Fatalf("att[%d,%d,%d,%d] = %v want %v", bi, ci, i, j, got, want)
					}
				}
			}
		}
	}
}

// ensure that GCNNorm equals the definition in docs/method.md §3 and leaves the
// diagonal at r_i².
func TestGCNNorm_MatchesDefinition(t *testing.T) {
	a := tensor.FromSlice([]float64{
		7, 1, 0,
		1, 0, -3,
		0, -3, 0,
	}, 1, 3, 3)
	tape := autodiff.NewTape[float64]()
	got := tape.GCNNorm(tape.Input(a, false)).Value.Data
	// Ã diag = 1: degrees 2, max(1,-1)=1, max(1,-2)=1.
	r := []float64{1 / math.Sqrt(2), 1, 1}
	at := []float64{1, 1, 0, 1, 1, -3, 0, -3, 1}
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			if want := r[i] * at[i*3+j] * r[j]; math.Abs(got[i*3+j]-want) > 1e-15 {
				t.Fatalf("Â[%d,%d] = %v want %v", i, j, got[i*3+j], want)
			}
		}
	}
}

// ensure that an entrywise channel map on packed symmetric matrices,
// unpacked with scale 2, equals the map on the full matrices followed by
// Symmetrize(·, 1) bit for bit in float32, and that its gradient with respect
// to the (symmetric) input equals the full computation's up to rounding.
func TestPackSym_MatchesFull(t *testing.T) {
	const b, c, n = 3, 4, 7
	rng := rand.New(rand.NewPCG(21, 2))
	x := tensor.New[float32](b, c, n, n)
	for m := 0; m < b*c; m++ {
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				v := float32(2*rng.Float64() - 1)
				x.Data[m*n*n+i*n+j], x.Data[m*n*n+j*n+i] = v, v
			}
		}
	}
	w := tensor.New[float32](c, 5)
	bias := tensor.New[float32](5)
	for i := range w.Data {
		w.Data[i] = float32(2*rng.Float64() - 1)
	}
	for i := range bias.Data {
		bias.Data[i] = float32(rng.Float64() - 0.5)
	}
	gw := make([]float32, b*5*n*n)
	for i := range gw {
		gw[i] = float32(2*rng.Float64() - 1)
	}
	run := func(packed bool) ([]float32, []float32) {
		tape := autodiff.NewTape[float32]()
		xv := tape.Input(x, true)
		wv, bv := tape.Input(w, false), tape.Input(bias, false)
		var out *autodiff.Var[float32]
		if packed {
			out = tape.UnpackSym(tape.Act(tape.ChanLinear(tape.PackSym(xv), wv, bv), autodiff.ELU), n, 2)
		} else {
			out = tape.Symmetrize(tape.Act(tape.ChanLinear(xv, wv, bv), autodiff.ELU), 1)
		}
		tape.Backward(tape.Dot(out, gw))
		return out.Value.Data, xv.Grad
	}
	full, gFull := run(false)
	pk, gPk := run(true)
	for i := range full {
		if full[i] != pk[i] {
			t.Fatalf("out[%d]: packed %v, full %v", i, pk[i], full[i])
		}
	}
	for i := range gFull {
		// Both sum the same four-term products in different orders: a few
		// float32 roundings of |g| ≤ ~10.
		if d := math.Abs(float64(gFull[i] - gPk[i])); d > 1e-5 {
			t.Fatalf("grad[%d]: packed %v, full %v", i, gPk[i], gFull[i])
		}
	}
}

// ensure that PackSym of values ops made exactly symmetric (UnpackSym,
// MaskPairs of it, Attention), which it packs by copying, gives the bits of
// packing the same values as a plain input, which it averages.
func TestPackSym_SymmetricInputs(t *testing.T) {
	const b, c, n = 2, 3, 6
	rng := rand.New(rand.NewPCG(5, 9))
	fill := func(d []float32) {
		for i := range d {
			d[i] = float32(2*rng.Float64() - 1)
		}
	}
	packed := tensor.New[float32](b, c, autodiff.SymPairs(n))
	fill(packed.Data)
	qkv := tensor.New[float32](b, n, 2*(2*4+3))
	fill(qkv.Data)
	mask := make([]float32, b*n)
	for i := range mask {
		mask[i] = float32(rng.IntN(2))
	}
	tape := autodiff.NewTape[float32]()
	u := tape.UnpackSym(tape.Input(packed, false), n, 2)
	mu := tape.MaskPairs(u, mask, true)
	att := tape.Attention(tape.Input(qkv, false), 2, 2, 4, 0.5)
	for _, sym := range []*autodiff.Var[float32]{u, mu, att} {
		plain := tape.Input(tensor.Dense[float32]{Data: append([]float32(nil), sym.Data()...), Shape: sym.Shape()}, false)
		got, want := tape.PackSym(sym, plain).Data(), tape.PackSym(plain, plain).Data()
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v: packed value %d is %v, averaged %v", sym.Shape(), i, got[i], want[i])
			}
		}
	}
}
