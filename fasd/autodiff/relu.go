package autodiff

import "math"

// ReLU without branches for float32: a ReLU's input signs are close to
// random, so the branches of max(v, 0) and of 1[y > 0] mispredicted about
// half the time. The results are those of the branching loops bit for bit,
// NaNs included.

// reluTo sets y[i] = max(x[i], 0); y may be x.
func reluTo[T Float](y, x []T) {
	if y32, ok := any(y).([]float32); ok {
		x32 := any(x).([]float32)[:len(y32)]
		for i, v := range x32 {
			y32[i] = relu32(v)
		}
		return
	}
	for i, v := range x[:len(y)] {
		y[i] = max(v, 0)
	}
}

// reluGradTo sets ga[i] = g[i] where y[i] > 0, else 0.
func reluGradTo[T Float](ga, g, y []T) {
	if ga32, ok := any(ga).([]float32); ok {
		g32, y32 := any(g).([]float32)[:len(ga32)], any(y).([]float32)[:len(ga32)]
		for i, v := range y32 {
			ga32[i] = math.Float32frombits(math.Float32bits(g32[i]) & positive32(v))
		}
		return
	}
	for i, v := range y[:len(ga)] {
		if v > 0 {
			ga[i] = g[i]
		} else {
			ga[i] = 0
		}
	}
}

// relu32 is max(v, 0): v's bits where its sign bit is clear or v is a NaN,
// else +0.
func relu32(v float32) float32 {
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
