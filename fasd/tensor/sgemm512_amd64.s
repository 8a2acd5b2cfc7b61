//go:build amd64 && !noasm

#include "textflag.h"
#include "sgemm_amd64.h"

// ZSTEP is one k step of kern6x16z: one 16-wide load of the B panel row and
// six FMAs with A's column broadcast from memory (rows at SI, SI+ras,
// SI+2ras, BX, BX+ras, BX+2ras) into the 6×16 tile Z0..Z5 (row i in Z(i)).
// Every lane computes what kern6x16's KSTEP computes for it: the same FMA on
// the same operands, in the same order of k.
#define ZSTEP \
	VMOVUPS          (DI), Z12 \
	VFMADD231PS.BCST (SI), Z12, Z0 \
	VFMADD231PS.BCST (SI)(R13*1), Z12, Z1 \
	VFMADD231PS.BCST (SI)(R13*2), Z12, Z2 \
	VFMADD231PS.BCST (BX), Z12, Z3 \
	VFMADD231PS.BCST (BX)(R13*1), Z12, Z4 \
	VFMADD231PS.BCST (BX)(R13*2), Z12, Z5 \
	ADDQ             R11, SI \
	ADDQ             R11, BX \
	ADDQ             R9, DI

// ZSTEP8 is ZSTEP for tiles at most 8 columns wide: B's columns 8..15 are
// not read (the 8-wide load clears the upper lanes of Z12, so the upper
// lanes of the tile hold values no store uses).
#define ZSTEP8 \
	VMOVUPS          (DI), Y12 \
	VFMADD231PS.BCST (SI), Z12, Z0 \
	VFMADD231PS.BCST (SI)(R13*1), Z12, Z1 \
	VFMADD231PS.BCST (SI)(R13*2), Z12, Z2 \
	VFMADD231PS.BCST (BX), Z12, Z3 \
	VFMADD231PS.BCST (BX)(R13*1), Z12, Z4 \
	VFMADD231PS.BCST (BX)(R13*2), Z12, Z5 \
	ADDQ             R11, SI \
	ADDQ             R11, BX \
	ADDQ             R9, DI

// func kern6x16z(k int, a []float32, ras, cas int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32, mr, nr int)
//
// kern6x16 on AVX-512 registers: the same contract and, element by element,
// the same arithmetic (an FMA chain over p from zero, then alpha·acc, then
// one FMA with beta·C), so the results are bit-identical; a row of the tile
// is one register, which halves the FMA instructions. Partial tiles go
// through the same 384-byte stack scratch (row i at 64·i).
TEXT ·kern6x16z(SB), NOSPLIT, $384-136
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ ras+32(FP), R13
	SHLQ $2, R13
	MOVQ cas+40(FP), R11
	SHLQ $2, R11
	LEAQ (R13)(R13*2), BX
	ADDQ SI, BX
	MOVQ b_base+48(FP), DI
	MOVQ ldb+72(FP), R9
	SHLQ $2, R9
	MOVQ c_base+80(FP), DX
	MOVQ ldc+104(FP), R8
	SHLQ $2, R8

	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5

	MOVQ nr+128(FP), AX
	CMPQ AX, $8
	JLE  half

	CMPQ CX, $4
	JLT  tail

loop4:
	ZSTEP
	ZSTEP
	ZSTEP
	ZSTEP
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  loop4

tail:
	TESTQ CX, CX
	JZ    store

loop1:
	ZSTEP
	DECQ CX
	JNZ  loop1
	JMP  store

half:
	CMPQ CX, $4
	JLT  htail

hloop4:
	ZSTEP8
	ZSTEP8
	ZSTEP8
	ZSTEP8
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  hloop4

htail:
	TESTQ CX, CX
	JZ    store

hloop1:
	ZSTEP8
	DECQ CX
	JNZ  hloop1

store:
	VBROADCASTSS alpha+112(FP), Z14
	VMULPS       Z14, Z0, Z0
	VMULPS       Z14, Z1, Z1
	VMULPS       Z14, Z2, Z2
	VMULPS       Z14, Z3, Z3
	VMULPS       Z14, Z4, Z4
	VMULPS       Z14, Z5, Z5
	VBROADCASTSS beta+116(FP), Z15

	MOVQ mr+120(FP), AX
	MOVQ nr+128(FP), R10
	CMPQ AX, $6
	JNE  masked
	CMPQ R10, $16
	JNE  masked

	// Full tile. beta == ±0: overwrite C without reading it.
	MOVL beta+116(FP), R10
	ANDL $0x7fffffff, R10
	JZ   overwrite
	VFMADD231PS (DX), Z15, Z0
	VMOVUPS     Z0, (DX)
	ADDQ        R8, DX
	VFMADD231PS (DX), Z15, Z1
	VMOVUPS     Z1, (DX)
	ADDQ        R8, DX
	VFMADD231PS (DX), Z15, Z2
	VMOVUPS     Z2, (DX)
	ADDQ        R8, DX
	VFMADD231PS (DX), Z15, Z3
	VMOVUPS     Z3, (DX)
	ADDQ        R8, DX
	VFMADD231PS (DX), Z15, Z4
	VMOVUPS     Z4, (DX)
	ADDQ        R8, DX
	VFMADD231PS (DX), Z15, Z5
	VMOVUPS     Z5, (DX)
	VZEROUPPER
	RET

overwrite:
	VMOVUPS Z0, (DX)
	ADDQ    R8, DX
	VMOVUPS Z1, (DX)
	ADDQ    R8, DX
	VMOVUPS Z2, (DX)
	ADDQ    R8, DX
	VMOVUPS Z3, (DX)
	ADDQ    R8, DX
	VMOVUPS Z4, (DX)
	ADDQ    R8, DX
	VMOVUPS Z5, (DX)
	VZEROUPPER
	RET

masked:
	// Partial tile: spill it, then store row by row as kern6x16 does.
	VMOVUPS Z0, 0(SP)
	VMOVUPS Z1, 64(SP)
	VMOVUPS Z2, 128(SP)
	VMOVUPS Z3, 192(SP)
	VMOVUPS Z4, 256(SP)
	VMOVUPS Z5, 320(SP)
	LEAQ    0(SP), R12
	MOVL    beta+116(FP), R11
	ANDL    $0x7fffffff, R11

	STOREROWS

// WSTEP is one k step of kern6x32z: B's row in the two panels (Z12 from DI,
// Z13 from DI+R10), then for each of the six rows of A one broadcast and two
// FMAs, into Z0..Z5 (columns 0..15) and Z6..Z11 (columns 16..31). Each lane
// gets ZSTEP's FMA on the same operands in the same order of k.
#define WSTEP \
	VMOVUPS      (DI), Z12 \
	VMOVUPS      (DI)(R10*1), Z13 \
	VBROADCASTSS (SI), Z14 \
	VFMADD231PS  Z12, Z14, Z0 \
	VFMADD231PS  Z13, Z14, Z6 \
	VBROADCASTSS (SI)(R13*1), Z15 \
	VFMADD231PS  Z12, Z15, Z1 \
	VFMADD231PS  Z13, Z15, Z7 \
	VBROADCASTSS (SI)(R13*2), Z14 \
	VFMADD231PS  Z12, Z14, Z2 \
	VFMADD231PS  Z13, Z14, Z8 \
	VBROADCASTSS (BX), Z15 \
	VFMADD231PS  Z12, Z15, Z3 \
	VFMADD231PS  Z13, Z15, Z9 \
	VBROADCASTSS (BX)(R13*1), Z14 \
	VFMADD231PS  Z12, Z14, Z4 \
	VFMADD231PS  Z13, Z14, Z10 \
	VBROADCASTSS (BX)(R13*2), Z15 \
	VFMADD231PS  Z12, Z15, Z5 \
	VFMADD231PS  Z13, Z15, Z11 \
	ADDQ         R11, SI \
	ADDQ         R11, BX \
	ADDQ         R9, DI

// WROW stores a row of the pair tile (lo, hi) at DX and advances DX: with
// beta ≠ ±0 (R12 ≠ 0) each value first gets one FMA with beta·C, as in
// kern6x16z's stores. It counts the rows down in AX and ends the kernel
// after the last one.
#define WROW(lo, hi) \
	TESTL       R12, R12 \
	JZ          3(PC) \
	VFMADD231PS (DX), Z15, lo \
	VFMADD231PS 64(DX), Z15, hi \
	VMOVUPS     lo, (DX) \
	VMOVUPS     hi, 64(DX) \
	ADDQ        R8, DX \
	DECQ        AX \
	JZ          wdone

// func kern6x32z(k int, a []float32, ras, cas int, b []float32, boff, ldb int, c []float32, ldc int, alpha, beta float32, mr int)
//
// Two 16-column tiles side by side, C's columns 0..15 from the B panel at b
// and 16..31 from the one at b[boff:] (both ldb apart), rows 0..mr−1 of
// the six computed: what two calls of kern6x16z with nr = 16 compute, bit
// for bit, with twelve independent FMA chains instead of six, so that the
// FMA units' latency is hidden (six chains cover at most three quarters of
// it on two FMA pipes).
TEXT ·kern6x32z(SB), NOSPLIT, $0-136
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ ras+32(FP), R13
	SHLQ $2, R13
	MOVQ cas+40(FP), R11
	SHLQ $2, R11
	LEAQ (R13)(R13*2), BX
	ADDQ SI, BX
	MOVQ b_base+48(FP), DI
	MOVQ boff+72(FP), R10
	SHLQ $2, R10
	MOVQ ldb+80(FP), R9
	SHLQ $2, R9
	MOVQ c_base+88(FP), DX
	MOVQ ldc+112(FP), R8
	SHLQ $2, R8

	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11

	CMPQ CX, $4
	JLT  wtail

wloop4:
	WSTEP
	WSTEP
	WSTEP
	WSTEP
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  wloop4

wtail:
	TESTQ CX, CX
	JZ    wstore

wloop1:
	WSTEP
	DECQ CX
	JNZ  wloop1

wstore:
	VBROADCASTSS alpha+120(FP), Z14
	VMULPS       Z14, Z0, Z0
	VMULPS       Z14, Z1, Z1
	VMULPS       Z14, Z2, Z2
	VMULPS       Z14, Z3, Z3
	VMULPS       Z14, Z4, Z4
	VMULPS       Z14, Z5, Z5
	VMULPS       Z14, Z6, Z6
	VMULPS       Z14, Z7, Z7
	VMULPS       Z14, Z8, Z8
	VMULPS       Z14, Z9, Z9
	VMULPS       Z14, Z10, Z10
	VMULPS       Z14, Z11, Z11
	VBROADCASTSS beta+124(FP), Z15
	MOVL         beta+124(FP), R12
	ANDL         $0x7fffffff, R12
	MOVQ         mr+128(FP), AX
	WROW(Z0, Z6)
	WROW(Z1, Z7)
	WROW(Z2, Z8)
	WROW(Z3, Z9)
	WROW(Z4, Z10)
	WROW(Z5, Z11)

wdone:
	VZEROUPPER
	RET
