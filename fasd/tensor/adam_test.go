package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdamUpdate checks AdamUpdate (eight lanes on AVX-512) against the
// plain loop over five steps, bit for bit, lengths around multiples of 8,
// a NaN and an infinity among the gradients.
func TestAdamUpdate(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 1, 7, 8, 9, 64, 100} {
		th, g := make([]float32, n), make([]float32, n)
		for i := range th {
			th[i] = float32(rng.NormFloat64())
		}
		m, v := make([]float32, n), make([]float32, n)
		wth, wm, wv := append([]float32(nil), th...), make([]float32, n), make([]float32, n)
		const wd, b1, b2, lr, eps = 1e-4, 0.9, 0.999, 1e-3, 1e-8
		for step := 1; step <= 5; step++ {
			for i := range g {
				g[i] = float32(rng.NormFloat64() * 0.1)
			}
			if n > 8 && step == 3 {
				g[3], g[5] = float32(math.NaN()), float32(math.Inf(-1))
			}
			bc1, bc2 := 1-math.Pow(b1, float64(step)), 1-math.Pow(b2, float64(step))
			AdamUpdate(th, g, m, v, float32(wd), float32(b1), float32(b2), lr/bc1, math.Sqrt(bc2), eps)
			for j := range wth {
				gj := g[j] + float32(float32(wd)*wth[j])
				wm[j] = float32(float32(b1)*wm[j]) + float32((1-float32(b1))*gj)
				wv[j] = float32(float32(b2)*wv[j]) + float32(float32((1-float32(b2))*gj)*gj)
				den := math.Sqrt(float64(wv[j]))/math.Sqrt(bc2) + eps
				wth[j] -= float32(lr / bc1 * float64(wm[j]) / den)
			}
			sameBits(t, "th", th, wth)
			sameBits(t, "m", m, wm)
			sameBits(t, "v", v, wv)
		}
	}
}
