package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Test tolerances. gemmTol64 covers float64 summation of k ≤ 300 products of
// magnitude ≤ 1 (k·eps64 ≈ 7e-14); gemmTol32 does the same for float32
// (k·eps32 ≈ 4e-5). fastMathTol is the documented bound of the float32 kernels
// plus one float32 rounding (6e-8).
const (
	gemmTol64   = 1e-12
	gemmTol32   = 1e-4
	fastMathTol = 2e-7
)

// ensure that Gemm agrees with the reference triple loop for every transpose
// combination, for shapes that cross the tile boundaries, with strides and beta.
func TestGemm_MatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	shapes := [][3]int{{1, 1, 1}, {3, 5, 7}, {21, 382, 191}, {200, 70, 9}, {65, 193, 3}, {300, 2, 40}}
	for _, sh := range shapes {
		m, n, k := sh[0], sh[1], sh[2]
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				lda, ldb, ldc := k+2, n+1, n+3
				if tA {
					lda = m + 2
				}
				if tB {
					ldb = k + 1
				}
				rowsA, rowsB := m, k
				if tA {
					rowsA = k
				}
				if tB {
					rowsB = n
				}
				a := make([]float64, rowsA*lda)
				b := make([]float64, rowsB*ldb)
				c := make([]float64, m*ldc)
				for i := range a {
					a[i] = rng.Float64()*2 - 1
				}
				for i := range b {
					b[i] = rng.Float64()*2 - 1
				}
				for i := range c {
					c[i] = rng.Float64()*2 - 1
				}
				want := append([]float64(nil), c...)
				gemmRef(tA, tB, m, n, k, 0.7, a, lda, b, ldb, 0.3, want, ldc)
				got := append([]float64(nil), c...)
				Gemm(tA, tB, m, n, k, 0.7, a, lda, b, ldb, 0.3, got, ldc)
				a32, b32, c32 := conv32(a), conv32(b), conv32(c)
				Gemm(tA, tB, m, n, k, float32(0.7), a32, lda, b32, ldb, float32(0.3), c32, ldc)
				for i := range got {
					if math.Abs(got[i]-want[i]) > gemmTol64 {
						t.Fatalf("f64 %v tA=%v tB=%v: c[%d]=%v want %v", sh, tA, tB, i, got[i], want[i])
					}
					if math.Abs(float64(c32[i])-want[i]) > gemmTol32 {
						t.Fatalf("f32 %v tA=%v tB=%v: c[%d]=%v want %v", sh, tA, tB, i, c32[i], want[i])
					}
				}
			}
		}
	}
}

func conv32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

// ensure that a float32 GEMM with a workspace never allocates, with either
// kernel (so gonum never goes parallel under it, and the packed kernel reuses
// its workspace). Gemm itself draws workspaces from a sync.Pool, which the
// race detector empties at random, so the promise is tested on GemmWith.
func TestGemm_NoAlloc(t *testing.T) {
	m, n, k := 1344, 382, 191
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	var ws GemmWorkspace
	for _, gonum := range []bool{false, true} {
		prev := ForceGonumGemm(gonum)
		allocs := testing.AllocsPerRun(3, func() { GemmWith(&ws, false, false, m, n, k, 1, a, k, b, n, 0, c, n) })
		ForceGonumGemm(prev)
		if allocs != 0 {
			t.Fatalf("gonum=%v: Gemm allocated %v times", gonum, allocs)
		}
	}
}

// ensure that the fast float32 exp, tanh and sigmoid stay within fastMathTol
// (relative) of the float64 functions over the range the networks see.
func TestFastMath_Accuracy(t *testing.T) {
	for i := -200000; i <= 200000; i++ {
		x := float32(i) * 4e-4 // [-80, 80]
		checkRel(t, "exp", x, float64(Exp32(x)), math.Exp(float64(x)))
		checkRel(t, "tanh", x, float64(Tanh32(x)), math.Tanh(float64(x)))
		checkRel(t, "sigmoid", x, float64(Sigmoid(x)), 1/(1+math.Exp(-float64(x))))
	}
	for _, x := range []float32{1e-30, -1e-8, 3e-5, 0.0999, 0.1001, 9.99, 10.01, -87, 88.5} {
		checkRel(t, "exp", x, float64(Exp32(x)), math.Exp(float64(x)))
		checkRel(t, "tanh", x, float64(Tanh32(x)), math.Tanh(float64(x)))
	}
	if Exp32(100) != float32(math.Inf(1)) || Exp32(-200) != 0 || Tanh32(50) != 1 || Tanh32(-50) != -1 {
		t.Fatal("saturation values wrong")
	}
	if nan := float32(math.NaN()); !math.IsNaN(float64(Exp32(nan))) || !math.IsNaN(float64(Tanh32(nan))) {
		t.Fatal("NaN not propagated")
	}
}

func checkRel(t *testing.T, name string, x float32, got, want float64) {
	t.Helper()
	if want == 0 || math.IsInf(want, 0) {
		return
	}
	// exp below ~-87 is subnormal in float32, where relative error is meaningless.
	if math.Abs(want) < 1e-37 {
		return
	}
	if r := math.Abs(got-want) / math.Abs(want); r > fastMathTol || math.IsNaN(got) {
		t.Fatalf("%s(%v) = %v, want %v (rel %g)", name, x, got, want, r)
	}
}

// ensure that Batch and Reshape are views and Resize reuses capacity.
func TestDense_Views(t *testing.T) {
	d := New[float32](4, 3, 2)
	b := d.Batch(1, 3)
	if b.Shape != S(2, 3, 2) || len(b.Data) != 12 {
		t.Fatalf("batch view shape %v len %d", b.Shape, len(b.Data))
	}
	b.Data[0] = 5
	if d.Data[6] != 5 {
		t.Fatal("Batch is not a view")
	}
	r := d.Reshape(12, 2)
	if r.Shape.Rows() != 12 || r.Shape.Dim(-1) != 2 {
		t.Fatalf("reshape %v", r.Shape)
	}
	p := &d.Data[0]
	d.Resize(S(2, 2))
	if &d.Data[0] != p || d.Shape.Len() != 4 {
		t.Fatal("Resize did not reuse memory")
	}
}
