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

// tanh8z and elu8z are tanh4 and elu4 on eight AVX-512 lanes
// (elem512_amd64.s), for the first len(dst) &^ 7 elements, bit for bit the
// same values.
//
//go:noescape
func tanh8z(dst, src []float32)

//go:noescape
func elu8z(dst, src []float32)

// tanh8 and elu8 are the eight-lane kernels map32 runs before the
// four-lane ones, nil where the CPU lacks AVX-512.
var tanh8, elu8 = pick8(tanh8z), pick8(elu8z)

func pick8(k func(d, s []float32)) func(d, s []float32) {
	if haveAsm512 {
		return k
	}
	return nil
}

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
