package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gcnRowsInput draws a rows×h block with random signs, some ±0, NaNs of
// either sign and subnormals, random dropout bits and two columns.
func gcnRowsInput(rng *rand.Rand, rows, h int) (p []float32, keep []uint64, c []float32) {
	p = make([]float32, rows*h)
	for i := range p {
		switch rng.IntN(40) {
		case 0:
			p[i] = float32(math.Copysign(0, float64(rng.IntN(2)*2-1)))
		case 1:
			p[i] = math.Float32frombits(0x7fc00001 | uint32(rng.IntN(2))<<31)
		case 2:
			p[i] = math.Float32frombits(uint32(rng.IntN(1<<20)) | uint32(rng.IntN(2))<<31)
		default:
			p[i] = float32(rng.NormFloat64())
		}
	}
	keep = make([]uint64, rows*((h+63)/64))
	for i := range keep {
		keep[i] = rng.Uint64()
	}
	c = make([]float32, 2*h)
	for i := range c {
		c[i] = float32(rng.NormFloat64())
	}
	return p, keep, c
}

// reluDropDotRef is ReLUDropDot2 written plainly, with branches.
func reluDropDotRef(p, hr []float32, keep []uint64, c []float32, scale float32, rows int, s, v []float32) {
	h := len(c) / 2
	wpr := (h + 63) / 64
	for i := range rows {
		var s0, s1, e0, e1 float32
		for j := range h {
			x := p[i*h+j]
			e := float32(0)
			if math.Float32bits(x)>>31 == 0 {
				e = x
			}
			r := float32(0)
			if keep[i*wpr+j/64]>>(j%64)&1 == 1 {
				r = e * scale
			}
			hr[i*h+j] = r
			s0 += float32(r * c[j])
			s1 += float32(r * c[h+j])
			e0 += float32(e * c[j])
			e1 += float32(e * c[h+j])
		}
		s[2*i], s[2*i+1], v[2*i], v[2*i+1] = s0, s1, e0, e1
	}
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s[%d] = %v (%#x), want %v (%#x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// TestReLUDropDot2 checks ReLUDropDot2 (the AVX-512 kernel where the CPU
// has it, and the Go loop for the rows it leaves) bit for bit against the
// plain loop, for block heights around multiples of sixteen and widths
// the kernel takes and does not take.
func TestReLUDropDot2(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, h := range []int{16, 32, 48, 64, 100, 128} {
		for _, rows := range []int{0, 1, 15, 16, 17, 31, 32, 33, 70} {
			p, keep, c := gcnRowsInput(rng, rows, h)
			for _, scale := range []float32{1, 1 / 0.7} {
				hr, s, v := make([]float32, rows*h), make([]float32, 2*rows), make([]float32, 2*rows)
				wr, ws, wv := make([]float32, rows*h), make([]float32, 2*rows), make([]float32, 2*rows)
				ReLUDropDot2(p, hr, keep, c, scale, rows, s, v)
				reluDropDotRef(p, wr, keep, c, scale, rows, ws, wv)
				sameBits(t, "hr", hr, wr)
				sameBits(t, "s", s, ws)
				sameBits(t, "v", v, wv)
			}
		}
	}
}

// reluDropBackRef is ReLUDropBack written plainly, with branches.
func reluDropBackRef(hr, dq, c []float32, scale float32, rows int, dp, d0, d1, db []float32) {
	h := len(c) / 2
	for i := range rows {
		for j := range h {
			x := hr[i*h+j]
			d0[j] += float32(x * dq[2*i])
			d1[j] += float32(x * dq[2*i+1])
			t := float32(0)
			if math.Float32bits(x) != 0 {
				t = float32(float32(float32(dq[2*i]*c[j])+float32(dq[2*i+1]*c[h+j])) * scale)
			}
			dp[i*h+j] = t
			db[j] += t
		}
	}
}

// TestReLUDropBack checks ReLUDropBack bit for bit against the plain loop
// on the rows ReLUDropDot2 writes (non-negative or +0), sums started from
// non-zero values.
func TestReLUDropBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, h := range []int{16, 48, 64, 100} {
		for _, rows := range []int{0, 1, 16, 17, 70} {
			p, keep, c := gcnRowsInput(rng, rows, h)
			hr := make([]float32, rows*h)
			ReLUDropDot2(p, hr, keep, c, 1/0.7, rows, make([]float32, 2*rows), make([]float32, 2*rows))
			dq := make([]float32, 2*rows)
			for i := range dq {
				dq[i] = float32(rng.NormFloat64())
			}
			sums := func() (a, b, d []float32) {
				a, b, d = make([]float32, h), make([]float32, h), make([]float32, h)
				for j := range h {
					a[j], b[j], d[j] = float32(j)/7, -float32(j)/3, float32(h-j)/5
				}
				return a, b, d
			}
			d0, d1, db := sums()
			w0, w1, wb := sums()
			dp, wp := make([]float32, rows*h), make([]float32, rows*h)
			ReLUDropBack(hr, dq, c, 1/0.7, rows, dp, d0, d1, db)
			reluDropBackRef(hr, dq, c, 1/0.7, rows, wp, w0, w1, wb)
			sameBits(t, "dp", dp, wp)
			sameBits(t, "d0", d0, w0)
			sameBits(t, "d1", d1, w1)
			sameBits(t, "db", db, wb)
		}
	}
}
