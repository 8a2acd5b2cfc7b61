//go:build amd64 && !noasm

#include "textflag.h"

// The row kernels of ReLUDropDot2 and ReLUDropBack on AVX-512 (gcnrows.go
// states what they compute). Every product is rounded before it is added
// (VMULPS, then VADDPS) and every sum is taken in the order of the Go
// loops, so the results are theirs bit for bit.

// RROW loads the next row's sixteen pre-activations into V (AX: the row,
// R13: its keep word), applies ReLU (sign bit clear: VPCMPD against Z30 =
// 0), the dropout bits (the word shifted right by CL = j0 mod 64) and the
// scale Z31 with zero-masking (+0 where dropped, as the Go loop's +0·scale),
// and stores the result into hr (AX + R9).
#define RROW(V) \
	VMOVUPS  (AX), V \
	VPCMPD   $5, Z30, V, K1 \
	MOVQ     (R13), R8 \
	SHRQ     CX, R8 \
	KMOVW    R8, K2 \
	KANDW    K1, K2, K2 \
	VMULPS.Z Z31, V, K2, V \
	VMOVUPS  V, (AX)(R9*1) \
	ADDQ     R10, AX \
	ADDQ     R11, R13

// EROW loads the next row's sixteen pre-activations into V and applies
// ReLU alone.
#define EROW(V) \
	VMOVUPS   (AX), V \
	VPCMPD    $5, Z30, V, K1 \
	VMOVAPS.Z V, K1, V \
	ADDQ      R10, AX

// TRANSPOSE transposes the 16×16 tile of rows Z0..Z15 in place (Z(c)
// then holds column c, lane i row i), with Z16..Z31 as scratch: 32-bit
// and 64-bit interleaves within 128-bit lanes, then two rounds of 128-bit
// lane shuffles.
#define TRANSPOSE \
	VUNPCKLPS Z1, Z0, Z16 \
	VUNPCKHPS Z1, Z0, Z17 \
	VUNPCKLPS Z3, Z2, Z18 \
	VUNPCKHPS Z3, Z2, Z19 \
	VUNPCKLPS Z5, Z4, Z20 \
	VUNPCKHPS Z5, Z4, Z21 \
	VUNPCKLPS Z7, Z6, Z22 \
	VUNPCKHPS Z7, Z6, Z23 \
	VUNPCKLPS Z9, Z8, Z24 \
	VUNPCKHPS Z9, Z8, Z25 \
	VUNPCKLPS Z11, Z10, Z26 \
	VUNPCKHPS Z11, Z10, Z27 \
	VUNPCKLPS Z13, Z12, Z28 \
	VUNPCKHPS Z13, Z12, Z29 \
	VUNPCKLPS Z15, Z14, Z30 \
	VUNPCKHPS Z15, Z14, Z31 \
	VUNPCKLPD Z18, Z16, Z0 \
	VUNPCKHPD Z18, Z16, Z1 \
	VUNPCKLPD Z19, Z17, Z2 \
	VUNPCKHPD Z19, Z17, Z3 \
	VUNPCKLPD Z22, Z20, Z4 \
	VUNPCKHPD Z22, Z20, Z5 \
	VUNPCKLPD Z23, Z21, Z6 \
	VUNPCKHPD Z23, Z21, Z7 \
	VUNPCKLPD Z26, Z24, Z8 \
	VUNPCKHPD Z26, Z24, Z9 \
	VUNPCKLPD Z27, Z25, Z10 \
	VUNPCKHPD Z27, Z25, Z11 \
	VUNPCKLPD Z30, Z28, Z12 \
	VUNPCKHPD Z30, Z28, Z13 \
	VUNPCKLPD Z31, Z29, Z14 \
	VUNPCKHPD Z31, Z29, Z15 \
	VSHUFF32X4 $0x44, Z4, Z0, Z16 \
	VSHUFF32X4 $0xEE, Z4, Z0, Z17 \
	VSHUFF32X4 $0x44, Z12, Z8, Z18 \
	VSHUFF32X4 $0xEE, Z12, Z8, Z19 \
	VSHUFF32X4 $0x44, Z5, Z1, Z20 \
	VSHUFF32X4 $0xEE, Z5, Z1, Z21 \
	VSHUFF32X4 $0x44, Z13, Z9, Z22 \
	VSHUFF32X4 $0xEE, Z13, Z9, Z23 \
	VSHUFF32X4 $0x44, Z6, Z2, Z24 \
	VSHUFF32X4 $0xEE, Z6, Z2, Z25 \
	VSHUFF32X4 $0x44, Z14, Z10, Z26 \
	VSHUFF32X4 $0xEE, Z14, Z10, Z27 \
	VSHUFF32X4 $0x44, Z7, Z3, Z28 \
	VSHUFF32X4 $0xEE, Z7, Z3, Z29 \
	VSHUFF32X4 $0x44, Z15, Z11, Z30 \
	VSHUFF32X4 $0xEE, Z15, Z11, Z31 \
	VSHUFF32X4 $0x88, Z18, Z16, Z0 \
	VSHUFF32X4 $0xDD, Z18, Z16, Z4 \
	VSHUFF32X4 $0x88, Z19, Z17, Z8 \
	VSHUFF32X4 $0xDD, Z19, Z17, Z12 \
	VSHUFF32X4 $0x88, Z22, Z20, Z1 \
	VSHUFF32X4 $0xDD, Z22, Z20, Z5 \
	VSHUFF32X4 $0x88, Z23, Z21, Z9 \
	VSHUFF32X4 $0xDD, Z23, Z21, Z13 \
	VSHUFF32X4 $0x88, Z26, Z24, Z2 \
	VSHUFF32X4 $0xDD, Z26, Z24, Z6 \
	VSHUFF32X4 $0x88, Z27, Z25, Z10 \
	VSHUFF32X4 $0xDD, Z27, Z25, Z14 \
	VSHUFF32X4 $0x88, Z30, Z28, Z3 \
	VSHUFF32X4 $0xDD, Z30, Z28, Z7 \
	VSHUFF32X4 $0x88, Z31, Z29, Z11 \
	VSHUFF32X4 $0xDD, Z31, Z29, Z15

// ACC adds column V times c0_j (BX + OFF) to the sums Z16 and times c1_j
// (BX + R10 + OFF) to Z17, one lane per row.
#define ACC(V, OFF) \
	VMULPS.BCST OFF(BX), V, Z18 \
	VADDPS      Z18, Z16, Z16 \
	VMULPS.BCST OFF(BX)(R10*1), V, Z19 \
	VADDPS      Z19, Z17, Z17

#define ACC16 \
	ACC(Z0, 0) \
	ACC(Z1, 4) \
	ACC(Z2, 8) \
	ACC(Z3, 12) \
	ACC(Z4, 16) \
	ACC(Z5, 20) \
	ACC(Z6, 24) \
	ACC(Z7, 28) \
	ACC(Z8, 32) \
	ACC(Z9, 36) \
	ACC(Z10, 40) \
	ACC(Z11, 44) \
	ACC(Z12, 48) \
	ACC(Z13, 52) \
	ACC(Z14, 56) \
	ACC(Z15, 60)

// func reluDropDot16(p, hr []float32, keep []uint64, c []float32, scale float32, out *[64]float32)
TEXT ·reluDropDot16(SB), NOSPLIT, $0-112
	MOVQ    p_base+0(FP), SI
	MOVQ    hr_base+24(FP), R9
	SUBQ    SI, R9              // hr − p: a row of hr at the same offset
	MOVQ    keep_base+48(FP), DX
	MOVQ    keep_len+56(FP), R11
	SHLQ    $3, R11
	SHRQ    $4, R11              // bytes of keep per row
	MOVQ    c_base+72(FP), BX
	MOVQ    c_len+80(FP), R10
	SHLQ    $1, R10              // 4h: bytes per row
	MOVQ    out+104(FP), R12
	MOVQ    R10, DI
	SHRQ    $6, DI               // h/16 column blocks
	XORQ    CX, CX               // j0
	VPXORD  Z0, Z0, Z0
	VMOVUPS Z0, (R12)
	VMOVUPS Z0, 64(R12)
	VMOVUPS Z0, 128(R12)
	VMOVUPS Z0, 192(R12)

loop:
	// r: ReLU, dropout and scale, stored into hr; sums into out[0:32]
	VPXORD       Z30, Z30, Z30
	VBROADCASTSS scale+96(FP), Z31
	MOVQ         SI, AX
	MOVQ         CX, R13
	SHRQ         $6, R13
	LEAQ         (DX)(R13*8), R13
	RROW(Z0)
	RROW(Z1)
	RROW(Z2)
	RROW(Z3)
	RROW(Z4)
	RROW(Z5)
	RROW(Z6)
	RROW(Z7)
	RROW(Z8)
	RROW(Z9)
	RROW(Z10)
	RROW(Z11)
	RROW(Z12)
	RROW(Z13)
	RROW(Z14)
	RROW(Z15)
	TRANSPOSE
	VMOVUPS (R12), Z16
	VMOVUPS 64(R12), Z17
	ACC16
	VMOVUPS Z16, (R12)
	VMOVUPS Z17, 64(R12)

	// e: ReLU alone; sums into out[32:64]
	VPXORD Z30, Z30, Z30
	MOVQ   SI, AX
	EROW(Z0)
	EROW(Z1)
	EROW(Z2)
	EROW(Z3)
	EROW(Z4)
	EROW(Z5)
	EROW(Z6)
	EROW(Z7)
	EROW(Z8)
	EROW(Z9)
	EROW(Z10)
	EROW(Z11)
	EROW(Z12)
	EROW(Z13)
	EROW(Z14)
	EROW(Z15)
	TRANSPOSE
	VMOVUPS 128(R12), Z16
	VMOVUPS 192(R12), Z17
	ACC16
	VMOVUPS Z16, 128(R12)
	VMOVUPS Z17, 192(R12)

	ADDQ $64, SI
	ADDQ $64, BX
	ADDQ $16, CX
	DECQ DI
	JNZ  loop
	VZEROUPPER
	RET

// func reluDropBack16(hr, dq, c []float32, scale float32, dp, d0, d1, db []float32)
// Sixteen columns at a time: c0, c1 in Z0, Z1 and the sums d0, d1, db in
// Z2, Z3, Z4 while the rows pass in order.
TEXT ·reluDropBack16(SB), NOSPLIT, $0-176
	MOVQ         hr_base+0(FP), SI
	MOVQ         dp_base+80(FP), R12
	SUBQ         SI, R12         // dp − hr
	MOVQ         c_base+48(FP), BX
	MOVQ         c_len+56(FP), R10
	SHLQ         $1, R10         // 4h
	MOVQ         d0_base+104(FP), R8
	MOVQ         d1_base+128(FP), R9
	MOVQ         db_base+152(FP), R11
	MOVQ         R10, DI
	SHRQ         $6, DI          // h/16 column blocks
	VBROADCASTSS scale+72(FP), Z31

bcol:
	VMOVUPS (BX), Z0
	VMOVUPS (BX)(R10*1), Z1
	VMOVUPS (R8), Z2
	VMOVUPS (R9), Z3
	VMOVUPS (R11), Z4
	MOVQ    SI, AX
	MOVQ    dq_base+24(FP), DX
	MOVQ    dq_len+32(FP), CX
	SHRQ    $1, CX               // rows

brow:
	VMOVUPS      (AX), Z5
	VBROADCASTSS (DX), Z6
	VBROADCASTSS 4(DX), Z7
	VMULPS       Z6, Z5, Z8
	VADDPS       Z8, Z2, Z2
	VMULPS       Z7, Z5, Z9
	VADDPS       Z9, Z3, Z3
	VPTESTMD     Z5, Z5, K1
	VMULPS       Z0, Z6, Z10
	VMULPS       Z1, Z7, Z11
	VADDPS       Z11, Z10, Z10
	VMULPS.Z     Z31, Z10, K1, Z12
	VMOVUPS      Z12, (AX)(R12*1)
	VADDPS       Z12, Z4, Z4
	ADDQ         R10, AX
	ADDQ         $8, DX
	DECQ         CX
	JNZ          brow

	VMOVUPS Z2, (R8)
	VMOVUPS Z3, (R9)
	VMOVUPS Z4, (R11)
	ADDQ    $64, SI
	ADDQ    $64, BX
	ADDQ    $64, R8
	ADDQ    $64, R9
	ADDQ    $64, R11
	DECQ    DI
	JNZ     bcol
	VZEROUPPER
	RET
