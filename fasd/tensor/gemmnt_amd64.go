//go:build amd64 && !noasm

package tensor

// gemmNT32z is GemmNT's kernel (gemmnt_amd64.s): rows of C four at a time
// (eight FMA chains), the rest one by one, each row two 16-lane registers
// stored under a mask of n lanes. The caller guarantees the lengths.
//
//go:noescape
func gemmNT32z(m, n, k int, a []float32, lda int, bt []float32, c []float32, ldc int, alpha float32)

// packNT32z is PackNT on float32 for n, k > 0 (gemmnt_amd64.s): row by row
// of B, eight values at a time, each moved to its panel row (plain loads
// and stores: AVX-512 gathers cost twice as much here).
//
//go:noescape
func packNT32z(dst, b []float32, ldb, n, k int)
