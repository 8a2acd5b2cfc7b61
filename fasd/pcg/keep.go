package pcg

// KeepMask packs Bernoulli decisions into bits: bit b of dst[k] is set
// when the low 53 bits of draws[64k+b] exceed t, as the loop
//
//	dst[k] |= (t − draws[64k+b] mod 2^53) >> 63 << b
//
// sets them for t < 2^53. With t = ⌈p·2^53⌉ − 1 a bit is set exactly
// where rand.New(src).Float64() ≥ p would be for the same draw: an entry
// dropout keeps with probability 1 − p. len(draws) must be 64·len(dst).
// Where the CPU has AVX-512 it compares eight draws at a time.
func KeepMask(dst, draws []uint64, t uint64) {
	draws = draws[:64*len(dst)]
	if haveFill16 && len(dst) > 0 {
		keep64(dst, draws, t)
		return
	}
	for k := range dst {
		var w uint64
		for b, d := range draws[64*k : 64*k+64] {
			w |= (t - d&(1<<53-1)) >> 63 << b
		}
		dst[k] = w
	}
}
