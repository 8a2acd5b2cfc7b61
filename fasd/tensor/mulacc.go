package tensor

// MulAcc adds x[i]·y[i] to a[i], the product rounded before the sum as the
// loop a[i] += x[i] * y[i] computes it (no fused multiply-add), bit for
// bit; float32 runs eight lanes at a time in AVX2 where available. x and y
// have at least len(a) elements and may alias each other, not a.
func MulAcc[T Float](a, x, y []T) {
	x, y = x[:len(a)], y[:len(a)]
	n := 0
	if a32, ok := any(a).([]float32); ok && haveElemAsm {
		n = len(a32) &^ 7
		mulAcc8(a32[:n], any(x).([]float32)[:n], any(y).([]float32)[:n])
	}
	for i := n; i < len(a); i++ {
		p := x[i] * y[i]
		a[i] += p
	}
}
