// Package pcg steps math/rand/v2's PCG generator on a state the caller
// holds in local variables, so that a loop drawing one number per entry
// (a dropout mask) keeps the state in registers instead of calling
// rand.Rand's Source interface once per entry. The draws are rand.PCG's
// own, bit for bit: [Load] reads a *rand.PCG's state, [Next] is its Uint64,
// [Store] writes the state back, and the generator continues exactly where
// the same number of src.Uint64 calls would have left it. [Advance] jumps
// the state k steps ahead in O(log k), so such a loop can be cut into
// pieces that run in parallel and still draw what the sequential loop
// draws.
//
//	hi, lo := pcg.Load(src)
//	for i := range dst {
//		var r uint64
//		hi, lo, r = pcg.Next(hi, lo)
//		dst[i] = r
//	}
//	pcg.Store(src, hi, lo)
//
// [Fill] writes a block of draws at once: on a CPU with AVX-512 (F and
// DQ) it steps sixteen states side by side, each sixteen steps apart,
// about five times as fast as a loop of Next (BenchmarkDraw), the same
// outputs bit for bit; elsewhere, and in a build with the noasm tag, it is
// that loop. [KeepMask] turns 64 draws into a word of dropout bits (eight
// compares on AVX-512).
package pcg
