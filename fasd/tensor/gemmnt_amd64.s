//go:build amd64 && !noasm

#include "textflag.h"

// NTSTEP4 is one p step of four rows: the panel's row p (Z16, Z17: columns
// 0..15 and 16..31), then per row of A one broadcast and two FMAs into
// that row's pair of accumulators.
#define NTSTEP4 \
	VMOVUPS      (R12), Z16 \
	VMOVUPS      64(R12), Z17 \
	VBROADCASTSS (R10), Z18 \
	VFMADD231PS  Z16, Z18, Z0 \
	VFMADD231PS  Z17, Z18, Z1 \
	VBROADCASTSS (R10)(R13*1), Z19 \
	VFMADD231PS  Z16, Z19, Z2 \
	VFMADD231PS  Z17, Z19, Z3 \
	VBROADCASTSS (R10)(R13*2), Z20 \
	VFMADD231PS  Z16, Z20, Z4 \
	VFMADD231PS  Z17, Z20, Z5 \
	VBROADCASTSS (R11), Z21 \
	VFMADD231PS  Z16, Z21, Z6 \
	VFMADD231PS  Z17, Z21, Z7 \
	ADDQ         $4, R10 \
	ADDQ         $4, R11 \
	ADDQ         $128, R12

// NTROW multiplies a row's pair by alpha (Z31) and stores its n lanes (K1
// for columns 0..15, K2 for 16..31) at DX, then advances DX by ldc.
#define NTROW(lo, hi) \
	VMULPS  Z31, lo, lo \
	VMULPS  Z31, hi, hi \
	VMOVUPS lo, K1, (DX) \
	VMOVUPS hi, K2, 64(DX) \
	ADDQ    R8, DX

// func gemmNT32z(m, n, k int, a []float32, lda int, bt []float32, c []float32, ldc int, alpha float32)
TEXT ·gemmNT32z(SB), NOSPLIT, $0-116
	// Store masks: K1 = the low min(n, 16) lanes, K2 = the next n−16.
	MOVQ n+8(FP), CX
	CMPQ CX, $16
	JGE  wide
	MOVL $1, BX
	SHLL CX, BX
	DECL BX
	KMOVW BX, K1
	KXORW K2, K2, K2
	JMP  masked

wide:
	MOVL  $0xffff, BX
	KMOVW BX, K1
	SUBQ  $16, CX
	MOVL  $1, BX
	SHLL  CX, BX
	DECL  BX
	KMOVW BX, K2

masked:
	MOVQ         m+0(FP), AX
	MOVQ         k+16(FP), R9
	MOVQ         a_base+24(FP), SI
	MOVQ         lda+48(FP), R13
	SHLQ         $2, R13
	MOVQ         bt_base+56(FP), DI
	MOVQ         c_base+80(FP), DX
	MOVQ         ldc+104(FP), R8
	SHLQ         $2, R8
	VBROADCASTSS alpha+112(FP), Z31

rows4:
	CMPQ   AX, $4
	JLT    rows1
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ   SI, R10
	LEAQ   (R13)(R13*2), R11
	ADDQ   SI, R11
	MOVQ   DI, R12
	MOVQ   R9, CX

loop4:
	NTSTEP4
	DECQ CX
	JNZ  loop4

	NTROW(Z0, Z1)
	NTROW(Z2, Z3)
	NTROW(Z4, Z5)
	NTROW(Z6, Z7)
	LEAQ (SI)(R13*4), SI
	SUBQ $4, AX
	JMP  rows4

rows1:
	TESTQ AX, AX
	JZ    done

row1:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	MOVQ   SI, R10
	MOVQ   DI, R12
	MOVQ   R9, CX

loop1:
	VMOVUPS      (R12), Z16
	VMOVUPS      64(R12), Z17
	VBROADCASTSS (R10), Z18
	VFMADD231PS  Z16, Z18, Z0
	VFMADD231PS  Z17, Z18, Z1
	ADDQ         $4, R10
	ADDQ         $128, R12
	DECQ         CX
	JNZ          loop1

	NTROW(Z0, Z1)
	ADDQ R13, SI
	DECQ AX
	JNZ  row1

done:
	VZEROUPPER
	RET

// NTMOVE moves B's value at off·4 bytes into the panel, off rows down.
#define NTMOVE(off, r) \
	MOVL (off*4)(R10), r \
	MOVL r, (off*128)(R11)

// func packNT32z(dst, b []float32, ldb, n, k int)
TEXT ·packNT32z(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ b_base+24(FP), SI
	MOVQ ldb+48(FP), R8
	SHLQ $2, R8
	MOVQ n+56(FP), AX
	MOVQ k+64(FP), R9

prow:
	MOVQ SI, R10
	MOVQ DI, R11
	MOVQ R9, CX
	CMPQ CX, $8
	JLT  ptail

p8:
	NTMOVE(0, BX)
	NTMOVE(1, DX)
	NTMOVE(2, R12)
	NTMOVE(3, R13)
	NTMOVE(4, BX)
	NTMOVE(5, DX)
	NTMOVE(6, R12)
	NTMOVE(7, R13)
	ADDQ $32, R10
	ADDQ $1024, R11
	SUBQ $8, CX
	CMPQ CX, $8
	JGE  p8

ptail:
	TESTQ CX, CX
	JZ    pnext

p1:
	NTMOVE(0, BX)
	ADDQ $4, R10
	ADDQ $128, R11
	DECQ CX
	JNZ  p1

pnext:
	ADDQ R8, SI
	ADDQ $4, DI
	DECQ AX
	JNZ  prow
	RET
