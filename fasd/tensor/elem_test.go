package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// eluZeroTol is the absolute error allowed for ELU near 0, where e^x − 1 is
// computed in float64 (a few float64 roundings of e^x ≈ 1).
const eluZeroTol = 1e-15

// elemInputs are values across the networks' range plus the edge cases of the
// kernels: the tanh series switch at 0.1, the clamp at 10, tiny, signed zero,
// infinities and NaN.
func elemInputs(rng *rand.Rand) []float32 {
	xs := []float32{0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1e-9, -1e-9, 3e-5, -3e-5, 0.0999, 0.1, 0.1001, -0.1001,
		9.99, 10, 10.01, -10.01, 87, -87, -99, -100, -101, -1e4, 1e4,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for i := -20000; i <= 20000; i++ {
		xs = append(xs, float32(i)*4e-3) // [-80, 80]
	}
	for i := 0; i < 5000; i++ {
		xs = append(xs, float32(rng.NormFloat64()*3))
	}
	return xs
}

// checkElem compares one float32 result with the float64 function: NaN in,
// NaN out; otherwise relative error fastMathTol plus an absolute abs.
func checkElem(t *testing.T, name string, x, got float32, want, abs float64) {
	t.Helper()
	if math.IsNaN(float64(x)) {
		if !math.IsNaN(float64(got)) {
			t.Fatalf("%s(NaN) = %v", name, got)
		}
		return
	}
	g := float64(got)
	if math.IsInf(want, 0) {
		if g != want {
			t.Fatalf("%s(%v) = %v, want %v", name, x, got, want)
		}
		return
	}
	if math.IsNaN(g) || math.Abs(g-want) > fastMathTol*math.Abs(want)+abs {
		t.Fatalf("%s(%v) = %v, want %v", name, x, got, want)
	}
}

// ensure that the slice kernels TanhTo and ELUTo (AVX2 lanes plus scalar
// tail, or the scalar path in the noasm build) match math.Tanh and
// math.Expm1 within fastMathTol, handle NaN/Inf/±0, work in place, and write
// nothing outside dst (NaN guards), for every length modulo the lane count.
func TestElementwise_MatchesMath(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	xs := elemInputs(rng)
	for _, fn := range []struct {
		name string
		to   func(dst, src []float32)
		ref  func(x float64) float64
		abs  float64
	}{
		{"tanh", TanhTo[float32], math.Tanh, 0},
		{"elu", ELUTo[float32], eluRef, eluZeroTol},
	} {
		for off := 0; off < 9; off++ {
			src := xs[off:]
			all := make([]float32, len(src)+2*gemmGuard)
			for i := range all {
				all[i] = float32(math.NaN())
			}
			dst := all[gemmGuard : gemmGuard+len(src)]
			fn.to(dst, src)
			for i, x := range src {
				checkElem(t, fn.name, x, dst[i], fn.ref(float64(x)), fn.abs)
			}
			for i := 0; i < gemmGuard; i++ {
				if !math.IsNaN(float64(all[i])) || !math.IsNaN(float64(all[len(all)-1-i])) {
					t.Fatalf("%s: guard overwritten", fn.name)
				}
			}
			inPlace := append([]float32(nil), src...)
			fn.to(inPlace, inPlace)
			for i := range inPlace {
				if inPlace[i] != dst[i] && !(math.IsNaN(float64(dst[i])) && math.IsNaN(float64(inPlace[i]))) {
					t.Fatalf("%s in place differs at %d: %v vs %v", fn.name, i, inPlace[i], dst[i])
				}
			}
		}
	}
	for _, x := range xs {
		checkElem(t, "ELU32", x, ELU32(x), eluRef(float64(x)), eluZeroTol)
	}
	d := []float64{-1, 0.5}
	ELUTo(d, d)
	if d[0] != math.Expm1(-1) || d[1] != 0.5 {
		t.Fatalf("float64 ELUTo = %v", d)
	}
}

func eluRef(x float64) float64 {
	if x > 0 {
		return x
	}
	return math.Expm1(x)
}

// ensure that the eight-lane AVX-512 kernels give the four-lane AVX2 ones'
// bits for every input (edge cases included: NaN keeps its payload the same
// way), and that TanhTo and ELUTo with them equal the four-lane-only path for
// every length modulo eight, the scalar tail included.
func TestElementwise512_MatchesAVX2(t *testing.T) {
	if !haveAsm512 {
		t.Skip("no AVX-512 here")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	xs := elemInputs(rng)
	xs = xs[:len(xs)&^7]
	for _, fn := range []struct {
		name           string
		lanes4, lanes8 func(d, s []float32)
		to             func(dst, src []float32)
		scalar         func(float32) float32
	}{
		{"tanh", tanh4, tanh8z, TanhTo[float32], Tanh32},
		{"elu", elu4, elu8z, ELUTo[float32], ELU32},
	} {
		d4, d8 := make([]float32, len(xs)), make([]float32, len(xs))
		fn.lanes4(d4, xs)
		fn.lanes8(d8, xs)
		for i := range xs {
			if math.Float32bits(d4[i]) != math.Float32bits(d8[i]) {
				t.Fatalf("%s(%v): eight lanes %v, four lanes %v", fn.name, xs[i], d8[i], d4[i])
			}
		}
		for n := 0; n <= 19; n++ {
			src := xs[len(xs)-n-3 : len(xs)-3]
			got, want := make([]float32, n), make([]float32, n)
			fn.to(got, src)
			map32(want, src, fn.lanes4, nil, fn.scalar)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s, length %d, element %d: %v, four-lane path %v", fn.name, n, i, got[i], want[i])
				}
			}
		}
	}
}

// BenchmarkElementwise measures the float32 slice kernels on an N²×C-sized
// slice (readout hidden layer of one NBA subgraph).
func BenchmarkElementwise(b *testing.B) {
	src := make([]float32, 231*76)
	for i := range src {
		src[i] = float32(i%97)*0.05 - 2.4
	}
	dst := make([]float32, len(src))
	for _, fn := range []struct {
		name string
		to   func(dst, src []float32)
	}{{"tanh", TanhTo[float32]}, {"elu", ELUTo[float32]}} {
		b.Run(fn.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				fn.to(dst, src)
			}
			b.ReportMetric(float64(b.N*len(src))/b.Elapsed().Seconds()/1e9, "Gelem/s")
		})
	}
}

// gradAccTol bounds the float32 error of ga + g·d with |ga|, |g|, |d| ≤ ~4:
// three roundings of values below 16 (3·16·2⁻²⁴ ≈ 3e-6).
const gradAccTol = 3e-6

// ensure that ELUGradAcc and TanhGradAcc (AVX2 lanes plus scalar tail, or the
// scalar path in the noasm build) add g·f'(y) to ga as a float64 reference
// does, for every length modulo the lane count, and write nothing outside ga.
func TestGradAcc_MatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, fn := range []struct {
		name string
		acc  func(ga, g, y []float32)
		d    func(y float64) float64
	}{
		{"elu", ELUGradAcc[float32], func(y float64) float64 {
			if y > 0 {
				return 1
			}
			return y + 1
		}},
		{"tanh", TanhGradAcc[float32], func(y float64) float64 { return 1 - y*y }},
	} {
		for n := 0; n < 40; n++ {
			g, y := make([]float32, n), make([]float32, n)
			all := make([]float32, n+2*gemmGuard)
			for i := range all {
				all[i] = float32(math.NaN())
			}
			ga := all[gemmGuard : gemmGuard+n]
			for i := 0; i < n; i++ {
				g[i] = float32(4*rng.Float64() - 2)
				y[i] = float32(3*rng.Float64() - 1.5)
				ga[i] = float32(2*rng.Float64() - 1)
			}
			want := make([]float64, n)
			for i := range want {
				want[i] = float64(ga[i]) + float64(g[i])*fn.d(float64(y[i]))
			}
			fn.acc(ga, g, y)
			for i := range want {
				if d := math.Abs(float64(ga[i]) - want[i]); !(d <= gradAccTol) {
					t.Fatalf("%s n=%d: ga[%d] = %v, want %v", fn.name, n, i, ga[i], want[i])
				}
			}
			for i := 0; i < gemmGuard; i++ {
				if !math.IsNaN(float64(all[i])) || !math.IsNaN(float64(all[len(all)-1-i])) {
					t.Fatalf("%s n=%d: guard overwritten", fn.name, n)
				}
			}
		}
	}
	ga, g, y := []float64{1, 1}, []float64{2, 2}, []float64{0.5, -0.5}
	ELUGradAcc(ga, g, y)
	TanhGradAcc(ga, g, y)
	if ga[0] != 1+2+2*0.75 || ga[1] != 1+2*0.5+2*0.75 {
		t.Fatalf("float64 grad acc = %v", ga)
	}
}

// ensure that ELUGradTo and TanhGradTo (AVX2 lanes plus scalar tail, or the
// scalar path in the noasm build) set ga = g·f'(y) as a float64 reference
// does, for every length modulo the lane count, whatever ga held before
// (NaN: it is not read), and write nothing outside ga.
func TestGradTo_MatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, fn := range []struct {
		name string
		to   func(ga, g, y []float32)
		d    func(y float64) float64
	}{
		{"elu", ELUGradTo[float32], func(y float64) float64 {
			if y > 0 {
				return 1
			}
			return y + 1
		}},
		{"tanh", TanhGradTo[float32], func(y float64) float64 { return 1 - y*y }},
	} {
		for n := 0; n < 40; n++ {
			g, y := make([]float32, n), make([]float32, n)
			all := make([]float32, n+2*gemmGuard)
			for i := range all {
				all[i] = float32(math.NaN())
			}
			ga := all[gemmGuard : gemmGuard+n]
			for i := 0; i < n; i++ {
				g[i] = float32(4*rng.Float64() - 2)
				y[i] = float32(3*rng.Float64() - 1.5)
			}
			fn.to(ga, g, y)
			for i := range ga {
				want := float64(g[i]) * fn.d(float64(y[i]))
				if d := math.Abs(float64(ga[i]) - want); !(d <= gradAccTol) {
					t.Fatalf("%s n=%d: ga[%d] = %v, want %v", fn.name, n, i, ga[i], want)
				}
			}
			for i := 0; i < gemmGuard; i++ {
				if !math.IsNaN(float64(all[i])) || !math.IsNaN(float64(all[len(all)-1-i])) {
					t.Fatalf("%s n=%d: guard overwritten", fn.name, n)
				}
			}
		}
	}
	ga, g, y := []float64{7, 7}, []float64{2, 2}, []float64{0.5, -0.5}
	ELUGradTo(ga, g, y)
	if ga[0] != 2 || ga[1] != 2*0.5 {
		t.Fatalf("float64 ELUGradTo = %v", ga)
	}
	TanhGradTo(ga, g, y)
	if ga[0] != 2*0.75 || ga[1] != 2*0.75 {
		t.Fatalf("float64 TanhGradTo = %v", ga)
	}
}

// TestReLUKernels checks ReLUTo and ReLUGradTo (the AVX2 lanes where
// available, then the scalar tail) against the branching loops bit for bit,
// on special values and random bit patterns, for lengths around the lane
// width and in place (dst = src).
func TestReLUKernels(t *testing.T) {
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc00000), math.Float32frombits(0x7f800001),
		math.Float32frombits(0xff800001)}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 1000, 1003} {
		x := make([]float32, n)
		for i := range x {
			switch {
			case i < len(special):
				x[i] = special[(i+n)%len(special)]
			case i%2 == 0:
				x[i] = math.Float32frombits(rng.Uint32())
			default:
				x[i] = float32(rng.NormFloat64())
			}
		}
		g := make([]float32, n)
		for i := range g {
			g[i] = float32(rng.NormFloat64())
		}
		y, ga := make([]float32, n), make([]float32, n)
		ReLUTo(y, x)
		ReLUGradTo(ga, g, x)
		inPlace := append([]float32(nil), x...)
		ReLUTo(inPlace, inPlace)
		for i, v := range x {
			want := max(v, 0)
			for _, got := range []float32{y[i], inPlace[i]} {
				if math.Float32bits(got) != math.Float32bits(want) && !(want != want && got != got) {
					t.Fatalf("n %d: relu(%#x) = %#x, want %#x", n, math.Float32bits(v), math.Float32bits(got), math.Float32bits(want))
				}
			}
			var wg float32
			if v > 0 {
				wg = g[i]
			}
			if math.Float32bits(ga[i]) != math.Float32bits(wg) {
				t.Fatalf("n %d: relu'(%#x)·%v = %v, want %v", n, math.Float32bits(v), g[i], ga[i], wg)
			}
		}
	}
}

// TestMulAcc checks MulAcc against the plain loop bit for bit (the
// product rounded before the sum) for lengths around the lane width.
func TestMulAcc(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 7, 8, 9, 16, 17, 1003} {
		a, x, y := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], x[i], y[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		want := append([]float32(nil), a...)
		for i := range want {
			p := x[i] * y[i]
			want[i] += p
		}
		MulAcc(a, x, y)
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n %d: a[%d] = %v, want %v", n, i, a[i], want[i])
			}
		}
	}
}
