//go:build amd64 && !noasm

#include "textflag.h"
#include "sgemm_amd64.h"

// KSTEP is one k step: two 8-wide loads of the B panel row, six broadcasts of
// A's column (rows at SI, SI+ras, SI+2ras, BX, BX+ras, BX+2ras), twelve FMAs
// into the 6×16 accumulator tile Y0..Y11 (row i in Y(2i), Y(2i+1)).
#define KSTEP \
	VMOVUPS      (DI), Y12 \
	VMOVUPS      32(DI), Y13 \
	VBROADCASTSS (SI), Y14 \
	VBROADCASTSS (SI)(R13*1), Y15 \
	VFMADD231PS  Y12, Y14, Y0 \
	VFMADD231PS  Y13, Y14, Y1 \
	VFMADD231PS  Y12, Y15, Y2 \
	VFMADD231PS  Y13, Y15, Y3 \
	VBROADCASTSS (SI)(R13*2), Y14 \
	VBROADCASTSS (BX), Y15 \
	VFMADD231PS  Y12, Y14, Y4 \
	VFMADD231PS  Y13, Y14, Y5 \
	VFMADD231PS  Y12, Y15, Y6 \
	VFMADD231PS  Y13, Y15, Y7 \
	VBROADCASTSS (BX)(R13*1), Y14 \
	VBROADCASTSS (BX)(R13*2), Y15 \
	VFMADD231PS  Y12, Y14, Y8 \
	VFMADD231PS  Y13, Y14, Y9 \
	VFMADD231PS  Y12, Y15, Y10 \
	VFMADD231PS  Y13, Y15, Y11 \
	ADDQ         R11, SI \
	ADDQ         R11, BX \
	ADDQ         R9, DI

// KSTEP8 is KSTEP for tiles at most 8 columns wide: only the left
// accumulator of each row (Y0, Y2, …, Y10) is updated and B's columns 8..15
// are not read.
#define KSTEP8 \
	VMOVUPS      (DI), Y12 \
	VBROADCASTSS (SI), Y14 \
	VBROADCASTSS (SI)(R13*1), Y15 \
	VFMADD231PS  Y12, Y14, Y0 \
	VFMADD231PS  Y12, Y15, Y2 \
	VBROADCASTSS (SI)(R13*2), Y14 \
	VBROADCASTSS (BX), Y15 \
	VFMADD231PS  Y12, Y14, Y4 \
	VFMADD231PS  Y12, Y15, Y6 \
	VBROADCASTSS (BX)(R13*1), Y14 \
	VBROADCASTSS (BX)(R13*2), Y15 \
	VFMADD231PS  Y12, Y14, Y8 \
	VFMADD231PS  Y12, Y15, Y10 \
	ADDQ         R11, SI \
	ADDQ         R11, BX \
	ADDQ         R9, DI

// func kern6x16(k int, a []float32, ras, cas int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32, mr, nr int)
//
// C[i][j] = alpha·Σ_p A[i][p]·B[p][j] + beta·C[i][j] for i < mr, j < nr, with
// A[i][p] = a[i·ras + p·cas] (i < 6) and B[p][j] = b[p·ldb + j] (j < 16); C
// is not read when beta == 0 and never touched outside the mr×nr window.
// With nr ≤ 8, B is read only in columns 0..7. Partial tiles go through a
// 384-byte scratch on the stack (AMD's masked stores are slow).
TEXT ·kern6x16(SB), NOSPLIT, $384-136
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

	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

	MOVQ nr+128(FP), AX
	CMPQ AX, $8
	JLE  half

	CMPQ CX, $4
	JLT  tail

loop4:
	KSTEP
	KSTEP
	KSTEP
	KSTEP
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  loop4

tail:
	TESTQ CX, CX
	JZ    store

loop1:
	KSTEP
	DECQ CX
	JNZ  loop1
	JMP  store

half:
	// nr ≤ 8: half the FMAs; Y1, Y3, … stay zero and the store masks never
	// enable their columns.
	CMPQ CX, $4
	JLT  htail

hloop4:
	KSTEP8
	KSTEP8
	KSTEP8
	KSTEP8
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  hloop4

htail:
	TESTQ CX, CX
	JZ    store

hloop1:
	KSTEP8
	DECQ CX
	JNZ  hloop1

store:
	VBROADCASTSS alpha+112(FP), Y14
	VMULPS       Y14, Y0, Y0
	VMULPS       Y14, Y1, Y1
	VMULPS       Y14, Y2, Y2
	VMULPS       Y14, Y3, Y3
	VMULPS       Y14, Y4, Y4
	VMULPS       Y14, Y5, Y5
	VMULPS       Y14, Y6, Y6
	VMULPS       Y14, Y7, Y7
	VMULPS       Y14, Y8, Y8
	VMULPS       Y14, Y9, Y9
	VMULPS       Y14, Y10, Y10
	VMULPS       Y14, Y11, Y11
	VBROADCASTSS beta+116(FP), Y15

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
	VFMADD231PS  (DX), Y15, Y0
	VFMADD231PS  32(DX), Y15, Y1
	VMOVUPS      Y0, (DX)
	VMOVUPS      Y1, 32(DX)
	ADDQ         R8, DX
	VFMADD231PS  (DX), Y15, Y2
	VFMADD231PS  32(DX), Y15, Y3
	VMOVUPS      Y2, (DX)
	VMOVUPS      Y3, 32(DX)
	ADDQ         R8, DX
	VFMADD231PS  (DX), Y15, Y4
	VFMADD231PS  32(DX), Y15, Y5
	VMOVUPS      Y4, (DX)
	VMOVUPS      Y5, 32(DX)
	ADDQ         R8, DX
	VFMADD231PS  (DX), Y15, Y6
	VFMADD231PS  32(DX), Y15, Y7
	VMOVUPS      Y6, (DX)
	VMOVUPS      Y7, 32(DX)
	ADDQ         R8, DX
	VFMADD231PS  (DX), Y15, Y8
	VFMADD231PS  32(DX), Y15, Y9
	VMOVUPS      Y8, (DX)
	VMOVUPS      Y9, 32(DX)
	ADDQ         R8, DX
	VFMADD231PS  (DX), Y15, Y10
	VFMADD231PS  32(DX), Y15, Y11
	VMOVUPS      Y10, (DX)
	VMOVUPS      Y11, 32(DX)
	VZEROUPPER
	RET

overwrite:
	VMOVUPS      Y0, (DX)
	VMOVUPS      Y1, 32(DX)
	ADDQ         R8, DX
	VMOVUPS      Y2, (DX)
	VMOVUPS      Y3, 32(DX)
	ADDQ         R8, DX
	VMOVUPS      Y4, (DX)
	VMOVUPS      Y5, 32(DX)
	ADDQ         R8, DX
	VMOVUPS      Y6, (DX)
	VMOVUPS      Y7, 32(DX)
	ADDQ         R8, DX
	VMOVUPS      Y8, (DX)
	VMOVUPS      Y9, 32(DX)
	ADDQ         R8, DX
	VMOVUPS      Y10, (DX)
	VMOVUPS      Y11, 32(DX)
	VZEROUPPER
	RET

masked:
	// Partial tile: spill it, then store row by row, 8-wide chunks while
	// they fit in nr, one 4-wide chunk if it fits, the rest element by
	// element. AX counts the rows,
	// R10 = nr, R11 == 0 iff beta == ±0, R12 the scratch row, BX the column.
	VMOVUPS Y0, 0(SP)
	VMOVUPS Y1, 32(SP)
	VMOVUPS Y2, 64(SP)
	VMOVUPS Y3, 96(SP)
	VMOVUPS Y4, 128(SP)
	VMOVUPS Y5, 160(SP)
	VMOVUPS Y6, 192(SP)
	VMOVUPS Y7, 224(SP)
	VMOVUPS Y8, 256(SP)
	VMOVUPS Y9, 288(SP)
	VMOVUPS Y10, 320(SP)
	VMOVUPS Y11, 352(SP)
	LEAQ    0(SP), R12
	MOVL    beta+116(FP), R11
	ANDL    $0x7fffffff, R11

	STOREROWS
