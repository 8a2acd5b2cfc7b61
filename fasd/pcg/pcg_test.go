package pcg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNext checks Next against rand.PCG.Uint64 on long streams from
// edge-case seeds, and Load and Store around it: the generator continues
// where the reference does.
func TestNext(t *testing.T) {
	for _, s := range [][2]uint64{{0, 0}, {1, 2}, {math.MaxUint64, math.MaxUint64}, {1 << 63, 1}, {12345, 1 << 63}} {
		src, ref := rand.NewPCG(s[0], s[1]), rand.NewPCG(s[0], s[1])
		for round := 0; round < 3; round++ {
			ref.Uint64() // src is used directly between rounds too
			src.Uint64()
			hi, lo := Load(src)
			var r uint64
			for i := 0; i < 50000; i++ {
				hi, lo, r = Next(hi, lo)
				if want := ref.Uint64(); r != want {
					t.Fatalf("seed %v round %d draw %d: %#x, want %#x", s, round, i, r, want)
				}
			}
			Store(src, hi, lo)
		}
		if got, want := src.Uint64(), ref.Uint64(); got != want {
			t.Errorf("seed %v: continues with %#x, want %#x", s, got, want)
		}
	}
}

func TestLoadStoreNoAlloc(t *testing.T) {
	src := rand.NewPCG(1, 2)
	if a := testing.AllocsPerRun(100, func() {
		hi, lo := Load(src)
		hi, lo, _ = Next(hi, lo)
		Store(src, hi, lo)
	}); a != 0 {
		t.Errorf("%v allocations", a)
	}
}

// BenchmarkDraw compares a loop of Next, Fill in blocks of 1,024 and
// src.Uint64 through rand.Rand.
func BenchmarkDraw(b *testing.B) {
	const n = 1 << 16
	b.Run("next", func(b *testing.B) {
		src := rand.NewPCG(1, 2)
		var sink uint64
		for b.Loop() {
			hi, lo := Load(src)
			var r uint64
			for range n {
				hi, lo, r = Next(hi, lo)
				sink += r
			}
			Store(src, hi, lo)
		}
		_ = sink
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/draw")
	})
	b.Run("fill", func(b *testing.B) {
		src := rand.NewPCG(1, 2)
		dst := make([]uint64, 1024)
		var sink uint64
		for b.Loop() {
			hi, lo := Load(src)
			for range n / len(dst) {
				hi, lo = Fill(hi, lo, dst)
				sink += dst[0]
			}
			Store(src, hi, lo)
		}
		_ = sink
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/draw")
	})
	b.Run("rand", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 2))
		var sink uint64
		for b.Loop() {
			for range n {
				sink += rng.Uint64()
			}
		}
		_ = sink
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/draw")
	})
}

// TestAdvance checks the jump-ahead against k steps of Next, for k from 0
// to 300 and some large k against a long walk, from edge-case states.
func TestAdvance(t *testing.T) {
	for _, s := range [][2]uint64{{0, 0}, {1, 2}, {math.MaxUint64, math.MaxUint64}, {1 << 63, 1}} {
		hi, lo := s[0], s[1]
		for k := uint64(0); k <= 300; k++ {
			if ah, al := Advance(s[0], s[1], k); ah != hi || al != lo {
				t.Fatalf("seed %v: Advance(%d) = (%#x, %#x), want (%#x, %#x)", s, k, ah, al, hi, lo)
			}
			hi, lo, _ = Next(hi, lo)
		}
		// 100,003 steps in one jump, and as jumps of 1,000 and 3.
		hi, lo = s[0], s[1]
		for range 100003 {
			hi, lo, _ = Next(hi, lo)
		}
		if ah, al := Advance(s[0], s[1], 100003); ah != hi || al != lo {
			t.Errorf("seed %v: Advance(100003) = (%#x, %#x), want (%#x, %#x)", s, ah, al, hi, lo)
		}
		ah, al := s[0], s[1]
		for range 100 {
			ah, al = Advance(ah, al, 1000)
		}
		if ah, al = Advance(ah, al, 3); ah != hi || al != lo {
			t.Errorf("seed %v: 100 jumps of 1000 and one of 3 = (%#x, %#x), want (%#x, %#x)", s, ah, al, hi, lo)
		}
	}
	// Jumps compose: 2^63 + 2^63 steps are 2^63 + 2^62 + 2^62.
	h1, l1 := Advance(5, 7, 1<<63)
	h1, l1 = Advance(h1, l1, 1<<63)
	h2, l2 := Advance(5, 7, 1<<63)
	h2, l2 = Advance(h2, l2, 1<<62)
	h2, l2 = Advance(h2, l2, 1<<62)
	if h1 != h2 || l1 != l2 {
		t.Errorf("2^63 + 2^63 steps (%#x, %#x) differ from 2^63 + 2·2^62 (%#x, %#x)", h1, l1, h2, l2)
	}
}

// TestFill checks Fill against a loop of Next: every output and the state
// after, for every length 0..300 and some long ones, from edge-case states.
func TestFill(t *testing.T) {
	for _, s := range [][2]uint64{{0, 0}, {1, 2}, {math.MaxUint64, math.MaxUint64}, {1 << 63, 1}, {0x0123456789abcdef, 0xfedcba9876543210}} {
		for _, n := range append(seq(301), 1000, 4097, 65543) {
			dst := make([]uint64, n)
			hi, lo := Fill(s[0], s[1], dst)
			wh, wl := s[0], s[1]
			for i := range n {
				var r uint64
				wh, wl, r = Next(wh, wl)
				if dst[i] != r {
					t.Fatalf("state %v, n %d: draw %d = %#x, want %#x", s, n, i, dst[i], r)
				}
			}
			if hi != wh || lo != wl {
				t.Fatalf("state %v, n %d: left (%#x, %#x), want (%#x, %#x)", s, n, hi, lo, wh, wl)
			}
		}
	}
	if !haveFill16 {
		t.Log("no AVX-512 here: Fill is the loop of Next")
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
