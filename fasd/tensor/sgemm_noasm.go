//go:build !amd64 || noasm

package tensor

// haveAsmKernel is false: this build has no assembly kernel, and Gemm runs
// float32 on gonum's blas32.
const haveAsmKernel = false

// asmKernel is never called in this build; it is the portable kernel so that
// the packed driver still compiles and is tested.
var asmKernel kernFunc = kernGo
