package tensor

import "math"

// AdamUpdate is one Adam step (with L2 weight decay folded into the
// gradient) on the parameters th, their gradients g and the moment
// estimates m and v, all of one length:
//
//	gj = g + wd·th
//	m  = b1·m + (1−b1)·gj
//	v  = b2·v + (1−b2)·gj·gj
//	th = th − T(step·m / (√v / sqrtBC2 + eps))   (this line in float64)
//
// each operation rounded as written (no fused multiply-add). On AVX-512
// float32 runs eight entries at a time with the loop's results bit for bit.
func AdamUpdate[T Float](th, g, m, v []T, wd, b1, b2 T, step, sqrtBC2, eps float64) {
	g, m, v = g[:len(th)], m[:len(th)], v[:len(th)]
	n := 0
	if t32, ok := any(th).([]float32); ok && haveAsm512 {
		n = len(th) &^ 7
		if n > 0 {
			adam8(t32[:n], any(g).([]float32)[:n], any(m).([]float32)[:n], any(v).([]float32)[:n],
				any(wd).(float32), any(b1).(float32), any(1-b1).(float32), any(b2).(float32), any(1-b2).(float32),
				step, sqrtBC2, eps)
		}
	}
	for j := n; j < len(th); j++ {
		gj := g[j] + wd*th[j]
		m[j] = b1*m[j] + (1-b1)*gj
		v[j] = b2*v[j] + (1-b2)*gj*gj
		den := math.Sqrt(float64(v[j]))/sqrtBC2 + eps
		th[j] -= T(step * float64(m[j]) / den)
	}
}
