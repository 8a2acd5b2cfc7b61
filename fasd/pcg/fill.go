package pcg

// Fill writes the next len(dst) outputs of the generator at state (hi, lo)
// to dst, in order — what len(dst) calls of [Next] return — and returns
// the state after them. Where the CPU has AVX-512 (F and DQ) it steps
// sixteen states at once, each sixteen steps apart (the generator's
// sixteen-step map, as [Advance] builds it), about five times as fast as a
// loop of Next, with the same outputs bit for bit.
func Fill(hi, lo uint64, dst []uint64) (nhi, nlo uint64) {
	start := 0
	if haveFill16 && len(dst) >= 32 {
		// Lane j holds the state that draw j is the output of; each
		// round writes sixteen draws and moves every lane sixteen steps.
		var st [32]uint64 // low words of the lanes, then their high words
		h, l := hi, lo
		for j := range 16 {
			h, l, _ = Next(h, l)
			st[j], st[16+j] = l, h
		}
		start = len(dst) &^ 15
		fill16(&st, &step16, dst[:start])
		// fill16 leaves the lanes of the last round it wrote: lane 15 is
		// the state after its last draw.
		hi, lo = st[31], st[15]
	}
	for i := start; i < len(dst); i++ {
		hi, lo, dst[i] = Next(hi, lo)
	}
	return hi, lo
}

// step16 is the sixteen-step map of the generator, s ↦ s·M + C (mod 2^128),
// as the words fill16 reads: M's low word, M's low word shifted right by
// 32, M's high word, C's low word, C's high word.
var step16 = func() [5]uint64 {
	mh, ml, ch, cl := affine(16)
	return [5]uint64{ml, ml >> 32, mh, cl, ch}
}()
