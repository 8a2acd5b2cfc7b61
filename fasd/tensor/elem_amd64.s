//go:build amd64 && !noasm

#include "textflag.h"

// Constants, each replicated over 32 bytes: float64 for the exp polynomial
// (e^r ≈ Σ_{i≤7} r^i/i!, |r| ≤ ln2/2, as exp64poly in math.go), the tanh
// series 1 − a²/3 + 2a⁴/15 − 17a⁶/315 below |x| = 0.1, and float32 masks.
DATA elemc<>+0(SB)/8, $0x3ff0000000000000 // one
DATA elemc<>+8(SB)/8, $0x3ff0000000000000 // one
DATA elemc<>+16(SB)/8, $0x3ff0000000000000 // one
DATA elemc<>+24(SB)/8, $0x3ff0000000000000 // one
DATA elemc<>+32(SB)/8, $0x3fe0000000000000 // half
DATA elemc<>+40(SB)/8, $0x3fe0000000000000 // half
DATA elemc<>+48(SB)/8, $0x3fe0000000000000 // half
DATA elemc<>+56(SB)/8, $0x3fe0000000000000 // half
DATA elemc<>+64(SB)/8, $0x3fc5555555555555 // c3
DATA elemc<>+72(SB)/8, $0x3fc5555555555555 // c3
DATA elemc<>+80(SB)/8, $0x3fc5555555555555 // c3
DATA elemc<>+88(SB)/8, $0x3fc5555555555555 // c3
DATA elemc<>+96(SB)/8, $0x3fa5555555555555 // c4
DATA elemc<>+104(SB)/8, $0x3fa5555555555555 // c4
DATA elemc<>+112(SB)/8, $0x3fa5555555555555 // c4
DATA elemc<>+120(SB)/8, $0x3fa5555555555555 // c4
DATA elemc<>+128(SB)/8, $0x3f81111111111111 // c5
DATA elemc<>+136(SB)/8, $0x3f81111111111111 // c5
DATA elemc<>+144(SB)/8, $0x3f81111111111111 // c5
DATA elemc<>+152(SB)/8, $0x3f81111111111111 // c5
DATA elemc<>+160(SB)/8, $0x3f56c16c16c16c17 // c6
DATA elemc<>+168(SB)/8, $0x3f56c16c16c16c17 // c6
DATA elemc<>+176(SB)/8, $0x3f56c16c16c16c17 // c6
DATA elemc<>+184(SB)/8, $0x3f56c16c16c16c17 // c6
DATA elemc<>+192(SB)/8, $0x3f2a01a01a01a01a // c7
DATA elemc<>+200(SB)/8, $0x3f2a01a01a01a01a // c7
DATA elemc<>+208(SB)/8, $0x3f2a01a01a01a01a // c7
DATA elemc<>+216(SB)/8, $0x3f2a01a01a01a01a // c7
DATA elemc<>+224(SB)/8, $0x3ff71547652b82fe // log2e
DATA elemc<>+232(SB)/8, $0x3ff71547652b82fe // log2e
DATA elemc<>+240(SB)/8, $0x3ff71547652b82fe // log2e
DATA elemc<>+248(SB)/8, $0x3ff71547652b82fe // log2e
DATA elemc<>+256(SB)/8, $0x3fe62e42fefa39ef // ln2
DATA elemc<>+264(SB)/8, $0x3fe62e42fefa39ef // ln2
DATA elemc<>+272(SB)/8, $0x3fe62e42fefa39ef // ln2
DATA elemc<>+280(SB)/8, $0x3fe62e42fefa39ef // ln2
DATA elemc<>+288(SB)/8, $0x4024000000000000 // ten
DATA elemc<>+296(SB)/8, $0x4024000000000000 // ten
DATA elemc<>+304(SB)/8, $0x4024000000000000 // ten
DATA elemc<>+312(SB)/8, $0x4024000000000000 // ten
DATA elemc<>+320(SB)/8, $0x3fb999999999999a // thr
DATA elemc<>+328(SB)/8, $0x3fb999999999999a // thr
DATA elemc<>+336(SB)/8, $0x3fb999999999999a // thr
DATA elemc<>+344(SB)/8, $0x3fb999999999999a // thr
DATA elemc<>+352(SB)/8, $0xbfd5555555555555 // s1
DATA elemc<>+360(SB)/8, $0xbfd5555555555555 // s1
DATA elemc<>+368(SB)/8, $0xbfd5555555555555 // s1
DATA elemc<>+376(SB)/8, $0xbfd5555555555555 // s1
DATA elemc<>+384(SB)/8, $0x3fc1111111111111 // s2
DATA elemc<>+392(SB)/8, $0x3fc1111111111111 // s2
DATA elemc<>+400(SB)/8, $0x3fc1111111111111 // s2
DATA elemc<>+408(SB)/8, $0x3fc1111111111111 // s2
DATA elemc<>+416(SB)/8, $0xbfaba1ba1ba1ba1c // s3
DATA elemc<>+424(SB)/8, $0xbfaba1ba1ba1ba1c // s3
DATA elemc<>+432(SB)/8, $0xbfaba1ba1ba1ba1c // s3
DATA elemc<>+440(SB)/8, $0xbfaba1ba1ba1ba1c // s3
DATA elemc<>+448(SB)/8, $0xc059000000000000 // lo
DATA elemc<>+456(SB)/8, $0xc059000000000000 // lo
DATA elemc<>+464(SB)/8, $0xc059000000000000 // lo
DATA elemc<>+472(SB)/8, $0xc059000000000000 // lo
DATA elemc<>+480(SB)/8, $0x3ff // bias
DATA elemc<>+488(SB)/8, $0x3ff // bias
DATA elemc<>+496(SB)/8, $0x3ff // bias
DATA elemc<>+504(SB)/8, $0x3ff // bias
DATA elemc<>+512(SB)/4, $0x80000000 // float32 sign
DATA elemc<>+516(SB)/4, $0x80000000 // float32 sign
DATA elemc<>+520(SB)/4, $0x80000000 // float32 sign
DATA elemc<>+524(SB)/4, $0x80000000 // float32 sign
DATA elemc<>+528(SB)/4, $0x80000000 // float32 sign
DATA elemc<>+532(SB)/4, $0x80000000 // float32 sign
DATA elemc<>+536(SB)/4, $0x80000000 // float32 sign
DATA elemc<>+540(SB)/4, $0x80000000 // float32 sign
DATA elemc<>+544(SB)/4, $0x7fffffff // float32 |x|
DATA elemc<>+548(SB)/4, $0x7fffffff // float32 |x|
DATA elemc<>+552(SB)/4, $0x7fffffff // float32 |x|
DATA elemc<>+556(SB)/4, $0x7fffffff // float32 |x|
DATA elemc<>+560(SB)/4, $0x7fffffff // float32 |x|
DATA elemc<>+564(SB)/4, $0x7fffffff // float32 |x|
DATA elemc<>+568(SB)/4, $0x7fffffff // float32 |x|
DATA elemc<>+572(SB)/4, $0x7fffffff // float32 |x|
GLOBL elemc<>(SB), RODATA|NOPTR, $576

// EXPPD sets OUT = e^X for float64 lanes with |X| ≤ 100 (X is clobbered):
// X = N·ln2 + r with N = round(X·log2e), e^r by Horner, 2^N through the
// exponent bits. N, T are scratch.
#define EXPPD(X, N, T, TX, OUT) \
	VMULPD       elemc<>+224(SB), X, N \
	VROUNDPD     $0, N, N \
	VFNMADD231PD elemc<>+256(SB), N, X \
	VMOVUPD      elemc<>+192(SB), OUT \
	VFMADD213PD  elemc<>+160(SB), X, OUT \
	VFMADD213PD  elemc<>+128(SB), X, OUT \
	VFMADD213PD  elemc<>+96(SB), X, OUT \
	VFMADD213PD  elemc<>+64(SB), X, OUT \
	VFMADD213PD  elemc<>+32(SB), X, OUT \
	VFMADD213PD  elemc<>+0(SB), X, OUT \
	VFMADD213PD  elemc<>+0(SB), X, OUT \
	VCVTPD2DQY   N, TX \
	VPMOVSXDQ    TX, T \
	VPADDQ       elemc<>+480(SB), T, T \
	VPSLLQ       $52, T, T \
	VMULPD       T, OUT, OUT

// func tanh4(dst, src []float32)
// Processes len(dst)/4 groups of four: dst = tanh(src), evaluated in float64.
TEXT ·tanh4(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	SHRQ $2, CX
	JZ   tdone

tloop:
	VMOVUPS    (SI), X0
	VANDPS     elemc<>+512(SB), X0, X1
	VANDPS     elemc<>+544(SB), X0, X2
	VCVTPS2PD  X2, Y2
	VMINPD     elemc<>+288(SB), Y2, Y2
	VADDPD     Y2, Y2, Y3
	EXPPD(Y3, Y4, Y5, X5, Y6)
	VSUBPD     elemc<>+0(SB), Y6, Y7
	VADDPD     elemc<>+0(SB), Y6, Y8
	VDIVPD     Y8, Y7, Y7
	VMULPD     Y2, Y2, Y9
	VMOVUPD    elemc<>+416(SB), Y10
	VFMADD213PD elemc<>+384(SB), Y9, Y10
	VFMADD213PD elemc<>+352(SB), Y9, Y10
	VFMADD213PD elemc<>+0(SB), Y9, Y10
	VMULPD     Y2, Y10, Y10
	VCMPPD     $1, elemc<>+320(SB), Y2, Y11
	VBLENDVPD  Y11, Y10, Y7, Y7
	VCVTPD2PSY Y7, X7
	VORPS      X1, X7, X7
	VCMPPS     $3, X0, X0, X12
	VBLENDVPS  X12, X0, X7, X7
	VMOVUPS    X7, (DI)
	ADDQ       $16, SI
	ADDQ       $16, DI
	DECQ       CX
	JNZ        tloop

tdone:
	VZEROUPPER
	RET

// func elu4(dst, src []float32)
// Processes len(dst)/4 groups of four: dst = src if src > 0 (or NaN), else
// e^src − 1 evaluated in float64.
TEXT ·elu4(SB), NOSPLIT, $0-48
	MOVQ   dst_base+0(FP), DI
	MOVQ   dst_len+8(FP), CX
	MOVQ   src_base+24(FP), SI
	SHRQ   $2, CX
	JZ     edone
	VXORPD Y13, Y13, Y13

eloop:
	VMOVUPS    (SI), X0
	VCVTPS2PD  X0, Y2
	VMINPD     Y13, Y2, Y2
	VMAXPD     elemc<>+448(SB), Y2, Y2
	EXPPD(Y2, Y4, Y5, X5, Y6)
	VSUBPD     elemc<>+0(SB), Y6, Y6
	VCVTPD2PSY Y6, X6
	VCMPPS     $6, X13, X0, X7
	VBLENDVPS  X7, X0, X6, X6
	VMOVUPS    X6, (DI)
	ADDQ       $16, SI
	ADDQ       $16, DI
	DECQ       CX
	JNZ        eloop

edone:
	VZEROUPPER
	RET

// func eluGradAcc8(ga, g, y []float32)
// For the first len(ga)/8·8 elements: ga += g·(1 if y > 0 else y + 1), the
// ELU derivative written with the output y.
TEXT ·eluGradAcc8(SB), NOSPLIT, $0-72
	MOVQ         ga_base+0(FP), DI
	MOVQ         ga_len+8(FP), CX
	MOVQ         g_base+24(FP), SI
	MOVQ         y_base+48(FP), DX
	SHRQ         $3, CX
	JZ           egdone
	VXORPS       Y13, Y13, Y13
	MOVL         $0x3f800000, AX
	MOVL         AX, X14
	VBROADCASTSS X14, Y14

egloop:
	VMOVUPS     (DX), Y0
	VADDPS      Y14, Y0, Y1
	VCMPPS      $14, Y13, Y0, Y2
	VBLENDVPS   Y2, Y14, Y1, Y1
	VMOVUPS     (DI), Y3
	VFMADD231PS (SI), Y1, Y3
	VMOVUPS     Y3, (DI)
	ADDQ        $32, DI
	ADDQ        $32, SI
	ADDQ        $32, DX
	DECQ        CX
	JNZ         egloop

egdone:
	VZEROUPPER
	RET

// func tanhGradAcc8(ga, g, y []float32)
// For the first len(ga)/8·8 elements: ga += g·(1 − y²), the tanh derivative
// written with the output y.
TEXT ·tanhGradAcc8(SB), NOSPLIT, $0-72
	MOVQ         ga_base+0(FP), DI
	MOVQ         ga_len+8(FP), CX
	MOVQ         g_base+24(FP), SI
	MOVQ         y_base+48(FP), DX
	SHRQ         $3, CX
	JZ           tgdone
	MOVL         $0x3f800000, AX
	MOVL         AX, X14
	VBROADCASTSS X14, Y14

tgloop:
	VMOVUPS      (DX), Y0
	VMOVAPS      Y14, Y1
	VFNMADD231PS Y0, Y0, Y1
	VMOVUPS      (DI), Y3
	VFMADD231PS  (SI), Y1, Y3
	VMOVUPS      Y3, (DI)
	ADDQ         $32, DI
	ADDQ         $32, SI
	ADDQ         $32, DX
	DECQ         CX
	JNZ          tgloop

tgdone:
	VZEROUPPER
	RET

// func eluGradTo8(ga, g, y []float32)
// For the first len(ga)/8·8 elements: ga = g·(1 if y > 0 else y + 1) (ga is
// not read).
TEXT ·eluGradTo8(SB), NOSPLIT, $0-72
	MOVQ         ga_base+0(FP), DI
	MOVQ         ga_len+8(FP), CX
	MOVQ         g_base+24(FP), SI
	MOVQ         y_base+48(FP), DX
	SHRQ         $3, CX
	JZ           eodone
	VXORPS       Y13, Y13, Y13
	MOVL         $0x3f800000, AX
	MOVL         AX, X14
	VBROADCASTSS X14, Y14

eoloop:
	VMOVUPS   (DX), Y0
	VADDPS    Y14, Y0, Y1
	VCMPPS    $14, Y13, Y0, Y2
	VBLENDVPS Y2, Y14, Y1, Y1
	VMULPS    (SI), Y1, Y3
	VMOVUPS   Y3, (DI)
	ADDQ      $32, DI
	ADDQ      $32, SI
	ADDQ      $32, DX
	DECQ      CX
	JNZ       eoloop

eodone:
	VZEROUPPER
	RET

// func tanhGradTo8(ga, g, y []float32)
// For the first len(ga)/8·8 elements: ga = g·(1 − y²) (ga is not read).
TEXT ·tanhGradTo8(SB), NOSPLIT, $0-72
	MOVQ         ga_base+0(FP), DI
	MOVQ         ga_len+8(FP), CX
	MOVQ         g_base+24(FP), SI
	MOVQ         y_base+48(FP), DX
	SHRQ         $3, CX
	JZ           todone
	MOVL         $0x3f800000, AX
	MOVL         AX, X14
	VBROADCASTSS X14, Y14

toloop:
	VMOVUPS      (DX), Y0
	VMOVAPS      Y14, Y1
	VFNMADD231PS Y0, Y0, Y1
	VMULPS       (SI), Y1, Y3
	VMOVUPS      Y3, (DI)
	ADDQ         $32, DI
	ADDQ         $32, SI
	ADDQ         $32, DX
	DECQ         CX
	JNZ          toloop

todone:
	VZEROUPPER
	RET

// func relu8(dst, src []float32)
// For the first len(dst)/8·8 elements: dst = src where its sign bit is
// clear or it is a NaN, else +0 (ReLU32 bit for bit).
TEXT ·relu8(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	SHRQ $3, CX
	JZ   rdone

rloop:
	VMOVUPS (SI), Y0
	VPSRAD  $31, Y0, Y1       // all ones where the sign bit is set
	VCMPPS  $3, Y0, Y0, Y2    // all ones where a NaN
	VANDNPS Y1, Y2, Y3        // dropped: sign set and not a NaN
	VANDNPS Y0, Y3, Y4
	VMOVUPS Y4, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     rloop

rdone:
	VZEROUPPER
	RET

// func reluGradTo8(ga, g, y []float32)
// For the first len(ga)/8·8 elements: ga = g where y > 0 (ordered: +Inf
// included, NaN not), else +0.
TEXT ·reluGradTo8(SB), NOSPLIT, $0-72
	MOVQ   ga_base+0(FP), DI
	MOVQ   ga_len+8(FP), CX
	MOVQ   g_base+24(FP), SI
	MOVQ   y_base+48(FP), DX
	SHRQ   $3, CX
	JZ     rgdone
	VXORPS Y13, Y13, Y13

rgloop:
	VMOVUPS (DX), Y0
	VCMPPS  $14, Y13, Y0, Y2  // y > 0
	VANDPS  (SI), Y2, Y3
	VMOVUPS Y3, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	DECQ    CX
	JNZ     rgloop

rgdone:
	VZEROUPPER
	RET

// func mulAcc8(a, x, y []float32)
// For the first len(a)/8·8 elements: a += x·y, the product rounded before
// the sum (no fused multiply-add: the Go loop's result bit for bit).
TEXT ·mulAcc8(SB), NOSPLIT, $0-72
	MOVQ a_base+0(FP), DI
	MOVQ a_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	SHRQ $3, CX
	JZ   madone

maloop:
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y1
	VADDPS  (DI), Y1, Y2
	VMOVUPS Y2, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	DECQ    CX
	JNZ     maloop

madone:
	VZEROUPPER
	RET


// The AVX-512 forms of tanh4 and elu4: eight float64 lanes
// instead of four, each lane the same sequence of operations on the same
// constants (broadcast from elemc), so every element comes out bit for bit
// as from the four-lane kernels. AVX-512 has no VBLENDVPD and no
// VROUNDPD on 512-bit registers: a compare into a mask register with a
// masked move, and VRNDSCALEPD $0 (round to nearest even, as VROUNDPD $0),
// take their place.

// EXPPDZ is EXPPD on eight lanes.
#define EXPPDZ(X, N, T, TY, OUT) \
	VMULPD.BCST       elemc<>+224(SB), X, N \
	VRNDSCALEPD       $0, N, N \
	VFNMADD231PD.BCST elemc<>+256(SB), N, X \
	VBROADCASTSD      elemc<>+192(SB), OUT \
	VFMADD213PD.BCST  elemc<>+160(SB), X, OUT \
	VFMADD213PD.BCST  elemc<>+128(SB), X, OUT \
	VFMADD213PD.BCST  elemc<>+96(SB), X, OUT \
	VFMADD213PD.BCST  elemc<>+64(SB), X, OUT \
	VFMADD213PD.BCST  elemc<>+32(SB), X, OUT \
	VFMADD213PD.BCST  elemc<>+0(SB), X, OUT \
	VFMADD213PD.BCST  elemc<>+0(SB), X, OUT \
	VCVTPD2DQ         N, TY \
	VPMOVSXDQ         TY, T \
	VPADDQ.BCST       elemc<>+480(SB), T, T \
	VPSLLQ            $52, T, T \
	VMULPD            T, OUT, OUT

// func tanh8z(dst, src []float32)
// Processes len(dst)/8 groups of eight: dst = tanh(src), as tanh4.
TEXT ·tanh8z(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	SHRQ $3, CX
	JZ   tdone

tloop:
	VMOVUPS           (SI), Y0
	VANDPS            elemc<>+512(SB), Y0, Y1
	VANDPS            elemc<>+544(SB), Y0, Y2
	VCVTPS2PD         Y2, Z2
	VMINPD.BCST       elemc<>+288(SB), Z2, Z2
	VADDPD            Z2, Z2, Z3
	EXPPDZ(Z3, Z4, Z5, Y5, Z6)
	VSUBPD.BCST       elemc<>+0(SB), Z6, Z7
	VADDPD.BCST       elemc<>+0(SB), Z6, Z8
	VDIVPD            Z8, Z7, Z7
	VMULPD            Z2, Z2, Z9
	VBROADCASTSD      elemc<>+416(SB), Z10
	VFMADD213PD.BCST  elemc<>+384(SB), Z9, Z10
	VFMADD213PD.BCST  elemc<>+352(SB), Z9, Z10
	VFMADD213PD.BCST  elemc<>+0(SB), Z9, Z10
	VMULPD            Z2, Z10, Z10
	VCMPPD.BCST       $1, elemc<>+320(SB), Z2, K1
	VMOVAPD           Z10, K1, Z7
	VCVTPD2PS         Z7, Y7
	VORPS             Y1, Y7, Y7
	VCMPPS            $3, Y0, Y0, Y12
	VBLENDVPS         Y12, Y0, Y7, Y7
	VMOVUPS           Y7, (DI)
	ADDQ              $32, SI
	ADDQ              $32, DI
	DECQ              CX
	JNZ               tloop

tdone:
	VZEROUPPER
	RET

// func elu8z(dst, src []float32)
// Processes len(dst)/8 groups of eight: dst = ELU(src), as elu4.
TEXT ·elu8z(SB), NOSPLIT, $0-48
	MOVQ   dst_base+0(FP), DI
	MOVQ   dst_len+8(FP), CX
	MOVQ   src_base+24(FP), SI
	SHRQ   $3, CX
	JZ     edone
	VPXORQ Z13, Z13, Z13

eloop:
	VMOVUPS     (SI), Y0
	VCVTPS2PD   Y0, Z2
	VMINPD      Z13, Z2, Z2
	VMAXPD.BCST elemc<>+448(SB), Z2, Z2
	EXPPDZ(Z2, Z4, Z5, Y5, Z6)
	VSUBPD.BCST elemc<>+0(SB), Z6, Z6
	VCVTPD2PS   Z6, Y6
	VCMPPS      $6, Y13, Y0, Y7
	VBLENDVPS   Y7, Y0, Y6, Y6
	VMOVUPS     Y6, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	DECQ        CX
	JNZ         eloop

edone:
	VZEROUPPER
	RET
