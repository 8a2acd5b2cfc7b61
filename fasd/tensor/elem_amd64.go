//go:build amd64 && !noasm

package tensor

// haveElemAsm reports whether the AVX2+FMA elementwise kernels can run here.
var haveElemAsm = haveAsmKernel

// tanh4 sets dst[i] = tanh(src[i]) for the first len(dst) &^ 3 elements
// (elem_amd64.s); len(src) ≥ len(dst).
//
//go:noescape
func tanh4(dst, src []float32)

// elu4 sets dst[i] = ELU(src[i]) for the first len(dst) &^ 3 elements.
//
//go:noescape
func elu4(dst, src []float32)
