package tensor

import "math"

// ReLU without branches: a ReLU's input signs are close to random, so the
// branches of max(v, 0) and of 1[y > 0] mispredict about half the time.
// The float32 forms run eight lanes at a time in AVX2 where available; every
// form gives the branching loops' results bit for bit, NaNs included.

// ReLUTo sets dst[i] = max(src[i], 0); dst may be src (no other overlap).
func ReLUTo[T Float](dst, src []T) {
	src = src[:len(dst)]
	if d, ok := any(dst).([]float32); ok {
		s := any(src).([]float32)
		n := 0
		if haveElemAsm {
			n = len(d) &^ 7
			relu8(d[:n], s[:n])
		}
		for i := n; i < len(d); i++ {
			d[i] = ReLU32(s[i])
		}
		return
	}
	for i, v := range src {
		dst[i] = max(v, 0)
	}
}

// ReLUGradTo sets ga[i] = g[i] where y[i] > 0, else 0 (ga is not read).
// All three slices have the length of ga.
func ReLUGradTo[T Float](ga, g, y []T) {
	g, y = g[:len(ga)], y[:len(ga)]
	if a, ok := any(ga).([]float32); ok {
		g32, y32 := any(g).([]float32), any(y).([]float32)
		n := 0
		if haveElemAsm {
			n = len(a) &^ 7
			reluGradTo8(a[:n], g32[:n], y32[:n])
		}
		for i := n; i < len(a); i++ {
			a[i] = math.Float32frombits(math.Float32bits(g32[i]) & positive32(y32[i]))
		}
		return
	}
	for i, v := range y {
		if v > 0 {
			ga[i] = g[i]
		} else {
			ga[i] = 0
		}
	}
}

// ReLU32 is max(v, 0): v's bits where its sign bit is clear or v is a NaN,
// else +0.
func ReLU32(v float32) float32 {
	b := math.Float32bits(v)
	keep := uint32(^int32(b)>>31) | uint32(int32(0x7f800000-(b&0x7fffffff))>>31)
	return math.Float32frombits(b & keep)
}

// positive32 is all ones when v > 0 (bits in [1, 0x7f800000]: positive,
// +Inf included, no NaN), else 0.
func positive32(v float32) uint32 {
	d := int64(math.Float32bits(v)) - 1
	return uint32(((d - 0x7f800000) & ^d) >> 63)
}
