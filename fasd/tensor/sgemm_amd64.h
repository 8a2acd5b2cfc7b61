// Shared by the GEMM micro-kernels of sgemm_amd64.s and sgemm512_amd64.s.

// STOREROWS stores a partial tile from the scratch at 0(SP) (row i at
// 64·i) into C row by row: 8-wide chunks while they fit in nr, one 4-wide
// chunk if it fits, the rest element by element; with beta ≠ ±0 each value
// is first FMA'd with beta·C. On entry AX = mr (rows), R10 = nr, R11 == 0
// iff beta == ±0, R12 = the scratch, DX = C, R8 = ldc in bytes and Y15 =
// beta broadcast; BX and R13 are clobbered. It ends with VZEROUPPER; RET.
#define STOREROWS \
mrow: \
	XORQ BX, BX \
mchunk: \
	LEAQ    8(BX), R13 \
	CMPQ    R13, R10 \
	JGT     mquad \
	VMOVUPS (R12)(BX*4), Y0 \
	TESTL   R11, R11 \
	JZ      mchunkst \
	VFMADD231PS (DX)(BX*4), Y15, Y0 \
mchunkst: \
	VMOVUPS Y0, (DX)(BX*4) \
	MOVQ    R13, BX \
	JMP     mchunk \
mquad: \
	LEAQ    4(BX), R13 \
	CMPQ    R13, R10 \
	JGT     mscalar \
	VMOVUPS (R12)(BX*4), X0 \
	TESTL   R11, R11 \
	JZ      mquadst \
	VFMADD231PS (DX)(BX*4), X15, X0 \
mquadst: \
	VMOVUPS X0, (DX)(BX*4) \
	MOVQ    R13, BX \
mscalar: \
	CMPQ   BX, R10 \
	JGE    mnext \
	VMOVSS (R12)(BX*4), X0 \
	TESTL  R11, R11 \
	JZ     mscalarst \
	VFMADD231SS (DX)(BX*4), X15, X0 \
mscalarst: \
	VMOVSS X0, (DX)(BX*4) \
	INCQ   BX \
	JMP    mscalar \
mnext: \
	ADDQ $64, R12 \
	ADDQ R8, DX \
	DECQ AX \
	JNZ  mrow \
	VZEROUPPER \
	RET
