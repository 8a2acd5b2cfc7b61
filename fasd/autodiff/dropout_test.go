package autodiff

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd/tensor"
)

// TestDropoutStream checks Dropout against the loop it replaces, one
// rand.New(src).Float64() < p per entry: the same mask and outputs bit for
// bit, and src left where that loop leaves its copy, for several sizes,
// probabilities and seeds, over consecutive calls on one tape.
func TestDropoutStream(t *testing.T) {
	for _, tc := range []struct {
		p      float64
		n      int
		s1, s2 uint64
	}{
		{0.3, 1, 0, 0}, {0.3, 7, 1, 2}, {0.1, 1000, 3, 4}, {0.5, 4096, math.MaxUint64, 5},
		{1.0 / 3, 333, 6, math.MaxUint64}, {0.999, 100, 8, 9}, {1e-9, 50, 10, 11},
	} {
		src, ref := rand.NewPCG(tc.s1, tc.s2), rand.New(rand.NewPCG(tc.s1, tc.s2))
		tp := NewTape[float32]()
		x := make([]float32, tc.n)
		for i := range x {
			x[i] = float32(i%17) - 8.5
		}
		keep := float32(1 / (1 - tc.p))
		for call := 0; call < 3; call++ {
			tp.Reset()
			in := tp.Input(tensor.FromSlice(x, tc.n), true)
			out := tp.Dropout(in, tc.p, src)
			for i, v := range x {
				m := keep
				if ref.Float64() < tc.p {
					m = 0
				}
				want := v * m // −0 for a dropped negative entry, as before
				if got := out.Value.Data[i]; math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("p %v n %d seed (%d, %d) call %d entry %d: %v, want %v", tc.p, tc.n, tc.s1, tc.s2, call, i, got, want)
				}
			}
		}
		if got, want := src.Uint64(), ref.Uint64(); got != want {
			t.Errorf("p %v n %d: the stream continues with %#x, want %#x", tc.p, tc.n, got, want)
		}
	}
}

// TestDropoutNoAlloc: reading and writing the generator's state allocates
// nothing once the tape is warm.
func TestDropoutNoAlloc(t *testing.T) {
	tp := NewTape[float32]()
	x := tensor.FromSlice(make([]float32, 256), 256)
	src := rand.NewPCG(1, 2)
	step := func() {
		tp.Reset()
		tp.Dropout(tp.Input(x, false), 0.3, src)
	}
	step()
	if a := testing.AllocsPerRun(100, step); a != 0 {
		t.Errorf("%v allocations per call", a)
	}
}

func BenchmarkDropout(b *testing.B) {
	tp := NewTape[float32]()
	x := tensor.FromSlice(make([]float32, 64*21*64), 64*21*64)
	src := rand.NewPCG(1, 2)
	for b.Loop() {
		tp.Reset()
		tp.Dropout(tp.Input(x, false), 0.3, src)
	}
	b.SetBytes(int64(4 * len(x.Data)))
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
