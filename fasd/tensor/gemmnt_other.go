//go:build !amd64 || noasm

package tensor

func gemmNT32z(m, n, k int, a []float32, lda int, bt []float32, c []float32, ldc int, alpha float32) {
	panic("tensor: no assembly in this build")
}

func packNT32z(dst, b []float32, ldb, n, k int) { panic("tensor: no assembly in this build") }
