//go:build !amd64 || noasm

package pcg

// haveFill16 is false: no assembly in this build.
const haveFill16 = false

func fill16(st *[32]uint64, m *[5]uint64, dst []uint64) { panic("pcg: no assembly in this build") }

func keep64(dst, draws []uint64, t uint64) { panic("pcg: no assembly in this build") }
