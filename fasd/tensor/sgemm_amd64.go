//go:build amd64 && !noasm

package tensor

import "golang.org/x/sys/cpu"

// haveAsmKernel reports whether the AVX2+FMA micro-kernel can run here.
var haveAsmKernel = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// kern6x16 is the AVX2+FMA micro-kernel (sgemm_amd64.s) with the kernFunc
// contract. The caller guarantees the slice lengths the contract reads and
// writes; the kernel does not check them.
//
//go:noescape
func kern6x16(k int, a []float32, ras, cas int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32, mr, nr int)

// asmKernel is the kernel Gemm uses when haveAsmKernel is true.
var asmKernel kernFunc = kern6x16
