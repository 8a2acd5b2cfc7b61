package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

func sumInput(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch rng.IntN(12) {
		case 0:
			x[i] = float32(math.Copysign(0, -1))
		case 1:
			x[i] = float32(math.NaN())
		case 2:
			x[i] = float32(math.Inf(1 - 2*rng.IntN(2)))
		default:
			x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(8)-4)))
		}
	}
	return x
}

// TestSums checks AddTo, Acc, ColSumAcc and Fill (sixteen lanes on AVX-512)
// bit for bit against their loops, lengths around multiples of 16.
func TestSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 15, 16, 17, 48, 64, 100} {
		a, b := sumInput(rng, n), sumInput(rng, n)
		got := make([]float32, n)
		AddTo(got, a, b)
		acc := append([]float32(nil), a...)
		Acc(acc, b)
		for i := range n {
			w := a[i] + b[i]
			if math.Float32bits(got[i]) != math.Float32bits(w) || math.Float32bits(acc[i]) != math.Float32bits(w) {
				t.Fatalf("n=%d i=%d: AddTo %v, Acc %v, want %v", n, i, got[i], acc[i], w)
			}
		}
		fill := sumInput(rng, n)
		Fill(fill, -2.5)
		for i, v := range fill {
			if v != -2.5 {
				t.Fatalf("n=%d: Fill left %v at %d", n, v, i)
			}
		}
		for _, rows := range []int{0, 1, 7, 21} {
			m := sumInput(rng, rows*n)
			dst := sumInput(rng, n)
			want := append([]float32(nil), dst...)
			ColSumAcc(dst, m, rows)
			for r := range rows {
				for j := range n {
					want[j] += m[r*n+j]
				}
			}
			sameBits(t, "ColSumAcc", dst, want)
		}
	}
}
