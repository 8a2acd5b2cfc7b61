//go:build amd64 && !noasm

package pcg

import "golang.org/x/sys/cpu"

// haveFill16 reports whether fill16 can run here: AVX-512 F and DQ (VPMULLQ),
// with the OS saving the registers.
var haveFill16 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

// fill16 writes len(dst)/16 rounds of sixteen outputs (fill_amd64.s), in
// two groups of eight AVX-512 lanes: round r writes the outputs of the
// sixteen states of st (low words st[0:16], high words st[16:32]) to
// dst[16r:16r+16], then moves every state by the map m (step16's layout).
// It leaves in st the states of the last round, not moved. len(dst) is a
// multiple of 16, at least 16.
//
//go:noescape
func fill16(st *[32]uint64, m *[5]uint64, dst []uint64)

// keep64 is KeepMask on AVX-512 (fill_amd64.s): len(dst) ≥ 1 words from
// 64·len(dst) draws, eight compared at a time.
//
//go:noescape
func keep64(dst, draws []uint64, t uint64)
