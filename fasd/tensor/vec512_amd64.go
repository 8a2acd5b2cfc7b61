//go:build amd64 && !noasm

package tensor

// dropMask16 is DropMask on float32 for len(r) a positive multiple of 16
// (vec512_amd64.s).
//
//go:noescape
func dropMask16(r []uint64, x, m, o []float32, thr uint64, keep float32)

// add16 and colSum16 are AddTo and ColSumAcc on float32 for
// lengths (columns) that are positive multiples of 16 (vec512_amd64.s).
//
//go:noescape
func add16(dst, a, b []float32)

//go:noescape
func colSum16(dst, m []float32, rows int)

// fill16 is Fill on float32 for a positive multiple of 16 entries.
//
//go:noescape
func fill16(dst []float32, v float32)

// adam8 is AdamUpdate on float32 for a positive multiple of 8 entries
// (vec512_amd64.s); omb1 = 1−b1 and omb2 = 1−b2 rounded to float32.
//
//go:noescape
func adam8(th, g, m, v []float32, wd, b1, omb1, b2, omb2 float32, step, sqrtBC2, eps float64)
