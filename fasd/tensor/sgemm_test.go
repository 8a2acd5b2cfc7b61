package tensor

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var gemmSeed = flag.Uint64("gemm.seed", 1, "seed of the randomized float32 GEMM property tests")

// gemmUnit32 is float32's unit roundoff (2⁻²⁴). A k-term dot product in
// float32 has a forward error of at most about k·u·Σ|aᵢbᵢ| (Higham, γ_k); we
// allow (k+4)·2u of the absolute-value sum to cover the alpha/beta update and
// FMA-versus-separate rounding.
const gemmUnit32 = 1.0 / (1 << 24)

// gemmCase is one randomized problem: op(A) m×k, op(B) k×n, padded leading
// dimensions, NaN-filled padding and guard regions.
type gemmCase struct {
	tA, tB        bool
	m, n, k       int
	lda, ldb, ldc int
	alpha, beta   float32
}

func (g gemmCase) String() string {
	return fmt.Sprintf("tA=%v tB=%v m=%d n=%d k=%d lda=%d ldb=%d ldc=%d alpha=%v beta=%v",
		g.tA, g.tB, g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.alpha, g.beta)
}

const gemmGuard = 37 // NaN guard elements before and after every matrix

func randGemmCase(rng *rand.Rand) gemmCase {
	dim := func() int {
		switch rng.IntN(6) {
		case 0:
			return rng.IntN(4) // 0..3: tiny, including empty
		case 1:
			return 1 + rng.IntN(17)
		case 2:
			return 6*(1+rng.IntN(6)) + rng.IntN(2) // around the 6-row tile
		case 3:
			return 16*(1+rng.IntN(4)) + rng.IntN(3) - 1 // around the 16-column tile
		default:
			return 1 + rng.IntN(70)
		}
	}
	g := gemmCase{tA: rng.IntN(2) == 1, tB: rng.IntN(2) == 1, m: dim(), n: dim(), k: dim()}
	alphas := []float32{1, 0.7, -1.25, 0}
	betas := []float32{0, 1, 0.3, -0.5}
	g.alpha, g.beta = alphas[rng.IntN(len(alphas))], betas[rng.IntN(len(betas))]
	colsA, colsB := g.k, g.n
	if g.tA {
		colsA = g.m
	}
	if g.tB {
		colsB = g.k
	}
	g.lda, g.ldb, g.ldc = max(1, colsA)+rng.IntN(3), max(1, colsB)+rng.IntN(3), max(1, g.n)+rng.IntN(3)
	return g
}

// nanBuf returns a buffer of rows×ld elements plus guards, all NaN, and the
// window holding the matrix.
func nanBuf(rows, ld int) (all, win []float32) {
	all = make([]float32, 2*gemmGuard+rows*ld)
	nan := float32(math.NaN())
	for i := range all {
		all[i] = nan
	}
	return all, all[gemmGuard : gemmGuard+rows*ld]
}

// fill writes random values in [-1, 1) to the rows×cols part of a padded
// matrix, leaving the padding NaN.
func fill(rng *rand.Rand, w []float32, rows, cols, ld int) {
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			w[i*ld+j] = float32(2*rng.Float64() - 1)
		}
	}
}

// checkGemm runs gemm on the case and compares it with a float64 reference
// loop; it fails on any NaN written into C or any guard or padding element
// that changed.
func checkGemm(t *testing.T, rng *rand.Rand, g gemmCase, gemm func(g gemmCase, a, b, c []float32)) {
	t.Helper()
	rowsA, colsA, rowsB, colsB := g.m, g.k, g.k, g.n
	if g.tA {
		rowsA, colsA = g.k, g.m
	}
	if g.tB {
		rowsB, colsB = g.n, g.k
	}
	_, a := nanBuf(rowsA, g.lda)
	_, b := nanBuf(rowsB, g.ldb)
	call, c := nanBuf(g.m, g.ldc)
	fill(rng, a, rowsA, colsA, g.lda)
	fill(rng, b, rowsB, colsB, g.ldb)
	if g.beta != 0 {
		fill(rng, c, g.m, g.n, g.ldc) // with beta == 0, C stays NaN: it must not be read
	}
	c0 := append([]float32(nil), c...)
	gemm(g, a, b, c)
	for i, v := range call {
		inC := i >= gemmGuard && i < gemmGuard+len(c) && (i-gemmGuard)%g.ldc < g.n
		if !inC && !math.IsNaN(float64(v)) {
			t.Fatalf("%v: guard/padding element %d overwritten with %v", g, i, v)
		}
	}
	at := func(i, p int) float64 {
		if g.tA {
			return float64(a[p*g.lda+i])
		}
		return float64(a[i*g.lda+p])
	}
	bt := func(p, j int) float64 {
		if g.tB {
			return float64(b[j*g.ldb+p])
		}
		return float64(b[p*g.ldb+j])
	}
	for i := 0; i < g.m; i++ {
		for j := 0; j < g.n; j++ {
			var s, abs float64
			for p := 0; p < g.k; p++ {
				s += at(i, p) * bt(p, j)
				abs += math.Abs(at(i, p) * bt(p, j))
			}
			want := float64(g.alpha) * s
			mag := math.Abs(float64(g.alpha)) * abs
			if g.beta != 0 {
				cv := float64(c0[i*g.ldc+j])
				want += float64(g.beta) * cv
				mag += math.Abs(float64(g.beta) * cv)
			}
			got := float64(c[i*g.ldc+j])
			tol := float64(g.k+4) * 2 * gemmUnit32 * mag
			if math.IsNaN(got) || math.Abs(got-want) > tol {
				t.Fatalf("%v: C[%d,%d] = %v, want %v (tol %v)", g, i, j, got, want, tol)
			}
		}
	}
}

func gemmVia(g gemmCase, a, b, c []float32) {
	Gemm(g.tA, g.tB, g.m, g.n, g.k, g.alpha, a, g.lda, b, g.ldb, g.beta, c, g.ldc)
}

// Large shapes crossing every blocking boundary (kcBlk, mcBlk, ncBlk) and the
// network shapes, with every transpose combination.
var gemmBigShapes = [][3]int{
	{21, 382, 191}, {97, 33, 257}, {13, 530, 40}, {200, 17, 300}, {76, 441, 38}, {38, 76, 441}, {1, 600, 1},
}

// ensure that the float32 Gemm (the AVX2+FMA kernel where available, gonum
// in the noasm build) matches a float64 reference loop on many random
// shapes, transposes, leading dimensions and alpha/beta values, never reads
// padding or C when beta == 0, and never writes outside C (NaN guards).
func TestGemm_Float32Property(t *testing.T) {
	t.Logf("kernel %s, seed %d (-gemm.seed)", GemmKernel(), *gemmSeed)
	rng := rand.New(rand.NewPCG(*gemmSeed, 2))
	for it := 0; it < 1500; it++ {
		checkGemm(t, rng, randGemmCase(rng), gemmVia)
	}
	// Small products read out of wide matrices (the per-head and per-channel
	// products of s_φ: lda, ldb ≫ k), odd sizes around the tiles and around
	// packAMinK, where A is read in place instead of packed.
	for it := 0; it < 300; it++ {
		g := randGemmCase(rng)
		g.m, g.n, g.k = 1+rng.IntN(40), 1+rng.IntN(40), 1+rng.IntN(2*packAMinK+2)
		colsA, colsB := g.k, g.n
		if g.tA {
			colsA = g.m
		}
		if g.tB {
			colsB = g.k
		}
		g.lda, g.ldb, g.ldc = colsA+packAMinLd+rng.IntN(40), colsB+rng.IntN(100), g.n+rng.IntN(3)
		checkGemm(t, rng, g, gemmVia)
	}
	for _, sh := range gemmBigShapes {
		for tt := 0; tt < 4; tt++ {
			g := randGemmCase(rng)
			g.m, g.n, g.k, g.tA, g.tB = sh[0], sh[1], sh[2], tt&1 == 1, tt&2 == 2
			colsA, colsB := g.k, g.n
			if g.tA {
				colsA = g.m
			}
			if g.tB {
				colsB = g.k
			}
			g.lda, g.ldb, g.ldc = colsA+1, colsB+2, g.n+1
			checkGemm(t, rng, g, gemmVia)
		}
	}
}

// ensure that the packed driver is correct with the portable micro-kernel, in
// every build (the assembly kernel is then checked against kernGo).
func TestSgemmPacked_GoKernelProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(*gemmSeed, 3))
	for _, kern2 := range []kern2Func{nil, kern2Go} {
		packed := func(g gemmCase, a, b, c []float32) {
			if g.m == 0 || g.n == 0 {
				return
			}
			sgemmPacked(new(sgemmWork), kernGo, kern2, g.tA, g.tB, g.m, g.n, g.k, g.alpha, a, g.lda, b, g.ldb, g.beta, c, g.ldc)
		}
		for it := 0; it < 500; it++ {
			checkGemm(t, rng, randGemmCase(rng), packed)
		}
		for _, sh := range gemmBigShapes {
			g := gemmCase{m: sh[0], n: sh[1], k: sh[2], tA: true, lda: sh[0], ldb: sh[1], ldc: sh[1], alpha: 1, beta: 0.5}
			checkGemm(t, rng, g, packed)
		}
	}
}

// ensure that the driver gives the same bits with and without the pair
// kernel (kern2Go is kernGo twice, so pairing must change no result), on
// random shapes and on shapes with many full column-panel pairs and an odd
// panel or a cut panel after them.
func TestSgemmPacked_PairSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(*gemmSeed, 11))
	cases := make([]gemmCase, 0, 300)
	for it := 0; it < 250; it++ {
		cases = append(cases, randGemmCase(rng))
	}
	for _, sh := range [][3]int{{13, 32, 7}, {12, 48, 20}, {7, 63, 300}, {30, 97, 5}, {6, 530, 9}, {25, 1030, 3}} {
		for tt := 0; tt < 4; tt++ {
			g := gemmCase{m: sh[0], n: sh[1], k: sh[2], tA: tt&1 == 1, tB: tt&2 == 2, alpha: 0.75, beta: float32(tt) * 0.25}
			g.lda, g.ldb, g.ldc = g.k+1, g.n+2, g.n+1
			if g.tA {
				g.lda = g.m + 1
			}
			if g.tB {
				g.ldb = g.k + 2
			}
			cases = append(cases, g)
		}
	}
	for _, g := range cases {
		if g.m == 0 || g.n == 0 {
			continue
		}
		var res [2][]float32
		for v, kern2 := range []kern2Func{nil, kern2Go} {
			r := rand.New(rand.NewPCG(*gemmSeed, 12))
			var all []float32
			checkGemm(t, r, g, func(g gemmCase, a, b, c []float32) {
				sgemmPacked(new(sgemmWork), kernGo, kern2, g.tA, g.tB, g.m, g.n, g.k, g.alpha, a, g.lda, b, g.ldb, g.beta, c, g.ldc)
				all = c
			})
			res[v] = all
		}
		for i := range res[0] {
			if math.Float32bits(res[0][i]) != math.Float32bits(res[1][i]) {
				t.Fatalf("%v: element %d = %v with the pair kernel, %v without", g, i, res[1][i], res[0][i])
			}
		}
	}
}

// ensure that the micro-kernel Gemm dispatches to agrees with kernGo for
// every A layout (packed, row-major and column-major in place), every tile
// size mr×nr up to 6×16 (masked stores), both alpha/beta paths, k = 0 and k
// not a multiple of the unrolling, and writes nothing outside the mr×nr
// window of C (NaN guards and padding stay NaN; with beta == 0 a NaN-filled
// C is not read).
func TestKernel_MatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(*gemmSeed, 4))
	compareKernels(t, rng, asmKernel, kernGo, []int{0, 1, 3, 4, 5, 13, 64}, []int{1, 5, 8, 9, 15, 16}, false,
		func(k int, x, y float32) bool {
			a, b := float64(x), float64(y)
			return math.IsNaN(a) == math.IsNaN(b) && !(math.Abs(a-b) > float64(k+4)*2*gemmUnit32*float64(k+1))
		})
}

// ensure that the AVX-512 micro-kernel gives kern6x16's results bit for bit
// (NaN guards included: both write nothing outside the mr×nr window) for
// every A layout, tile size, k and both beta paths, including A and B
// values that make the unused lanes of a half-width tile overflow.
func TestKernel512_MatchesAVX2(t *testing.T) {
	if !haveAsm512 {
		t.Skip("no AVX-512 here")
	}
	rng := rand.New(rand.NewPCG(*gemmSeed, 9))
	nrs := make([]int, kernN)
	for i := range nrs {
		nrs[i] = i + 1
	}
	compareKernels(t, rng, kern6x16z, kern6x16, []int{0, 1, 2, 3, 4, 5, 7, 13, 64, 257}, nrs, true,
		func(_ int, x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// ensure that the AVX-512 pair kernel gives two kern6x16z tiles' results
// bit for bit, writes nothing outside the mr×32 window of C (NaN guards and
// padding), does not read C with beta == 0, and reads the second B panel at
// boff, for every A layout, row count mr, k around the unrolling and both
// beta paths, with an overflowing product in one column of each panel.
func TestKernel512Pair_MatchesSingle(t *testing.T) {
	if !haveAsm512 {
		t.Skip("no AVX-512 here")
	}
	rng := rand.New(rand.NewPCG(*gemmSeed, 10))
	single := func(k int, a []float32, ras, cas int, b []float32, boff, ldb int, c []float32, ldc int, alpha, beta float32, mr int) {
		kern6x16z(k, a, ras, cas, b, ldb, c, ldc, alpha, beta, mr, kernN)
		kern6x16z(k, a, ras, cas, b[boff:], ldb, c[kernN:], ldc, alpha, beta, mr, kernN)
	}
	const ldc = 2*kernN + 3
	for _, k := range []int{0, 1, 2, 3, 4, 5, 7, 13, 64, 257} {
		for _, lay := range []struct{ ras, cas int }{{1, kernM}, {k + 2, 1}, {1, kernM + 3}} {
			a := make([]float32, max(1, (kernM-1)*lay.ras+max(0, k-1)*lay.cas+1))
			fill(rng, a, 1, len(a), len(a))
			// Packed panels (stride kernN, the second kernN·k on) and
			// panels in place (stride ldb, the second kernN on).
			for _, bl := range []struct{ ldb, boff int }{{kernN, kernN * k}, {2*kernN + 5, kernN}, {3*kernN + 1, kernN + 7}} {
				b := make([]float32, bl.boff+max(0, k-1)*bl.ldb+kernN)
				fill(rng, b, 1, len(b), len(b))
				if k > 2 {
					a[0] = 3e38
					b[bl.ldb+3], b[bl.boff+bl.ldb+kernN-1] = 3e38, -3e38
				}
				for _, beta := range []float32{0, 1, -0.5} {
					for mr := 1; mr <= kernM; mr++ {
						all1, c1 := nanBuf(kernM, ldc)
						if beta != 0 {
							for i := 0; i < mr; i++ {
								for j := 0; j < 2*kernN; j++ {
									c1[i*ldc+j] = float32(rng.Float64())
								}
							}
						}
						all2 := append([]float32(nil), all1...)
						c2 := all2[gemmGuard : gemmGuard+len(c1)]
						n := (mr-1)*ldc + 2*kernN
						kern6x32z(k, a, lay.ras, lay.cas, b, bl.boff, bl.ldb, c1[:n], ldc, 0.75, beta, mr)
						single(k, a, lay.ras, lay.cas, b, bl.boff, bl.ldb, c2[:n], ldc, 0.75, beta, mr)
						for i := range all1 {
							if math.Float32bits(all1[i]) != math.Float32bits(all2[i]) && !(math.IsNaN(float64(all1[i])) && math.IsNaN(float64(all2[i]))) {
								t.Fatalf("k=%d ras=%d cas=%d ldb=%d boff=%d beta=%v mr=%d: element %d = %v, want %v",
									k, lay.ras, lay.cas, bl.ldb, bl.boff, beta, mr, i-gemmGuard, all1[i], all2[i])
							}
						}
					}
				}
			}
		}
	}
}

// compareKernels runs kernels got and want on the same random A (three
// layouts), B and C for every k of ks, beta in {0, 1, −0.5}, mr ≤ kernM and
// nr of nrs, each into C inside NaN guards, and fails where same(k, x, y)
// is false for an element of the guarded buffers. With overflow, A and B
// hold one pair of values whose product overflows only in B's column 15.
func compareKernels(t *testing.T, rng *rand.Rand, got, want kernFunc, ks, nrs []int, overflow bool, same func(k int, x, y float32) bool) {
	t.Helper()
	const ldb, ldc = kernN + 5, kernN + 3
	for _, k := range ks {
		for _, lay := range []struct{ ras, cas int }{{1, kernM}, {k + 2, 1}, {1, kernM + 3}} {
			a := make([]float32, max(1, (kernM-1)*lay.ras+max(0, k-1)*lay.cas+1))
			fill(rng, a, 1, len(a), len(a))
			b := make([]float32, max(kernN, (k-1)*ldb+kernN))
			fill(rng, b, 1, len(b), len(b))
			if overflow && k > 2 {
				a[0], b[ldb+kernN-1] = 3e38, 3e38
			}
			for _, beta := range []float32{0, 1, -0.5} {
				for mr := 1; mr <= kernM; mr++ {
					for _, nr := range nrs {
						all1, c1 := nanBuf(kernM, ldc)
						for i := 0; i < mr; i++ {
							for j := 0; j < nr; j++ {
								if beta != 0 {
									c1[i*ldc+j] = float32(rng.Float64())
								}
							}
						}
						all2 := append([]float32(nil), all1...)
						c2 := all2[gemmGuard : gemmGuard+len(c1)]
						n := (mr-1)*ldc + nr
						got(k, a, lay.ras, lay.cas, b, ldb, c1[:n], ldc, 0.75, beta, mr, nr)
						want(k, a, lay.ras, lay.cas, b, ldb, c2[:n], ldc, 0.75, beta, mr, nr)
						for i := range all1 {
							if !same(k, all1[i], all2[i]) {
								t.Fatalf("k=%d ras=%d cas=%d beta=%v mr=%d nr=%d: element %d = %v, want %v",
									k, lay.ras, lay.cas, beta, mr, nr, i-gemmGuard, all1[i], all2[i])
							}
						}
					}
				}
			}
		}
	}
}

// ensure that ForceGonumGemm switches the float32 kernel and reports the
// previous setting.
func TestForceGonumGemm_Switches(t *testing.T) {
	prev := ForceGonumGemm(true)
	defer ForceGonumGemm(prev)
	if GemmKernel() != "gonum" {
		t.Fatalf("forced kernel is %q", GemmKernel())
	}
	if !ForceGonumGemm(false) {
		t.Fatal("ForceGonumGemm did not report the forced setting")
	}
	want := "gonum"
	if haveAsmKernel {
		want = "avx2+fma"
		if haveAsm512 {
			want = "avx512+fma"
		}
	}
	if GemmKernel() != want {
		t.Fatalf("kernel %q, want %q", GemmKernel(), want)
	}
	rng := rand.New(rand.NewPCG(*gemmSeed, 5))
	ForceGonumGemm(true)
	for it := 0; it < 100; it++ {
		checkGemm(t, rng, randGemmCase(rng), gemmVia)
	}
}

// ensure that a float32 GemmWith over several blocks with a transposed B
// allocates nothing once its workspace exists.
func TestGemm_NoAllocBlocked(t *testing.T) {
	m, n, k := 97, 530, 300
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	var ws GemmWorkspace
	if allocs := testing.AllocsPerRun(5, func() {
		GemmWith(&ws, false, true, m, n, k, 1, a, k, b, k, 0, c, n)
	}); allocs != 0 {
		t.Fatalf("Gemm allocated %v times per call", allocs)
	}
}

// BenchmarkGemm32 compares the float32 kernels on the network's shapes (the
// score networks' and, from 672×64×64 on, f's: a batch of 32 subgraphs of
// 21 nodes, hidden width 64, its three products and the GCN propagation),
// one goroutine: kernel=asm is Gemm's default (AVX-512 where the CPU has
// it), kernel=single the same without the pair kernel (6×16 tiles only),
// kernel=avx2 the AVX2 micro-kernel in its place, kernel=gonum is
// ForceGonumGemm.
func BenchmarkGemm32(b *testing.B) {
	for _, s := range [][5]int{
		{21, 382, 191, 0, 0}, {1344, 382, 191, 0, 0}, {1344, 191, 382, 0, 1}, {191, 382, 1344, 1, 0},
		{76, 441, 38, 1, 0}, {38, 441, 76, 0, 0}, {38, 76, 441, 0, 1}, {21, 96, 21, 0, 0}, {21, 21, 8, 0, 1}, {256, 256, 256, 0, 0},
		{672, 64, 64, 0, 0}, {672, 64, 64, 0, 1}, {64, 64, 672, 1, 0}, {672, 64, 18, 0, 0}, {21, 64, 21, 0, 0},
	} {
		m, n, k, tA, tB := s[0], s[1], s[2], s[3] == 1, s[4] == 1
		for _, kern := range []string{"asm", "single", "avx2", "gonum"} {
			b.Run(fmt.Sprintf("%dx%dx%d_tA%v_tB%v/kernel=%s", m, n, k, s[3], s[4], kern), func(b *testing.B) {
				if kern != "gonum" && !haveAsmKernel {
					b.Skip("no assembly kernel in this build")
				}
				if kern == "single" && asmKernel2 == nil {
					b.Skip("no pair kernel in this build")
				}
				if kern == "single" || kern == "avx2" {
					defer func(k kern2Func) { asmKernel2 = k }(asmKernel2)
					asmKernel2 = nil
				}
				if kern == "avx2" {
					defer func(k kernFunc) { asmKernel = k }(asmKernel)
					asmKernel = kern6x16
				}
				prev := ForceGonumGemm(kern == "gonum")
				defer ForceGonumGemm(prev)
				a, bb, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
				for i := range a {
					a[i] = float32(i%7) * 0.1
				}
				for i := range bb {
					bb[i] = float32(i%5) * 0.1
				}
				lda, ldb := k, n
				if tA {
					lda = m
				}
				if tB {
					ldb = k
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					Gemm(tA, tB, m, n, k, 1, a, lda, bb, ldb, 0, c, n)
				}
				b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkGemmSmall measures the per-subgraph products of s_φ (N = 21,
// per-head width 8, per-channel width 96), where fixed per-call costs
// dominate: ns per call and GFLOP/s.
func BenchmarkGemmSmall(b *testing.B) {
	for _, s := range []struct {
		name     string
		m, n, k  int
		tA, tB   bool
		lda, ldb int
	}{
		{"QK^T_21x21x8", 21, 21, 8, false, true, 96, 96},
		{"dS.K_21x8x21", 21, 8, 21, false, false, 21, 96},
		{"dS^T.Q_21x8x21", 21, 8, 21, true, false, 21, 96},
		{"prop_21x96x21", 21, 96, 21, false, false, 21, 96},
		{"propT_21x96x21", 21, 96, 21, true, false, 21, 96},
		{"dA_21x21x96", 21, 21, 96, false, true, 96, 96},
		{"QbdK^T_84x21x32", 84, 21, 32, false, true, 32, 96},
	} {
		b.Run(s.name, func(b *testing.B) {
			a := make([]float32, 100*100)
			bb := make([]float32, 100*100)
			c := make([]float32, s.m*s.n)
			for i := range a {
				a[i] = float32(i%7) * 0.1
				bb[i] = float32(i%5) * 0.1
			}
			var ws GemmWorkspace
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				GemmWith(&ws, s.tA, s.tB, s.m, s.n, s.k, 1, a, s.lda, bb, s.ldb, 1, c, s.n)
			}
			b.ReportMetric(float64(2*s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
