//go:build amd64 && !noasm

#include "textflag.h"

// masktab: 16 lanes of ones then 16 of zeros; the 16 lanes starting at
// masktab + 4·(16 − nr) enable exactly the first nr columns of a tile.
DATA masktab<>+0(SB)/4, $0xffffffff
DATA masktab<>+4(SB)/4, $0xffffffff
DATA masktab<>+8(SB)/4, $0xffffffff
DATA masktab<>+12(SB)/4, $0xffffffff
DATA masktab<>+16(SB)/4, $0xffffffff
DATA masktab<>+20(SB)/4, $0xffffffff
DATA masktab<>+24(SB)/4, $0xffffffff
DATA masktab<>+28(SB)/4, $0xffffffff
DATA masktab<>+32(SB)/4, $0xffffffff
DATA masktab<>+36(SB)/4, $0xffffffff
DATA masktab<>+40(SB)/4, $0xffffffff
DATA masktab<>+44(SB)/4, $0xffffffff
DATA masktab<>+48(SB)/4, $0xffffffff
DATA masktab<>+52(SB)/4, $0xffffffff
DATA masktab<>+56(SB)/4, $0xffffffff
DATA masktab<>+60(SB)/4, $0xffffffff
DATA masktab<>+64(SB)/4, $0
DATA masktab<>+68(SB)/4, $0
DATA masktab<>+72(SB)/4, $0
DATA masktab<>+76(SB)/4, $0
DATA masktab<>+80(SB)/4, $0
DATA masktab<>+84(SB)/4, $0
DATA masktab<>+88(SB)/4, $0
DATA masktab<>+92(SB)/4, $0
DATA masktab<>+96(SB)/4, $0
DATA masktab<>+100(SB)/4, $0
DATA masktab<>+104(SB)/4, $0
DATA masktab<>+108(SB)/4, $0
DATA masktab<>+112(SB)/4, $0
DATA masktab<>+116(SB)/4, $0
DATA masktab<>+120(SB)/4, $0
DATA masktab<>+124(SB)/4, $0
GLOBL masktab<>(SB), RODATA|NOPTR, $128

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

// func kern6x16(k int, a []float32, ras, cas int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32, mr, nr int)
//
// C[i][j] = alpha·Σ_p A[i][p]·B[p][j] + beta·C[i][j] for i < mr, j < nr, with
// A[i][p] = a[i·ras + p·cas] (i < 6) and B[p][j] = b[p·ldb + j] (j < 16); C
// is not read when beta == 0 and never touched outside the mr×nr window
// (masked loads and stores).
TEXT ·kern6x16(SB), NOSPLIT, $0-136
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
	// Column masks for nr < 16 (Y12: columns 0..7, Y13: 8..15); AX counts
	// the mr rows left to store.
	LEAQ    masktab<>(SB), R12
	NEGQ    R10
	ADDQ    $16, R10
	SHLQ    $2, R10
	ADDQ    R10, R12
	VMOVUPS (R12), Y12
	VMOVUPS 32(R12), Y13
	MOVL    beta+116(FP), R10
	ANDL    $0x7fffffff, R10
	JZ      moverwrite
	VMASKMOVPS   (DX), Y12, Y14
	VFMADD231PS  Y14, Y15, Y0
	VMASKMOVPS   32(DX), Y13, Y14
	VFMADD231PS  Y14, Y15, Y1
	VMASKMOVPS   Y0, Y12, (DX)
	VMASKMOVPS   Y1, Y13, 32(DX)
	ADDQ         R8, DX
	DECQ         AX
	JZ           done
	VMASKMOVPS   (DX), Y12, Y14
	VFMADD231PS  Y14, Y15, Y2
	VMASKMOVPS   32(DX), Y13, Y14
	VFMADD231PS  Y14, Y15, Y3
	VMASKMOVPS   Y2, Y12, (DX)
	VMASKMOVPS   Y3, Y13, 32(DX)
	ADDQ         R8, DX
	DECQ         AX
	JZ           done
	VMASKMOVPS   (DX), Y12, Y14
	VFMADD231PS  Y14, Y15, Y4
	VMASKMOVPS   32(DX), Y13, Y14
	VFMADD231PS  Y14, Y15, Y5
	VMASKMOVPS   Y4, Y12, (DX)
	VMASKMOVPS   Y5, Y13, 32(DX)
	ADDQ         R8, DX
	DECQ         AX
	JZ           done
	VMASKMOVPS   (DX), Y12, Y14
	VFMADD231PS  Y14, Y15, Y6
	VMASKMOVPS   32(DX), Y13, Y14
	VFMADD231PS  Y14, Y15, Y7
	VMASKMOVPS   Y6, Y12, (DX)
	VMASKMOVPS   Y7, Y13, 32(DX)
	ADDQ         R8, DX
	DECQ         AX
	JZ           done
	VMASKMOVPS   (DX), Y12, Y14
	VFMADD231PS  Y14, Y15, Y8
	VMASKMOVPS   32(DX), Y13, Y14
	VFMADD231PS  Y14, Y15, Y9
	VMASKMOVPS   Y8, Y12, (DX)
	VMASKMOVPS   Y9, Y13, 32(DX)
	ADDQ         R8, DX
	DECQ         AX
	JZ           done
	VMASKMOVPS   (DX), Y12, Y14
	VFMADD231PS  Y14, Y15, Y10
	VMASKMOVPS   32(DX), Y13, Y14
	VFMADD231PS  Y14, Y15, Y11
	VMASKMOVPS   Y10, Y12, (DX)
	VMASKMOVPS   Y11, Y13, 32(DX)
	JMP          done

moverwrite:
	VMASKMOVPS   Y0, Y12, (DX)
	VMASKMOVPS   Y1, Y13, 32(DX)
	ADDQ         R8, DX
	DECQ         AX
	JZ           done
	VMASKMOVPS   Y2, Y12, (DX)
	VMASKMOVPS   Y3, Y13, 32(DX)
	ADDQ         R8, DX
	DECQ         AX
	JZ           done
	VMASKMOVPS   Y4, Y12, (DX)
	VMASKMOVPS   Y5, Y13, 32(DX)
	ADDQ         R8, DX
	DECQ         AX
	JZ           done
	VMASKMOVPS   Y6, Y12, (DX)
	VMASKMOVPS   Y7, Y13, 32(DX)
	ADDQ         R8, DX
	DECQ         AX
	JZ           done
	VMASKMOVPS   Y8, Y12, (DX)
	VMASKMOVPS   Y9, Y13, 32(DX)
	ADDQ         R8, DX
	DECQ         AX
	JZ           done
	VMASKMOVPS   Y10, Y12, (DX)
	VMASKMOVPS   Y11, Y13, 32(DX)

done:
	VZEROUPPER
	RET
