package autodiff

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestReLUBranchFree compares the float32 ReLU and its gradient with the
// branching loops bit for bit, on special values and random bit patterns.
func TestReLUBranchFree(t *testing.T) {
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc00000), math.Float32frombits(0x7f800001)}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10000; i++ {
		vals = append(vals, math.Float32frombits(rng.Uint32()), float32(rng.NormFloat64()))
	}
	g := make([]float32, len(vals))
	for i := range g {
		g[i] = float32(rng.NormFloat64())
	}
	y := make([]float32, len(vals))
	reluTo(y, vals)
	ga := make([]float32, len(vals))
	reluGradTo(ga, g, vals)
	for i, v := range vals {
		want := max(v, 0)
		if math.Float32bits(y[i]) != math.Float32bits(want) && !(want != want && y[i] != y[i]) {
			t.Errorf("relu(%v = %#x) = %#x, want %#x", v, math.Float32bits(v), math.Float32bits(y[i]), math.Float32bits(want))
		}
		var wg float32
		if v > 0 {
			wg = g[i]
		}
		if math.Float32bits(ga[i]) != math.Float32bits(wg) {
			t.Errorf("relu'(%v = %#x)·%v = %v, want %v", v, math.Float32bits(v), g[i], ga[i], wg)
		}
	}
}

// TestDropThreshold checks that the integer threshold decides as
// rng.Float64() < p on the same draws.
func TestDropThreshold(t *testing.T) {
	for _, p := range []float64{0.1, 0.3, 0.5, 1.0 / 3, 0.999, 1e-9} {
		a, b := rand.New(rand.NewPCG(7, 8)), rand.New(rand.NewPCG(7, 8))
		thr := dropThreshold(p)
		for i := 0; i < 100000; i++ {
			if got, want := a.Uint64()&(1<<53-1) < thr, b.Float64() < p; got != want {
				t.Fatalf("p %v, draw %d: %v, Float64 says %v", p, i, got, want)
			}
		}
		// The boundary: x = ⌈p·2^53⌉ − 1 is dropped, x = ⌈p·2^53⌉ is not.
		if x := float64(thr-1) / (1 << 53); !(x < p) {
			t.Errorf("p %v: %v not below", p, x)
		}
		if x := float64(thr) / (1 << 53); x < p {
			t.Errorf("p %v: %v below", p, x)
		}
	}
}
