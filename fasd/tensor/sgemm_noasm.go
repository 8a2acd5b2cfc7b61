//go:build !amd64 || noasm

package tensor

// haveAsmKernel is false: this build has no assembly kernel, and Gemm runs
// float32 on gonum's blas32.
const haveAsmKernel = false

// asmKernel is never called in this build; it is the portable kernel so that
// the packed driver still compiles and is tested.
var asmKernel kernFunc = kernGo

// asmKernel2 is nil: the driver calls asmKernel once per tile.
var asmKernel2 kern2Func

// haveAsm512 is false: no assembly in this build (a variable, so that the
// tests of the AVX-512 kernels compile here and skip).
var haveAsm512 = false

// kern6x16 and kern6x16z stand for the assembly kernels in tests (which
// skip in this build): the portable kernel under their names.
func kern6x16(k int, a []float32, ras, cas int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32, mr, nr int) {
	kernGo(k, a, ras, cas, b, ldb, c, ldc, alpha, beta, mr, nr)
}

func kern6x16z(k int, a []float32, ras, cas int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32, mr, nr int) {
	kernGo(k, a, ras, cas, b, ldb, c, ldc, alpha, beta, mr, nr)
}

func kern6x32z(k int, a []float32, ras, cas int, b []float32, boff, ldb int, c []float32, ldc int, alpha, beta float32, mr int) {
	kern2Go(k, a, ras, cas, b, boff, ldb, c, ldc, alpha, beta, mr)
}

func asmKernelName() string { return "gonum" }
