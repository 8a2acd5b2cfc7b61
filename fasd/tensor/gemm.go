package tensor

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// Output tiles handed to gonum in one call. gonum's [SD]gemm goes parallel
// (spawning goroutines and allocating) once the output has 4 or more 64×64
// blocks, so a tile never holds more than 3 of them.
const (
	tileRows = 192
	tileCols = 64
)

// Gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices, where
// op(X) is X or Xᵀ depending on transA/transB, op(A) is m×k, op(B) is k×n and
// C is m×n, with leading dimensions lda, ldb, ldc (row strides). With
// beta == 0, C is not read (NaNs in it do not propagate). float32 runs on the
// packed AVX2+FMA kernel of this package where the CPU has it (see
// GemmKernel), else on gonum's blas32; float64 runs on blas64. It never starts
// goroutines and allocates nothing in steady state (packing workspaces are
// pooled). It is safe for concurrent use; C must not overlap A or B.
func Gemm[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	GemmWith(nil, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// GemmWorkspace holds the packing buffers of the float32 kernel (about
// 0.6 MiB, allocated on first use). The zero value is ready to use. A
// workspace must not be used by two calls at once; give each goroutine its
// own (autodiff gives one to every tape).
type GemmWorkspace struct {
	w *sgemmWork
}

// GemmWith is Gemm with an explicit packing workspace: with ws != nil it
// never touches the shared pool, so a goroutine that owns ws allocates
// nothing after its first call whatever the garbage collector does. A nil ws
// means the pool, as in Gemm.
func GemmWith[T Float](ws *GemmWorkspace, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	if cc, ok := any(c).([]float32); ok && useAsmKernel() {
		aa, bb := any(a).([]float32), any(b).([]float32)
		var w *sgemmWork
		if ws != nil {
			if ws.w == nil {
				ws.w = new(sgemmWork)
			}
			w = ws.w
		} else {
			w = sgemmPool.Get().(*sgemmWork)
			defer sgemmPool.Put(w)
		}
		sgemmPacked(w, asmKernel, asmKernel2, transA, transB, m, n, k, float32(alpha), aa, lda, bb, ldb, float32(beta), cc, ldc)
		return
	}
	tA, tB := blas.NoTrans, blas.NoTrans
	if transA {
		tA = blas.Trans
	}
	if transB {
		tB = blas.Trans
	}
	// Wide outputs go in 64×192 tiles, narrow ones in 192×64: measured on the
	// network shapes (e.g. 1344×382×191: 14.9 vs 9.9 GFLOP/s; 1344×32×95:
	// 8.5 vs 7.4), since gonum's kernels stream a full C row per axpy.
	tr, tc := tileRows, tileCols
	if n > 2*tileCols {
		tr, tc = tileCols, tileRows
	}
	for i := 0; i < m; i += tr {
		mi := min(tr, m-i)
		ao := i * lda
		if transA {
			ao = i
		}
		for j := 0; j < n; j += tc {
			nj := min(tc, n-j)
			bo := j
			if transB {
				bo = j * ldb
			}
			co := i*ldc + j
			switch cc := any(c).(type) {
			case []float32:
				aa, bb := any(a).([]float32), any(b).([]float32)
				blas32.Implementation().Sgemm(tA, tB, mi, nj, k, float32(alpha), aa[ao:], lda, bb[bo:], ldb, float32(beta), cc[co:], ldc)
			case []float64:
				aa, bb := any(a).([]float64), any(b).([]float64)
				blas64.Implementation().Dgemm(tA, tB, mi, nj, k, float64(alpha), aa[ao:], lda, bb[bo:], ldb, float64(beta), cc[co:], ldc)
			default:
				gemmRef(transA, transB, mi, nj, k, alpha, a[ao:], lda, b[bo:], ldb, beta, c[co:], ldc)
			}
		}
	}
}

// gemmRef is the plain triple loop, used for named float types other than
// float32/float64 and as the test oracle.
func gemmRef[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s T
			for p := 0; p < k; p++ {
				var av, bv T
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += av * bv
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * s
			} else {
				c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
			}
		}
	}
}
