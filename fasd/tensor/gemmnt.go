package tensor

// NTCols is the widest product GemmNT computes: the columns of C (the rows
// of B) fit in two 16-lane registers.
const NTCols = 32

// PackNT writes the first k columns of the n×k row-major matrix B (row
// stride ldb) transposed into dst as the k×NTCols panel GemmNT reads:
// dst[p·NTCols+j] = b[j·ldb+p] for j < n. Lanes n ≤ j < NTCols are left as
// they are: GemmNT never stores what they produce, so a caller that packs
// many matrices of one n clears the panel once. It panics unless n ≤ NTCols
// and dst and b hold what it reads and writes.
func PackNT[T Float](dst, b []T, ldb, n, k int) {
	if n < 0 || n > NTCols || k < 0 || len(dst) < k*NTCols || (n > 0 && k > 0 && len(b) < (n-1)*ldb+k) {
		panic("tensor: PackNT: shape out of range")
	}
	if d, ok := any(dst).([]float32); ok && haveAsm512 && n > 0 && k > 0 {
		packNT32z(d, any(b).([]float32), ldb, n, k)
		return
	}
	packNTGo(dst, b, ldb, n, k)
}

// packNTGo is PackNT without assembly.
func packNTGo[T Float](dst, b []T, ldb, n, k int) {
	for p := 0; p < k; p++ {
		row := dst[p*NTCols : (p+1)*NTCols]
		for j := 0; j < n; j++ {
			row[j] = b[j*ldb+p]
		}
	}
}

// HaveGemmNT reports whether GemmNT runs for T here (float32 on a CPU with
// AVX-512, assembly built in, ForceGonumGemm off), so that a caller can
// skip packing B for it.
func HaveGemmNT[T Float]() bool {
	var z T
	_, f32 := any(z).(float32)
	return f32 && haveAsm512 && useAsmKernel()
}

// GemmNT computes C = alpha·A·Bᵀ (beta 0: C is not read) for an m×k A (row
// stride lda) and a B of n ≤ NTCols rows packed by PackNT into bt, on the
// AVX-512 small-product kernel, and reports true; where that kernel cannot
// run (no AVX-512, the noasm build, after ForceGonumGemm(true), float64) it
// writes nothing and reports false, and the caller uses Gemm. Every element
// goes through what Gemm's assembly kernels do for it with beta 0 (an FMA
// chain over p from zero, then one multiply by alpha), so the two agree bit
// for bit. It is for the many tiny products of attention (21×21×8), where
// Gemm's blocking, packing and 6-row tiles cost more than the arithmetic.
// It panics unless 0 < k and n ≤ NTCols and the slices hold what it reads
// and writes.
func GemmNT[T Float](m, n, k int, alpha T, a []T, lda int, bt []T, c []T, ldc int) bool {
	if m <= 0 || n <= 0 {
		return true
	}
	if k <= 0 || n > NTCols || len(bt) < k*NTCols || len(a) < (m-1)*lda+k || len(c) < (m-1)*ldc+n {
		panic("tensor: GemmNT: shape out of range")
	}
	if !HaveGemmNT[T]() {
		return false
	}
	gemmNT32z(m, n, k, any(a).([]float32), lda, any(bt).([]float32), any(c).([]float32), ldc, float32(alpha))
	return true
}
