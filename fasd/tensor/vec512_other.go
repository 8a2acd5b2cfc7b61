//go:build !amd64 || noasm

package tensor

func dropMask16(r []uint64, x, m, o []float32, thr uint64, keep float32) {
	panic("tensor: no assembly in this build")
}

func add16(dst, a, b []float32) { panic("tensor: no assembly in this build") }

func colSum16(dst, m []float32, rows int) { panic("tensor: no assembly in this build") }

func fill16(dst []float32, v float32) { panic("tensor: no assembly in this build") }

func adam8(th, g, m, v []float32, wd, b1, omb1, b2, omb2 float32, step, sqrtBC2, eps float64) {
	panic("tensor: no assembly in this build")
}
