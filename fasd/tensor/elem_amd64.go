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

// eluGradAcc8 adds g·ELU'(y) to ga for the first len(ga) &^ 7 elements;
// len(g), len(y) ≥ len(ga).
//
//go:noescape
func eluGradAcc8(ga, g, y []float32)

// tanhGradAcc8 adds g·(1 − y²) to ga for the first len(ga) &^ 7 elements.
//
//go:noescape
func tanhGradAcc8(ga, g, y []float32)

// eluGradTo8 sets ga = g·ELU'(y) for the first len(ga) &^ 7 elements.
//
//go:noescape
func eluGradTo8(ga, g, y []float32)

// tanhGradTo8 sets ga = g·(1 − y²) for the first len(ga) &^ 7 elements.
//
//go:noescape
func tanhGradTo8(ga, g, y []float32)

// relu8 sets dst[i] = ReLU32(src[i]) for the first len(dst) &^ 7 elements;
// len(src) ≥ len(dst).
//
//go:noescape
func relu8(dst, src []float32)

// reluGradTo8 sets ga[i] = g[i] where y[i] > 0, else +0, for the first
// len(ga) &^ 7 elements; len(g), len(y) ≥ len(ga).
//
//go:noescape
func reluGradTo8(ga, g, y []float32)

// mulAcc8 adds x[i]·y[i] (rounded, then added) to a[i] for the first
// len(a) &^ 7 elements; len(x), len(y) ≥ len(a).
//
//go:noescape
func mulAcc8(a, x, y []float32)
