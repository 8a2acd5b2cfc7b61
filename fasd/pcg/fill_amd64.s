//go:build amd64 && !noasm

#include "textflag.h"

// OUT writes the eight outputs of the states (lo, hi) to off(DI): rand.PCG's
// DXSM function, as Next: out = hi ^ hi>>32; out *= cheapMul (Z6);
// out ^= out>>48; out *= lo|1. t and u are scratch.
#define OUT(lo, hi, t, u, off) \
	VPSRLQ    $32, hi, t \
	VPXORQ    hi, t, t \
	VPMULLQ   Z6, t, t \
	VPSRLQ    $48, t, u \
	VPXORQ    u, t, t \
	VPORQ     Z8, lo, u \
	VPMULLQ   u, t, t \
	VMOVDQU64 t, off(DI)

// STEP moves the states (lo, hi) by s ↦ s·M + C (mod 2^128). AVX-512 has no
// 64×64→128 multiply, so the high word of lo·M.lo is built from four
// 32×32→64 products (VPMULUDQ) of a = lo = a1·2^32 + a0 and b = M.lo =
// b1·2^32 + b0; hi·M.lo and lo·M.hi need only their low words (VPMULLQ).
// With mid = a0b0>>32 + low32(a0b1) + low32(a1b0) (< 3·2^32), the high
// word is a1b1 + a0b1>>32 + a1b0>>32 + mid>>32 plus the two low words, the
// low word low32(a0b0) | mid<<32; then C is added with the carry from the
// low words. a1 … mid are scratch; k is a mask register.
#define STEP(lo, hi, a1, p00, p01, p10, p11, x, y, mid, k) \
	VPSRLQ   $32, lo, a1 \
	VPMULUDQ Z2, lo, p00 \
	VPMULUDQ Z12, lo, p01 \
	VPMULUDQ Z2, a1, p10 \
	VPMULUDQ Z12, a1, p11 \
	VPMULLQ  Z3, lo, x \
	VPMULLQ  Z2, hi, y \
	VPSRLQ   $32, p00, mid \
	VPANDQ   Z7, p01, a1 \
	VPADDQ   a1, mid, mid \
	VPANDQ   Z7, p10, a1 \
	VPADDQ   a1, mid, mid \
	VPSRLQ   $32, p01, a1 \
	VPADDQ   a1, p11, p11 \
	VPSRLQ   $32, p10, a1 \
	VPADDQ   a1, p11, p11 \
	VPSRLQ   $32, mid, a1 \
	VPADDQ   a1, p11, p11 \
	VPADDQ   x, p11, p11 \
	VPADDQ   y, p11, p11 \
	VPANDQ   Z7, p00, p00 \
	VPSLLQ   $32, mid, a1 \
	VPORQ    a1, p00, p00 \
	VPADDQ   Z4, p00, lo \
	VPCMPUQ  $1, Z4, lo, k \
	VPADDQ   Z5, p11, hi \
	VPADDQ   Z8, hi, k, hi

// func fill16(st *[32]uint64, m *[5]uint64, dst []uint64)
//
// Sixteen generator states in two groups of eight lanes: Z0 and Z1 the low
// and high words of states 0–7, Z22 and Z23 those of states 8–15. A round
// writes their sixteen outputs and moves both groups by the map (two
// independent chains, so one's latency hides the other's).
TEXT ·fill16(SB), NOSPLIT, $0-40
	MOVQ st+0(FP), AX
	MOVQ m+8(FP), BX
	MOVQ dst_base+16(FP), DI
	MOVQ dst_len+24(FP), CX
	SHRQ $4, CX

	VMOVDQU64 (AX), Z0
	VMOVDQU64 64(AX), Z22
	VMOVDQU64 128(AX), Z1
	VMOVDQU64 192(AX), Z23
	VPBROADCASTQ (BX), Z2   // M.lo (VPMULUDQ reads its low half)
	VPBROADCASTQ 8(BX), Z12 // M.lo >> 32
	VPBROADCASTQ 16(BX), Z3 // M.hi
	VPBROADCASTQ 24(BX), Z4 // C.lo
	VPBROADCASTQ 32(BX), Z5 // C.hi
	MOVQ $0xda942042e4dd58b5, DX
	VPBROADCASTQ DX, Z6     // DXSM's multiplier
	MOVQ $0xffffffff, DX
	VPBROADCASTQ DX, Z7
	MOVQ $1, DX
	VPBROADCASTQ DX, Z8

loop:
	OUT(Z0, Z1, Z10, Z11, 0)
	OUT(Z22, Z23, Z24, Z25, 64)
	ADDQ $128, DI
	DECQ CX
	JZ   done
	STEP(Z0, Z1, Z13, Z14, Z15, Z16, Z17, Z20, Z21, Z18, K1)
	STEP(Z22, Z23, Z26, Z27, Z28, Z29, Z30, Z31, Z9, Z19, K2)
	JMP  loop

done:
	VMOVDQU64 Z0, (AX)
	VMOVDQU64 Z22, 64(AX)
	VMOVDQU64 Z1, 128(AX)
	VMOVDQU64 Z23, 192(AX)
	VZEROUPPER
	RET

// KEEP8 compares the eight draws at SI + OFF (low 53 bits: Z31 the mask)
// with t (Z30) and ors the eight bits "greater" into AX at bit SHIFT.
#define KEEP8(OFF, SHIFT) \
	VPANDQ  OFF(SI), Z31, Z0 \
	VPCMPUQ $6, Z30, Z0, K1 \
	KMOVW   K1, R8 \
	SHLQ    $SHIFT, R8 \
	ORQ     R8, AX

// func keep64(dst, draws []uint64, t uint64)
TEXT ·keep64(SB), NOSPLIT, $0-56
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	MOVQ         draws_base+24(FP), SI
	VPBROADCASTQ t+48(FP), Z30
	MOVQ         $0x1fffffffffffff, R8
	VPBROADCASTQ R8, Z31

kloop:
	XORQ AX, AX
	KEEP8(0, 0)
	KEEP8(64, 8)
	KEEP8(128, 16)
	KEEP8(192, 24)
	KEEP8(256, 32)
	KEEP8(320, 40)
	KEEP8(384, 48)
	KEEP8(448, 56)
	MOVQ AX, (DI)
	ADDQ $512, SI
	ADDQ $8, DI
	DECQ CX
	JNZ  kloop
	VZEROUPPER
	RET
