//go:build amd64 && !noasm

package tensor

import "golang.org/x/sys/cpu"

// haveAsmKernel reports whether the AVX2+FMA micro-kernel can run here.
var haveAsmKernel = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// haveAsm512 reports whether the AVX-512 micro-kernel can run here (the CPU
// has AVX-512F and the OS saves its registers).
var haveAsm512 = haveAsmKernel && cpu.X86.HasAVX512F

// kern6x16 is the AVX2+FMA micro-kernel (sgemm_amd64.s) with the kernFunc
// contract. The caller guarantees the slice lengths the contract reads and
// writes; the kernel does not check them.
//
//go:noescape
func kern6x16(k int, a []float32, ras, cas int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32, mr, nr int)

// kern6x16z is kern6x16 on AVX-512 registers (sgemm512_amd64.s): one
// register per tile row, half the FMA instructions, and bit for bit the
// same results (every element goes through the same FMAs in the same
// order).
//
//go:noescape
func kern6x16z(k int, a []float32, ras, cas int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32, mr, nr int)

// kern6x32z is the pair kernel of the AVX-512 build (sgemm512_amd64.s),
// with the kern2Func contract: two 16-column kern6x16z tiles in one pass,
// bit for bit what two kern6x16z calls give.
//
//go:noescape
func kern6x32z(k int, a []float32, ras, cas int, b []float32, boff, ldb int, c []float32, ldc int, alpha, beta float32, mr int)

// asmKernel is the kernel Gemm uses when haveAsmKernel is true: the AVX-512
// one where the CPU has it.
var asmKernel kernFunc = pickAsmKernel()

func pickAsmKernel() kernFunc {
	if haveAsm512 {
		return kern6x16z
	}
	return kern6x16
}

// asmKernel2 is the pair kernel Gemm uses beside asmKernel: kern6x32z on
// AVX-512, none on AVX2 (its 6×16 tile already has twelve accumulators).
var asmKernel2 kern2Func = pickAsmKernel2()

func pickAsmKernel2() kern2Func {
	if haveAsm512 {
		return kern6x32z
	}
	return nil
}

// asmKernelName names asmKernel for GemmKernel.
func asmKernelName() string {
	if haveAsm512 {
		return "avx512+fma"
	}
	return "avx2+fma"
}
