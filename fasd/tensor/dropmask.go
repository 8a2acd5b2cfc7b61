package tensor

// DropMask applies inverted dropout from a block of random draws: where
// the low 53 bits of r[i] are below thr it sets m[i] = +0, elsewhere m[i]
// = keep, and o[i] = x[i]·m[i] (so a dropped −x, NaN or ±Inf gives what
// the product gives, not a bare +0). x, m and o have at least len(r)
// entries. On AVX-512 float32 runs sixteen entries at a time with the
// results of the loop bit for bit.
func DropMask[T Float](r []uint64, x, m, o []T, thr uint64, keep T) {
	x, m, o = x[:len(r)], m[:len(r)], o[:len(r)]
	n := 0
	if x32, ok := any(x).([]float32); ok && haveAsm512 {
		n = len(r) &^ 15
		if n > 0 {
			dropMask16(r[:n], x32[:n], any(m).([]float32)[:n], any(o).([]float32)[:n], thr, any(keep).(float32))
		}
	}
	// ks[1] when dropped: d − thr wraps to a number with its top bit set
	// exactly when d < thr (both below 2^54), so no branch to mispredict.
	ks := [2]T{keep, 0}
	for i := n; i < len(r); i++ {
		k := ks[(r[i]&(1<<53-1)-thr)>>63]
		m[i] = k
		o[i] = x[i] * k
	}
}
