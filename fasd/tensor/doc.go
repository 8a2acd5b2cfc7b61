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
// [Gemm] (and [GemmWith], the same with a caller-owned [GemmWorkspace]) is
// the matrix-multiply entry point; [GemmNT] is a shortcut beside it for
// the tiny products of attention (C = α·A·Bᵀ with at most [NTCols] columns,
// B packed once by [PackNT]), which writes Gemm's bits where it runs. On
// amd64 CPUs with AVX2 and FMA (detected at run time with
// golang.org/x/sys/cpu), float32 runs on this
// package's blocked GEMM: a 6×16 register-tiled micro-kernel in Go assembly
// (sgemm_amd64.s, VFMADD231PS), panels read in place where the layout allows
// and packed otherwise, edge tiles stored through a scratch tile so that
// nothing outside C is touched. Where the CPU also has AVX-512F the same
// micro-kernel runs on 512-bit registers (sgemm512_amd64.s: one register
// per tile row, A broadcast from memory into the FMA), which gives every
// element the same FMAs in the same order and so the AVX2 kernel's bits;
// there, two full tiles side by side go through a 6×32 pair kernel
// (kern6x32z: twelve FMA chains instead of six, enough to hide the FMA
// latency on two pipes), again the same FMAs per element. Everywhere else, in the `noasm` build, or
// after [ForceGonumGemm](true), float32 runs on gonum's blas32 (so
// blas32.Use swaps it) and float64 always on blas64; [GemmKernel] says which.
// Gemm tiles gonum's calls so that gonum never starts its own goroutines:
// concurrency in fasd is always opt-in and explicit (see package nn). The two
// float32 kernels agree up to rounding (they sum in different orders).
//
// [GemmNT] runs on AVX-512 only (gemmnt_amd64.s: rows of C four at a
// time, each row two 16-lane accumulators stored under a mask of n lanes,
// every element an FMA chain over p from zero and one multiply by α, as
// Gemm's kernels do it) and otherwise declines, leaving the product to
// Gemm.
//
// [Tanh], [Exp] and [Sigmoid] are the transcendental kernels; for float32 they
// use fast approximations (relative error below 1e-6, see math.go), for
// float64 the math package. The slice forms [TanhTo], [ELUTo] and the
// activation-gradient accumulators [TanhGradAcc], [ELUGradAcc] and their
// overwriting forms [TanhGradTo], [ELUGradTo] (for a first gradient writer)
// run AVX2 lanes (four or eight at a time, same error bounds) where
// available; with AVX-512F, [TanhTo] and [ELUTo] run eight float64 lanes
// instead of four, bit for bit the four-lane results. [ReLUTo], [ReLUGradTo] and [MulAcc] (a += x·y, rounded as the
// plain loop rounds it) run eight AVX2 lanes with results equal bit for bit
// to their scalar loops.
//
// On AVX-512F float32 has more kernels, each equal bit for bit to its Go
// loop (which is what every other CPU runs): [AddTo], [Acc], [ColSumAcc]
// and [Fill] sixteen lanes at a time; [AdamUpdate] eight; [DropMask], inverted dropout from a
// block of random draws (two compares of eight 64-bit draws per sixteen
// entries); and the row passes of the full-graph GCN baseline's hidden
// layer, [ReLUDropDot2] and [ReLUDropBack]. ReLUDropDot2's two dot
// products per row are sums in order of the column: it transposes sixteen
// rows at a time in registers so that each lane adds one row's products in
// that order, which keeps the scalar loop's bits.
//
// The pure-Go build (`go test -tags noasm`; gonum honours the same tag)
// compiles no assembly at all and is what other architectures run; the tests of this package run in both builds
// and check the assembly against float64 references and the portable
// micro-kernel, with NaN guard regions around every output.
//
// # Caveats
//
// Public accessors check shapes and panic on programmer errors (shape
// mismatch); nothing in this package does I/O. Process-wide state is limited
// to the blas32/blas64 implementation selected by gonum, the result of the
// CPU detection, the ForceGonumGemm switch (meant for benchmarks) and a
// sync.Pool of packing workspaces behind Gemm (about 0.6 MiB each, one per
// concurrent call; GemmWith avoids it).
package tensor
