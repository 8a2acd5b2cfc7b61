//go:build amd64 && !noasm

package tensor

import "golang.org/x/sys/cpu"

// haveAsmKernel reports whether the AVX2+FMA micro-kernel can run here.
var haveAsmKernel = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// kern6x16 is the AVX2+FMA micro-kernel (sgemm_amd64.s) with the kernFunc
// contract; the caller guarantees len(ap) ≥ 6k, len(bp) ≥ (k−1)·ldb+16 and
// len(c) ≥ 5·ldc+16.
//
//go:noescape
func kern6x16(k int, ap, bp []float32, ldb int, c []float32, ldc int, alpha, beta float32)

// asmKernel is the kernel Gemm uses when haveAsmKernel is true.
var asmKernel kernFunc = kern6x16
