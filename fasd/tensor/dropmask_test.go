package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDropMask checks DropMask (sixteen lanes on AVX-512) against the
// per-entry rule, with draws at and next to the threshold, negative zeros,
// NaNs and infinities among the inputs, and lengths around multiples of 16.
func TestDropMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, p := range []float64{0.1, 0.3, 0.5} {
		thr := uint64(math.Ceil(math.Ldexp(p, 53)))
		keep := float32(1 / (1 - p))
		for _, n := range []int{0, 1, 15, 16, 17, 33, 100, 1024} {
			r := make([]uint64, n)
			x := make([]float32, n)
			for i := range r {
				switch rng.IntN(4) {
				case 0:
					r[i] = thr | rng.Uint64()<<53
				case 1:
					r[i] = (thr-1)&(1<<53-1) | rng.Uint64()<<53
				default:
					r[i] = rng.Uint64()
				}
				switch rng.IntN(10) {
				case 0:
					x[i] = float32(math.Copysign(0, -1))
				case 1:
					x[i] = float32(math.NaN())
				case 2:
					x[i] = float32(math.Inf(-1))
				default:
					x[i] = float32(rng.NormFloat64())
				}
			}
			m, o := make([]float32, n), make([]float32, n)
			DropMask(r, x, m, o, thr, keep)
			for i := range r {
				wm := keep
				if r[i]&(1<<53-1) < thr {
					wm = 0
				}
				wo := x[i] * wm
				if math.Float32bits(m[i]) != math.Float32bits(wm) || math.Float32bits(o[i]) != math.Float32bits(wo) {
					t.Fatalf("p=%v n=%d i=%d: m, o = %v, %v; want %v, %v", p, n, i, m[i], o[i], wm, wo)
				}
			}
		}
	}
}
