//go:build amd64 && !noasm

package tensor

// haveGCNRows reports whether the AVX-512 row kernels of ReLUDropDot2 and
// ReLUDropBack can run here.
var haveGCNRows = haveAsm512

// reluDropDot16 is ReLUDropDot2 on sixteen rows (gcnrows_amd64.s): p and hr
// hold 16·h floats, keep 16·(h+63)/64 words, c 2·h floats, h a multiple of
// 16. It writes the row sums to out: s0 of row k at out[k], s1 at
// out[16+k], v0 at out[32+k], v1 at out[48+k]. The rows are transposed
// sixteen columns at a time in registers, so that each lane sums one row's
// products in order of j.
//
//go:noescape
func reluDropDot16(p, hr []float32, keep []uint64, c []float32, scale float32, out *[64]float32)

// reluDropBack16 is ReLUDropBack for rows = len(dq)/2 ≥ 1 and h a multiple
// of 16 (gcnrows_amd64.s): sixteen columns at a time, rows in order.
//
//go:noescape
func reluDropBack16(hr, dq, c []float32, scale float32, dp, d0, d1, db []float32)
