// Package tensor holds the dense, row-major tensors and the numeric kernels
// that the FASD autodiff and layers are built on.
//
// # Concepts
//
// A [Dense] is a value type: a shape of rank 1 to 4 plus a flat, row-major
// data slice. Copying a Dense copies the header, not the data, so a Dense
// obtained from [Dense.Batch] or [Dense.Reshape] is a view that shares memory
// with its source. Everything is generic over [Float] (float32 or float64):
// training runs in float32, and the very same code runs in float64 for
// gradient checks.
//
// Conventions used by the rest of fasd:
//
//   - node features: B×N×F; adjacency: B×N×N; channel stacks: B×C×N×N;
//     node masks: B·N values in {0,1}.
//
// # Kernels
//
// [Gemm] is the only matrix-multiply entry point. float32 goes through
// gonum's blas32 (so blas32.Use swaps the implementation), float64 through
// blas64. Gemm tiles the output so that gonum never starts its own goroutines:
// concurrency in fasd is always opt-in and explicit (see package nn).
// [Tanh], [Exp] and [Sigmoid] are the transcendental kernels; for float32 they
// use fast approximations (relative error below 1e-6, see math.go), for
// float64 the math package.
//
// # Caveats
//
// Public accessors check shapes and panic on programmer errors (shape
// mismatch); nothing in this package does I/O or keeps global state apart
// from the blas32/blas64 implementation selected by gonum.
package tensor
