package tensor

import (
	"sync"
	"sync/atomic"
)

// The float32 GEMM of the AVX2 build. The layout follows the usual blocking
// of high-performance GEMMs: C is computed in blocks of at most ncBlk
// columns and, per k-slice of at most kcBlk, in blocks of at most mcBlk rows;
// the micro-kernel multiplies a kernM-row panel of op(A) by a kernN-column
// panel of op(B) into a kernM×kernN tile of C held in registers. Where the
// build has a pair kernel (kern2Func: AVX-512), the tiles of two adjacent
// full column panels go through it in one pass, with the same arithmetic
// per element.
//
// The kernel reads A and B through strides, so most panels are used in place:
// a non-transposed B row by row (ldb apart), A either way (row and column
// strides). Packing (into kernM/kernN-wide panels, zero padded) is left for
// what the kernel cannot read in place: transposed B, the panels cut by the
// edge of A or B, and A when it is reused across column panels (see
// packAllA). Tiles cut by the edge of C are spilled to a scratch tile on the
// kernel's stack and stored row by row, so the kernel never touches memory
// outside the m×n window of C.
const (
	kernM = 6  // rows of the micro-kernel tile
	kernN = 16 // columns of the micro-kernel tile (two 8-wide AVX registers)
	kcBlk = 256
	mcBlk = 16 * kernM // 96 rows: the packed A block (96 KiB) stays in L2
	ncBlk = 32 * kernN // 512 columns: the packed B block (512 KiB)
)

// kernFunc computes, for i < mr ≤ kernM and j < nr ≤ kernN,
// C[i][j] = alpha·Σ_{p<k} A[i][p]·B[p][j] + beta·C[i][j] with
// A[i][p] = a[i·ras + p·cas] for all i < kernM and B[p][j] = b[p·ldb + j] for
// all j < kernN (both are read in full, so padding rows/columns must be
// readable; with nr ≤ kernN/2 a kernel may skip B's columns kernN/2..), and
// C[i][j] = c[i·ldc + j]. With beta == 0, C is not read; no
// element of c outside the mr×nr window is read or written.
type kernFunc func(k int, a []float32, ras, cas int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32, mr, nr int)

// kern2Func computes two kernN-column tiles side by side: for i < mr ≤ kernM
// and j < 2·kernN, C[i][j] = alpha·Σ_{p<k} A[i][p]·B[p][j] + beta·C[i][j],
// with A and C as in kernFunc (all kernM rows of A are read) and
// B[p][j] = b[p·ldb + j] for j < kernN and b[boff + p·ldb + j − kernN] for
// the other kernN columns: exactly what two kernFunc calls with nr = kernN
// give, bit for bit. With beta == 0, C is not read; no element of c outside
// the mr×2·kernN window is read or written.
type kern2Func func(k int, a []float32, ras, cas int, b []float32, boff, ldb int, c []float32, ldc int, alpha, beta float32, mr int)

// packAllA reports whether every A panel of a block nc columns wide is
// packed (true) or read in place (false). Packing makes the kernel's A reads
// contiguous and pays as soon as a panel is reused across column panels; a
// block one panel wide uses each A panel once, so packing would only add a
// pass; and a narrow A (lda ≤ packAMinLd, e.g. an N×N adjacency) is already
// compact. Measured on the score networks (CPU time per NBA subgraph, same
// run, before the lda rule): packing from 2 panels on 3.57 ms, always
// 3.83 ms, from 8 panels on 4.12 ms, never 4.42 ms; the lda rule then gave
// 3.74 vs 3.86 ms.
func packAllA(nc, kc, lda int) bool {
	return nc >= packAMinN && lda > packAMinLd && kc > packAMinK
}

// packAMinK is the k-slice up to which A is never packed: a panel that short
// (six rows of at most packAMinK values) costs as much to pack as to use.
const packAMinK = 16

// packAMinLd is the leading dimension of A up to which A is never packed:
// six rows (or a column run) of a matrix this narrow lie within a couple of
// KiB, as compact as a packed panel.
const packAMinLd = 64

// packAMinN is the block width from which A is packed.
const packAMinN = kernN + 1

// sgemmWork is the packing workspace of one Gemm call. It is pooled so that
// Gemm allocates nothing in steady state; one is in use per concurrent call.
type sgemmWork struct {
	a [mcBlk * kcBlk]float32
	b [kcBlk * ncBlk]float32
}

// sgemmPool holds packing workspaces. It is a cache with no observable state:
// every call packs before it reads.
var sgemmPool = sync.Pool{New: func() any { return new(sgemmWork) }}

// forceGonum disables the assembly kernel at run time (see ForceGonumGemm).
var forceGonum atomic.Bool

// ForceGonumGemm makes Gemm use gonum's blas32 for float32 even when the
// AVX2+FMA kernel is available (force = true), or lets it choose again
// (force = false), and returns the previous setting. It is a process-wide
// switch meant for benchmarks and A/B comparisons; results of the two kernels
// differ in rounding only.
func ForceGonumGemm(force bool) bool { return forceGonum.Swap(force) }

// GemmKernel names the float32 kernel Gemm currently uses: "avx512+fma" or
// "avx2+fma" (the packed assembly kernels of this package, bit-identical to
// each other; AVX-512 where the CPU has it) or "gonum" (blas32, the pure-Go
// fallback: no AVX2/FMA, the noasm build tag, or ForceGonumGemm).
func GemmKernel() string {
	if useAsmKernel() {
		return asmKernelName()
	}
	return "gonum"
}

func useAsmKernel() bool { return haveAsmKernel && !forceGonum.Load() }

// sgemmPacked is Gemm for float32 through the blocked driver, workspace w
// and kern; with kern2 != nil, the tiles of two adjacent full column
// panels go through kern2 in one pass. It assumes m, n > 0.
func sgemmPacked(w *sgemmWork, kern kernFunc, kern2 kern2Func, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	for jc := 0; jc < n; jc += ncBlk {
		nc := min(ncBlk, n-jc)
		for pc := 0; pc < k; pc += kcBlk {
			kc := min(kcBlk, k-pc)
			allA := packAllA(nc, kc, lda)
			bt := beta
			if pc > 0 {
				bt = 1
			}
			packB(w.b[:], transB, b, ldb, pc, kc, jc, nc)
			for ic := 0; ic < m; ic += mcBlk {
				mc := min(mcBlk, m-ic)
				packA(w.a[:], transA, a, lda, ic, mc, pc, kc, allA)
				for jr := 0; jr < nc; {
					nr := min(kernN, nc-jr)
					// With pair, the panel at jr and the one after it (pw
					// columns in all): the second starts boff values after
					// the first, with the same stride (in place: kernN
					// columns on; packed: the next kernN×kc panel).
					pair := kern2 != nil && nc-jr >= 2*kernN
					pw := kernN
					if pair {
						pw = 2 * kernN
					}
					bp, bs, boff := w.b[jr*kc:(jr+pw)*kc], kernN, kernN*kc
					if !transB && nr == kernN {
						o := pc*ldb + jc + jr
						bp, bs, boff = b[o:o+(kc-1)*ldb+pw], ldb, kernN
					}
					for ir := 0; ir < mc; ir += kernM {
						mr := min(kernM, mc-ir)
						ap, ras, cas := w.a[ir*kc:(ir+kernM)*kc], 1, kernM
						switch {
						case allA || mr < kernM:
						case transA:
							o := pc*lda + ic + ir
							ap, ras, cas = a[o:o+(kc-1)*lda+kernM], 1, lda
						default:
							o := (ic+ir)*lda + pc
							ap, ras, cas = a[o:o+(kernM-1)*lda+kc], lda, 1
						}
						co := (ic+ir)*ldc + jc + jr
						if pair {
							kern2(kc, ap, ras, cas, bp, boff, bs, c[co:co+(mr-1)*ldc+pw], ldc, alpha, bt, mr)
						} else {
							kern(kc, ap, ras, cas, bp, bs, c[co:co+(mr-1)*ldc+nr], ldc, alpha, bt, mr, nr)
						}
					}
					jr += pw
				}
			}
		}
	}
}

// packA packs rows [ic, ic+mc) and columns [pc, pc+kc) of op(A) into
// micro-panels of kernM rows: panel r holds, for each p, the kernM values
// op(A)[ic+r·kernM+i][pc+p], i = 0..kernM−1, zero beyond row mc. With
// all == false only the panel cut by the edge (mc not a multiple of kernM) is
// packed: the kernel reads the others in place.
func packA(dst []float32, trans bool, a []float32, lda, ic, mc, pc, kc int, all bool) {
	for ir := 0; ir < mc; ir += kernM {
		mr := min(kernM, mc-ir)
		if !all && mr == kernM {
			continue
		}
		panel := dst[ir*kc : (ir+kernM)*kc]
		switch {
		case trans && mr == kernM:
			// op(A)[i][p] = a[p·lda+i]: kernM consecutive values per p.
			for p := 0; p < kc; p++ {
				o := (pc+p)*lda + ic + ir
				s, d := a[o:o+kernM:o+kernM], panel[p*kernM:p*kernM+kernM:p*kernM+kernM]
				d[0], d[1], d[2], d[3], d[4], d[5] = s[0], s[1], s[2], s[3], s[4], s[5]
			}
		case trans:
			for p := 0; p < kc; p++ {
				o := (pc+p)*lda + ic + ir
				d := panel[p*kernM : p*kernM+kernM]
				copy(d, a[o:o+mr])
				clear(d[mr:])
			}
		case mr == kernM:
			// op(A)[i][p] = a[i·lda+p]: six row streams, sequential writes.
			o := (ic+ir)*lda + pc
			r0 := a[o : o+kc]
			r1 := a[o+lda : o+lda+kc]
			r2 := a[o+2*lda : o+2*lda+kc]
			r3 := a[o+3*lda : o+3*lda+kc]
			r4 := a[o+4*lda : o+4*lda+kc]
			r5 := a[o+5*lda : o+5*lda+kc]
			for p := range r0 {
				d := (*[kernM]float32)(panel[p*kernM:])
				d[0], d[1], d[2], d[3], d[4], d[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
			}
		default:
			clear(panel)
			for i := 0; i < mr; i++ {
				o := (ic+ir+i)*lda + pc
				for p, v := range a[o : o+kc] {
					panel[p*kernM+i] = v
				}
			}
		}
	}
}

// packB packs rows [pc, pc+kc) and columns [jc, jc+nc) of op(B) into
// micro-panels of kernN columns: panel r holds, for each p, the kernN values
// op(B)[pc+p][jc+r·kernN+j], j = 0..kernN−1, zero beyond column nc.
func packB(dst []float32, trans bool, b []float32, ldb, pc, kc, jc, nc int) {
	for jr := 0; jr < nc; jr += kernN {
		nr := min(kernN, nc-jr)
		panel := dst[jr*kc : (jr+kernN)*kc]
		switch {
		case !trans && nr == kernN:
			// Read in place by the kernel.
		case !trans:
			for p := 0; p < kc; p++ {
				o := (pc+p)*ldb + jc + jr
				d := panel[p*kernN : p*kernN+kernN]
				copy(d, b[o:o+nr])
				clear(d[nr:])
			}
		default:
			// op(B)[p][j] = b[j·ldb+p]: gather kernN column streams, four at a time.
			if nr < kernN {
				clear(panel)
			}
			j := 0
			for ; j+4 <= nr; j += 4 {
				o := (jc+jr+j)*ldb + pc
				c0 := b[o : o+kc]
				c1 := b[o+ldb : o+ldb+kc]
				c2 := b[o+2*ldb : o+2*ldb+kc]
				c3 := b[o+3*ldb : o+3*ldb+kc]
				for p := range c0 {
					d := (*[4]float32)(panel[p*kernN+j:])
					d[0], d[1], d[2], d[3] = c0[p], c1[p], c2[p], c3[p]
				}
			}
			for ; j < nr; j++ {
				o := (jc+jr+j)*ldb + pc
				for p, v := range b[o : o+kc] {
					panel[p*kernN+j] = v
				}
			}
		}
	}
}

// scaleC sets C = beta·C (C = 0 when beta == 0, without reading C).
func scaleC[T Float](m, n int, beta T, c []T, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// kern2Go is the portable pair kernel with the kern2Func contract: kernGo
// on each of the two tiles.
func kern2Go(k int, a []float32, ras, cas int, b []float32, boff, ldb int, c []float32, ldc int, alpha, beta float32, mr int) {
	kernGo(k, a, ras, cas, b, ldb, c, ldc, alpha, beta, mr, kernN)
	kernGo(k, a, ras, cas, b[boff:], ldb, c[kernN:], ldc, alpha, beta, mr, kernN)
}

// kernGo is the portable micro-kernel with the kernFunc contract. Tests use
// it to check the blocked driver in every build; the assembly kernel is
// checked against it.
func kernGo(k int, a []float32, ras, cas int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32, mr, nr int) {
	var acc [kernM * kernN]float32
	for p := 0; p < k; p++ {
		bv := b[p*ldb : p*ldb+kernN]
		for i := 0; i < kernM; i++ {
			x := a[i*ras+p*cas]
			row := acc[i*kernN : i*kernN+kernN]
			for j, y := range bv {
				row[j] += x * y
			}
		}
	}
	for i := 0; i < mr; i++ {
		row := c[i*ldc : i*ldc+nr]
		for j := range row {
			if beta == 0 {
				row[j] = alpha * acc[i*kernN+j]
			} else {
				row[j] = alpha*acc[i*kernN+j] + beta*row[j]
			}
		}
	}
}
