package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ensure that PackNT transposes B's first k columns into the 32-wide panel
// and leaves the lanes past n as they were, on the assembly path and on the
// portable one.
func TestPackNT(t *testing.T) {
	rng := rand.New(rand.NewPCG(*gemmSeed, 20))
	for _, c := range []struct{ n, k, ldb int }{{1, 1, 1}, {21, 8, 96}, {32, 32, 40}, {5, 3, 3}, {0, 4, 4}, {17, 9, 9}, {7, 16, 30}} {
		b := make([]float32, max(1, c.n*c.ldb))
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		for _, pack := range []func(dst, b []float32, ldb, n, k int){PackNT[float32], packNTGo[float32]} {
			dst := make([]float32, c.k*NTCols)
			for i := range dst {
				dst[i] = float32(math.NaN())
			}
			pack(dst, b, c.ldb, c.n, c.k)
			for p := 0; p < c.k; p++ {
				for j := 0; j < NTCols; j++ {
					want := float32(math.NaN())
					if j < c.n {
						want = b[j*c.ldb+p]
					}
					if got := dst[p*NTCols+j]; math.Float32bits(got) != math.Float32bits(want) && !(j >= c.n && math.IsNaN(float64(got))) {
						t.Fatalf("n %d k %d: dst[%d][%d] = %v, want %v", c.n, c.k, p, j, got, want)
					}
				}
			}
		}
	}
}

// ensure that GemmNT writes what Gemm writes (transB, beta 0) bit for bit,
// for every row count around the four-row blocks, every column count up to
// 32 and several k and strides, with an overflowing product in one row and
// a signed zero in A; that it writes nothing outside C's m×n window (NaN
// guards and padding) and does not read C; and that it declines, writing
// nothing, where its kernel cannot run.
func TestGemmNT_SameBitsAsGemm(t *testing.T) {
	if !haveAsm512 {
		t.Skip("no AVX-512 here")
	}
	rng := rand.New(rand.NewPCG(*gemmSeed, 21))
	const guard = gemmGuard
	nan := float32(math.NaN())
	for _, m := range []int{1, 2, 3, 4, 5, 7, 8, 21, 33} {
		for n := 1; n <= NTCols; n++ {
			for _, k := range []int{1, 3, 8, 17} {
				lda, ldb, ldc := k+rng.IntN(3), k+rng.IntN(3)*5, n+rng.IntN(3)
				alpha := float32(rng.NormFloat64())
				a := make([]float32, m*lda)
				b := make([]float32, n*ldb)
				fill(rng, a, m, k, lda)
				fill(rng, b, n, k, ldb)
				a[0] = float32(math.Copysign(0, -1))
				if m > 2 {
					a[2*lda] = 3e38 // row 2 overflows to ±Inf wherever B's first column is large
				}
				want := make([]float32, 2*guard+(m-1)*ldc+n)
				got := make([]float32, len(want))
				for i := range want {
					want[i], got[i] = nan, nan
				}
				Gemm(false, true, m, n, k, alpha, a, lda, b, ldb, 0, want[guard:], ldc)
				bt := make([]float32, k*NTCols)
				PackNT(bt, b, ldb, n, k)
				if !GemmNT(m, n, k, alpha, a, lda, bt, got[guard:], ldc) {
					t.Fatal("GemmNT declined on an AVX-512 machine")
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("m %d n %d k %d lda %d ldc %d: element %d (C offset %d) = %v, Gemm wrote %v",
							m, n, k, lda, ldc, i, i-guard, got[i], want[i])
					}
				}
			}
		}
	}

	if !HaveGemmNT[float32]() || HaveGemmNT[float64]() {
		t.Fatalf("HaveGemmNT: float32 %v, float64 %v on an AVX-512 machine", HaveGemmNT[float32](), HaveGemmNT[float64]())
	}
	prev := ForceGonumGemm(true)
	defer ForceGonumGemm(prev)
	if HaveGemmNT[float32]() {
		t.Fatal("HaveGemmNT under ForceGonumGemm(true)")
	}
	c := []float32{nan}
	if GemmNT(1, 1, 1, 1, []float32{1}, 1, make([]float32, NTCols), c, 1) || !math.IsNaN(float64(c[0])) {
		t.Fatalf("GemmNT ran under ForceGonumGemm(true) (C = %v)", c)
	}
}

// ensure that GemmNT declines float64 without writing, and panics on shapes
// it cannot hold.
func TestGemmNT_DeclinesAndPanics(t *testing.T) {
	c := []float64{math.NaN()}
	if GemmNT(1, 1, 1, 1, []float64{1}, 1, make([]float64, NTCols), c, 1) || !math.IsNaN(c[0]) {
		t.Fatalf("GemmNT ran on float64 (C = %v)", c)
	}
	for name, f := range map[string]func(){
		"n > 32":      func() { GemmNT(1, 33, 1, 1, make([]float32, 1), 1, make([]float32, NTCols), make([]float32, 33), 33) },
		"k 0":         func() { GemmNT(1, 1, 0, 1, make([]float32, 1), 1, make([]float32, NTCols), make([]float32, 1), 1) },
		"short panel": func() { GemmNT(1, 1, 2, 1, make([]float32, 2), 2, make([]float32, NTCols), make([]float32, 1), 1) },
		"short C":     func() { GemmNT(2, 3, 1, 1, make([]float32, 2), 1, make([]float32, NTCols), make([]float32, 5), 3) },
		"PackNT n":    func() { PackNT(make([]float32, NTCols), make([]float32, 33), 1, 33, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// BenchmarkGemmNT is one attention channel of s_φ on a 21-node subgraph:
// K's 32 columns packed once, then four heads' 21×21×8 products, against
// the same four products through Gemm.
func BenchmarkGemmNT(b *testing.B) {
	const nn, cg, dk, dh = 21, 96, 32, 8
	rng := rand.New(rand.NewPCG(1, 1))
	q := make([]float32, nn*cg)
	fill(rng, q, nn, cg, cg)
	s := make([]float32, nn*nn)
	bt := make([]float32, dk*NTCols)
	b.Run("GemmNT", func(b *testing.B) {
		for b.Loop() {
			PackNT(bt, q[dk:], cg, nn, dk)
			for h := 0; h < dk/dh; h++ {
				GemmNT(nn, nn, dh, 0.5, q[h*dh:], cg, bt[h*dh*NTCols:], s, nn)
			}
		}
	})
	b.Run("PackNT", func(b *testing.B) {
		for b.Loop() {
			PackNT(bt, q[dk:], cg, nn, dk)
		}
	})
	b.Run("Gemm", func(b *testing.B) {
		var ws GemmWorkspace
		for b.Loop() {
			for h := 0; h < dk/dh; h++ {
				GemmWith(&ws, false, true, nn, nn, dh, 0.5, q[h*dh:], cg, q[dk+h*dh:], cg, 0, s, nn)
			}
		}
	})
}
