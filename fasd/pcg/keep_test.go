package pcg

import (
	"math/rand/v2"
	"testing"
)

// TestKeepMask checks KeepMask (AVX-512 where the CPU has it) against the
// per-draw comparison, at thresholds from 0 to 2^53 − 1 and with draws
// whose low 53 bits equal the threshold, lie next to it, or differ from
// it only in the bits above 53.
func TestKeepMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, th := range []uint64{0, 1, 1 << 52, 3 << 51, 1<<53 - 2, 1<<53 - 1, rng.Uint64() >> 11} {
		for _, words := range []int{0, 1, 2, 5} {
			draws := make([]uint64, 64*words)
			for i := range draws {
				switch rng.IntN(4) {
				case 0:
					draws[i] = th | rng.Uint64()<<53 // equal below bit 53
				case 1:
					draws[i] = (th+1)&(1<<53-1) | rng.Uint64()<<53
				case 2:
					draws[i] = (th-1)&(1<<53-1) | rng.Uint64()<<53
				default:
					draws[i] = rng.Uint64()
				}
			}
			got := make([]uint64, words)
			for i := range got {
				got[i] = rng.Uint64() // overwritten, not or-ed into
			}
			KeepMask(got, draws, th)
			for k := range words {
				var want uint64
				for b := range 64 {
					if draws[64*k+b]&(1<<53-1) > th {
						want |= 1 << b
					}
				}
				if got[k] != want {
					t.Fatalf("t=%#x word %d: got %#x, want %#x", th, k, got[k], want)
				}
			}
		}
	}
}
