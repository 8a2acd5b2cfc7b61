package tensor

// Sums without fused or reordered operations: each is its loop's result bit
// for bit, and float32 runs sixteen lanes at a time on AVX-512.

// AddTo sets dst[i] = a[i] + b[i]; a and b have at least len(dst) entries
// (dst may be a or b).
func AddTo[T Float](dst, a, b []T) {
	a, b = a[:len(dst)], b[:len(dst)]
	n := 0
	if d32, ok := any(dst).([]float32); ok && haveAsm512 {
		n = len(dst) &^ 15
		if n > 0 {
			add16(d32[:n], any(a).([]float32)[:n], any(b).([]float32)[:n])
		}
	}
	for i := n; i < len(dst); i++ {
		dst[i] = a[i] + b[i]
	}
}

// Acc adds src[i] to dst[i]; src has at least len(dst) entries. It is
// AddTo(dst, dst, src): dst[i] + src[i] is what dst[i] += src[i] computes.
func Acc[T Float](dst, src []T) { AddTo(dst, dst, src) }

// ColSumAcc adds the rows of the rows×len(dst) row-major matrix m to dst,
// one row after the other: dst[j] += m[0][j], then m[1][j], and so on.
func ColSumAcc[T Float](dst, m []T, rows int) {
	cols := len(dst)
	m = m[:rows*cols]
	if d32, ok := any(dst).([]float32); ok && haveAsm512 && cols%16 == 0 && cols > 0 && rows > 0 {
		colSum16(d32, any(m).([]float32), rows)
		return
	}
	for r := range rows {
		for j, v := range m[r*cols : (r+1)*cols] {
			dst[j] += v
		}
	}
}

// Fill sets every entry of dst to v.
func Fill[T Float](dst []T, v T) {
	n := 0
	if d32, ok := any(dst).([]float32); ok && haveAsm512 {
		n = len(dst) &^ 15
		if n > 0 {
			fill16(d32[:n], any(v).(float32))
		}
	}
	for i := n; i < len(dst); i++ {
		dst[i] = v
	}
}
