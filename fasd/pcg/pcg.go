package pcg

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
)

// encLen is the length of rand.PCG's binary encoding: "pcg:", then the
// high and the low word of the state, big-endian.
const encLen = 4 + 8 + 8

// Load returns src's 128-bit state (high word, low word), read through its
// binary encoding. It allocates nothing.
func Load(src *rand.PCG) (hi, lo uint64) {
	var buf [encLen]byte
	b, err := src.AppendBinary(buf[:0])
	if err != nil || len(b) != encLen || string(b[:4]) != "pcg:" {
		panic("pcg: unexpected rand.PCG encoding")
	}
	return binary.BigEndian.Uint64(b[4:]), binary.BigEndian.Uint64(b[12:])
}

// Store sets src's state to (hi, lo), the inverse of Load.
func Store(src *rand.PCG, hi, lo uint64) {
	var b [encLen]byte
	copy(b[:], "pcg:")
	binary.BigEndian.PutUint64(b[4:], hi)
	binary.BigEndian.PutUint64(b[12:], lo)
	if err := src.UnmarshalBinary(b[:]); err != nil {
		panic("pcg: unexpected rand.PCG encoding: " + err.Error())
	}
}

// Next advances the state (hi, lo) by one step and returns the new state
// and that step's output: the 128-bit LCG state·mul + inc (mod 2^128),
// then the DXSM output function of the new state — rand.PCG's Uint64. It
// is small enough to inline.
func Next(hi, lo uint64) (nhi, nlo, out uint64) {
	const cheapMul = 0xda942042e4dd58b5
	h, l := bits.Mul64(lo, mulLo)
	h += hi*mulLo + lo*mulHi
	l, c := bits.Add64(l, incLo, 0)
	h, _ = bits.Add64(h, incHi, c)
	out = h
	out ^= out >> 32
	out *= cheapMul
	out ^= out >> 48
	out *= l | 1
	return h, l, out
}

// The LCG's multiplier and increment as (high, low) words.
const (
	mulHi, mulLo = 2549297995355413924, 4865540595714422341
	incHi, incLo = 6364136223846793005, 1442695040888963407
)

// Advance returns the state k steps after (hi, lo): what k calls of Next
// would return, in O(log k) 128-bit products (the LCG's jump-ahead: k
// steps of s·m + c are one affine map s·M + C, built by squaring). A loop
// over n draws can so be cut into pieces that start at known offsets and
// run in parallel, each drawing exactly what the sequential loop would.
func Advance(hi, lo, k uint64) (nhi, nlo uint64) {
	mh, ml, ch, cl := affine(k)
	nhi, nlo = mul128(hi, lo, mh, ml)
	return add128(nhi, nlo, ch, cl)
}

// affine returns the map of k steps, s ↦ s·M + C (mod 2^128), as M's and
// C's (high, low) words.
func affine(k uint64) (mhi, mlo, chi, clo uint64) {
	// (accM, accC) is the map of the steps taken so far, (m, c) that of
	// 2^i steps.
	accMh, accMl, accCh, accCl := uint64(0), uint64(1), uint64(0), uint64(0)
	mh, ml, ch, cl := uint64(mulHi), uint64(mulLo), uint64(incHi), uint64(incLo)
	for ; k > 0; k >>= 1 {
		if k&1 == 1 {
			accMh, accMl = mul128(accMh, accMl, mh, ml)
			accCh, accCl = mul128(accCh, accCl, mh, ml)
			accCh, accCl = add128(accCh, accCl, ch, cl)
		}
		// c ← (m + 1)·c, m ← m²: the map of twice as many steps.
		p1h, p1l := add128(mh, ml, 0, 1)
		ch, cl = mul128(p1h, p1l, ch, cl)
		mh, ml = mul128(mh, ml, mh, ml)
	}
	return accMh, accMl, accCh, accCl
}

// mul128 is (ah, al)·(bh, bl) mod 2^128.
func mul128(ah, al, bh, bl uint64) (hi, lo uint64) {
	hi, lo = bits.Mul64(al, bl)
	return hi + ah*bl + al*bh, lo
}

// add128 is (ah, al) + (bh, bl) mod 2^128.
func add128(ah, al, bh, bl uint64) (hi, lo uint64) {
	lo, c := bits.Add64(al, bl, 0)
	hi, _ = bits.Add64(ah, bh, c)
	return hi, lo
}
