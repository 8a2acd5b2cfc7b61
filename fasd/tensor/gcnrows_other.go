//go:build !amd64 || noasm

package tensor

// haveGCNRows is false: no assembly in this build (a variable, so that the
// tests of the kernels compile here and skip).
var haveGCNRows = false

func reluDropDot16(p, hr []float32, keep []uint64, c []float32, scale float32, out *[64]float32) {
	panic("tensor: no assembly in this build")
}

func reluDropBack16(hr, dq, c []float32, scale float32, dp, d0, d1, db []float32) {
	panic("tensor: no assembly in this build")
}

func dropMask16(r []uint64, x, m, o []float32, thr uint64, keep float32) {
	panic("tensor: no assembly in this build")
}

func add16(dst, a, b []float32) { panic("tensor: no assembly in this build") }

func acc16(dst, src []float32) { panic("tensor: no assembly in this build") }

func colSum16(dst, m []float32, rows int) { panic("tensor: no assembly in this build") }

func fill16(dst []float32, v float32) { panic("tensor: no assembly in this build") }
