package tensor

import (
	"sync"
	"sync/atomic"
)

// The packed float32 GEMM. The layout follows the usual three-level blocking
// of high-performance GEMMs: C is computed in blocks of at most ncBlk columns;
// for each k-slice of at most kcBlk, the slice of op(B) is packed into
// micro-panels of kernN columns (kernN consecutive values per k step, zero
// padded), then for every block of at most mcBlk rows the slice of op(A) is
// packed into micro-panels of kernM rows (kernM consecutive values per k
// step, zero padded), and the micro-kernel multiplies one A micro-panel by one
// B micro-panel into a kernM×kernN tile of C held in registers. Packing makes
// the four transpose combinations the same problem for the kernel.
//
// Full tiles are written by the kernel itself (C = alpha·AB + beta·C, C not
// read when beta == 0); tiles cut by the edge of C are computed into a
// scratch tile and merged in Go, so the kernel never touches memory outside
// the m×n window of C.
const (
	kernM = 6  // rows of the micro-kernel tile
	kernN = 16 // columns of the micro-kernel tile (two 8-wide AVX registers)
	kcBlk = 256
	mcBlk = 16 * kernM // 96 rows: the packed A block (96 KiB) stays in L2
	ncBlk = 32 * kernN // 512 columns: the packed B block (512 KiB)
)

// kernFunc computes the kernM×kernN tile
// C = alpha·Ap·Bp + beta·C, where ap holds k groups of kernM values (column p
// of the A micro-panel), row p of the B micro-panel is the kernN values at
// bp[p·ldb:] (ldb = kernN for a packed panel, B's own row stride when the
// kernel reads a non-transposed B in place), and C starts at c[0] with row
// stride ldc. With beta == 0, C is not read.
type kernFunc func(k int, ap, bp []float32, ldb int, c []float32, ldc int, alpha, beta float32)

// sgemmWork is the packing workspace of one Gemm call. It is pooled so that
// Gemm allocates nothing in steady state; one is in use per concurrent call.
type sgemmWork struct {
	a    [mcBlk * kcBlk]float32
	b    [kcBlk * ncBlk]float32
	tile [kernM * kernN]float32
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

// GemmKernel names the float32 kernel Gemm currently uses: "avx2+fma" (the
// packed assembly kernel of this package) or "gonum" (blas32, the pure-Go
// fallback: no AVX2/FMA, the noasm build tag, or ForceGonumGemm).
func GemmKernel() string {
	if useAsmKernel() {
		return "avx2+fma"
	}
	return "gonum"
}

func useAsmKernel() bool { return haveAsmKernel && !forceGonum.Load() }

// sgemmPacked is Gemm for float32 through the packed driver, workspace w and
// kern. It assumes m, n > 0.
func sgemmPacked(w *sgemmWork, kern kernFunc, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	for jc := 0; jc < n; jc += ncBlk {
		nc := min(ncBlk, n-jc)
		for pc := 0; pc < k; pc += kcBlk {
			kc := min(kcBlk, k-pc)
			bt := beta
			if pc > 0 {
				bt = 1
			}
			packB(w.b[:], transB, b, ldb, pc, kc, jc, nc)
			// A non-transposed B is read in place for its full panels.
			var bIn []float32
			if !transB {
				bIn = b[pc*ldb+jc:]
			}
			for ic := 0; ic < m; ic += mcBlk {
				mc := min(mcBlk, m-ic)
				packA(w.a[:], transA, a, lda, ic, mc, pc, kc)
				macroKernel(kern, w, bIn, ldb, mc, nc, kc, alpha, bt, c[ic*ldc+jc:], ldc)
			}
		}
	}
}

// macroKernel multiplies the packed mc×kc block of A by the kc×nc block of
// B into C (starting at c[0], row stride ldc). B's full panels are read in
// place from bIn (row stride ldb) when bIn != nil, else from the packed
// block; partial panels are always packed.
func macroKernel(kern kernFunc, w *sgemmWork, bIn []float32, ldb, mc, nc, kc int, alpha, beta float32, c []float32, ldc int) {
	for jr := 0; jr < nc; jr += kernN {
		nr := min(kernN, nc-jr)
		bp, bs := w.b[jr*kc:(jr+kernN)*kc], kernN
		if bIn != nil && nr == kernN {
			bp, bs = bIn[jr:jr+(kc-1)*ldb+kernN], ldb
		}
		for ir := 0; ir < mc; ir += kernM {
			mr := min(kernM, mc-ir)
			ap := w.a[ir*kc : (ir+kernM)*kc]
			co := ir*ldc + jr
			if mr == kernM && nr == kernN {
				cc := c[co : co+(kernM-1)*ldc+kernN]
				kern(kc, ap, bp, bs, cc, ldc, alpha, beta)
				continue
			}
			t := w.tile[:]
			kern(kc, ap, bp, bs, t, kernN, 1, 0)
			for i := 0; i < mr; i++ {
				row := c[co+i*ldc : co+i*ldc+nr]
				tr := t[i*kernN : i*kernN+nr]
				if beta == 0 {
					for j, v := range tr {
						row[j] = alpha * v
					}
				} else {
					for j, v := range tr {
						row[j] = alpha*v + beta*row[j]
					}
				}
			}
		}
	}
}

// packA packs rows [ic, ic+mc) and columns [pc, pc+kc) of op(A) into
// micro-panels of kernM rows: panel r holds, for each p, the kernM values
// op(A)[ic+r·kernM+i][pc+p], i = 0..kernM−1, zero beyond row mc.
func packA(dst []float32, trans bool, a []float32, lda, ic, mc, pc, kc int) {
	for ir := 0; ir < mc; ir += kernM {
		mr := min(kernM, mc-ir)
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

// kernGo is the portable micro-kernel with the kernFunc contract. Tests use
// it to check the packing driver in every build; the assembly kernel is
// checked against it.
func kernGo(k int, ap, bp []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
	var acc [kernM * kernN]float32
	ap = ap[:k*kernM]
	for p := 0; p < k; p++ {
		av := ap[p*kernM : p*kernM+kernM]
		bv := bp[p*ldb : p*ldb+kernN]
		for i, x := range av {
			row := acc[i*kernN : i*kernN+kernN]
			for j, y := range bv {
				row[j] += x * y
			}
		}
	}
	for i := 0; i < kernM; i++ {
		row := c[i*ldc : i*ldc+kernN]
		for j := range row {
			if beta == 0 {
				row[j] = alpha * acc[i*kernN+j]
			} else {
				row[j] = alpha*acc[i*kernN+j] + beta*row[j]
			}
		}
	}
}
