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
