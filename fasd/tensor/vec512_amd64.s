//go:build amd64 && !noasm

#include "textflag.h"

// Sixteen-lane float32 kernels on AVX-512F (vec512_amd64.go): each gives
// its Go loop's results bit for bit.

// func dropMask16(r []uint64, x, m, o []float32, thr uint64, keep float32)
// Sixteen entries at a time: two compares of eight draws' low 53 bits
// with thr (kept: not below), the two masks joined, m = keep where kept
// and +0 elsewhere, o = x·m.
TEXT ·dropMask16(SB), NOSPLIT, $0-108
	MOVQ         r_base+0(FP), SI
	MOVQ         r_len+8(FP), CX
	SHRQ         $4, CX
	MOVQ         x_base+24(FP), DX
	MOVQ         m_base+48(FP), DI
	MOVQ         o_base+72(FP), R8
	VPBROADCASTQ thr+96(FP), Z30
	VBROADCASTSS keep+104(FP), Z29
	MOVQ         $0x1fffffffffffff, R9
	VPBROADCASTQ R9, Z31

dloop:
	VPANDQ    (SI), Z31, Z0
	VPANDQ    64(SI), Z31, Z1
	VPCMPUQ   $5, Z30, Z0, K1
	VPCMPUQ   $5, Z30, Z1, K2
	KUNPCKBW  K1, K2, K3
	VMOVAPS.Z Z29, K3, Z2
	VMULPS    (DX), Z2, Z3
	VMOVUPS   Z2, (DI)
	VMOVUPS   Z3, (R8)
	ADDQ      $128, SI
	ADDQ      $64, DX
	ADDQ      $64, DI
	ADDQ      $64, R8
	DECQ      CX
	JNZ       dloop
	VZEROUPPER
	RET

// func add16(dst, a, b []float32)
TEXT ·add16(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	SHRQ $4, CX

aloop:
	VMOVUPS (SI), Z0
	VADDPS  (DX), Z0, Z1
	VMOVUPS Z1, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     aloop
	VZEROUPPER
	RET

// func colSum16(dst, m []float32, rows int)
// Sixteen columns at a time, held in Z0 while the rows pass in order.
TEXT ·colSum16(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), R10
	MOVQ m_base+24(FP), SI
	MOVQ R10, R9
	SHLQ $2, R9              // bytes per row
	SHRQ $4, R10             // column blocks

sblock:
	VMOVUPS (DI), Z0
	MOVQ    SI, AX
	MOVQ    rows+48(FP), CX

srow:
	VADDPS (AX), Z0, Z0
	ADDQ   R9, AX
	DECQ   CX
	JNZ    srow

	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	ADDQ    $64, SI
	DECQ    R10
	JNZ     sblock
	VZEROUPPER
	RET

// func fill16(dst []float32, v float32)
TEXT ·fill16(SB), NOSPLIT, $0-28
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	VBROADCASTSS v+24(FP), Z0
	SHRQ         $4, CX

floop:
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	DECQ    CX
	JNZ     floop
	VZEROUPPER
	RET

// func adam8(th, g, m, v []float32, wd, b1, omb1, b2, omb2 float32, step, sqrtBC2, eps float64)
// Eight entries at a time: the float32 lines on YMM registers, the float64
// line on ZMM (the eight entries widened, exactly).
TEXT ·adam8(SB), NOSPLIT, $0-144
	MOVQ         th_base+0(FP), DI
	MOVQ         th_len+8(FP), CX
	MOVQ         g_base+24(FP), SI
	MOVQ         m_base+48(FP), DX
	MOVQ         v_base+72(FP), R8
	VBROADCASTSS wd+96(FP), Y10
	VBROADCASTSS b1+100(FP), Y11
	VBROADCASTSS omb1+104(FP), Y12
	VBROADCASTSS b2+108(FP), Y13
	VBROADCASTSS omb2+112(FP), Y14
	VBROADCASTSD step+120(FP), Z20
	VBROADCASTSD sqrtBC2+128(FP), Z21
	VBROADCASTSD eps+136(FP), Z22
	SHRQ         $3, CX

adloop:
	VMOVUPS   (DI), Y0           // th
	VMOVUPS   (SI), Y1           // g
	VMOVUPS   (DX), Y2           // m
	VMOVUPS   (R8), Y3           // v
	VMULPS    Y0, Y10, Y4        // wd·th
	VADDPS    Y4, Y1, Y1         // gj = g + wd·th
	VMULPS    Y2, Y11, Y2        // b1·m
	VMULPS    Y1, Y12, Y5        // (1−b1)·gj
	VADDPS    Y5, Y2, Y2         // m
	VMULPS    Y3, Y13, Y3        // b2·v
	VMULPS    Y1, Y14, Y6        // (1−b2)·gj
	VMULPS    Y1, Y6, Y6         // ·gj
	VADDPS    Y6, Y3, Y3         // v
	VMOVUPS   Y2, (DX)
	VMOVUPS   Y3, (R8)
	VCVTPS2PD Y3, Z7
	VSQRTPD   Z7, Z7
	VDIVPD    Z21, Z7, Z7        // √v / sqrtBC2
	VADDPD    Z22, Z7, Z7        // + eps
	VCVTPS2PD Y2, Z8
	VMULPD    Z8, Z20, Z8        // step·m
	VDIVPD    Z7, Z8, Z8         // / den
	VCVTPD2PS Z8, Y8
	VSUBPS    Y8, Y0, Y0         // th − T(…)
	VMOVUPS   Y0, (DI)
	ADDQ      $32, DI
	ADDQ      $32, SI
	ADDQ      $32, DX
	ADDQ      $32, R8
	DECQ      CX
	JNZ       adloop
	VZEROUPPER
	RET
