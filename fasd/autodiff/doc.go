// Package autodiff is a tape-based reverse-mode automatic differentiation
// engine over the dense tensors of package tensor, with exactly the
// operations FASD's networks need (GCN normalisation and propagation,
// multi-head tanh attention over channel stacks, linear maps, activations,
// masks, concatenation, dropout and the three losses).
//
// # Concepts
//
// A [Tape] records operations as they run. Each operation returns a [*Var]
// holding its value and, when any input needs one, a gradient (a buffer bound
// while Backward runs, see Invariants).
// [Tape.Backward] walks the record in reverse and accumulates gradients into
// every Var that needs one. Parameters are [*Param]s owned by the model; on a
// tape they appear as persistent leaf Vars ([Tape.Param]) whose gradients are
// added to Param.Grad by [Tape.AccumulateGrads]. Inputs whose gradient is
// wanted (∇_X, ∇_A) are leaves made by [Tape.Input] with needGrad set.
//
// Typical step:
//
//	tp.Reset()
//	x := tp.Input(X, false)
//	h := tp.Act(tp.Linear(x, tp.Param(w), tp.Param(b)), autodiff.ReLU)
//	loss := tp.SquaredError(h, target, 1)
//	tp.Backward(loss)
//	tp.AccumulateGrads() // Param.Grad += ∂loss/∂param
//
// Symmetric channel stacks: [Tape.PackSym] packs the upper triangle (with
// the diagonal) of symmetric matrices, [Tape.UnpackSym] mirrors it back, so
// that entrywise maps over pairs (the edge MLPs of s_φ) run on N(N+1)/2
// instead of N² pairs with bit-identical results.
//
// Modes: [Tape.SetNoGrad] (eval: nothing needs a gradient, no gradient
// memory) and [Tape.FreezeParams] (parameters need none, inputs still do: the
// mode for ∇_X/∇_A of a frozen network). [Tape.Flops] counts the
// floating-point operations of the matrix products a tape has issued.
//
// # Invariants
//
//   - Memory: every value buffer comes from the tape's arena and is handed
//     out again, in the same order, after [Tape.Reset]. The gradients of
//     recorded values come from the tape's gradient pool during
//     [Tape.Backward] only: a buffer is bound when the first backward op
//     writes the gradient and returned once the op that recorded the value
//     has passed it on, so a backward pass holds the gradients in flight, not
//     one per recorded value (about 40 % less memory for the score networks).
//     Leaf gradients (inputs, parameters) and those of reshaped values get
//     buffers of their own; [Tape.KeepGrads] gives every value one, for
//     inspection. A training loop that records the same sequence of shapes
//     therefore allocates nothing in steady state. [Tape.Release] hands the
//     memory back between stages of different sizes. Vars returned by a tape
//     (and their slices) are valid only until the next Reset of that tape.
//   - Gradient buffers of recorded values are not zeroed when recorded: in
//     Backward the first op that writes a whole buffer overwrites it (GEMM
//     with beta 0, copy instead of add), ops that accumulate clear it just
//     before, and Backward zeroes the buffers no gradient reached. A leaf's
//     Grad is therefore defined after Backward (as before: the sum of its
//     contributions from zero), not between recording and Backward; an
//     intermediate value's Grad is nil then unless the tape keeps it.
//   - Inputs are aliased, not copied: the caller must not change a tensor
//     passed to Input or Param between the forward pass and Backward.
//   - Operations never start goroutines. A Tape is not safe for concurrent
//     use; parallel training uses one tape per worker (package nn). Each
//     tape owns its GEMM packing workspace (tensor.GemmWorkspace).
//   - Shapes follow package tensor: node features B×N×F, adjacency B×N×N,
//     channel stacks B×C×N×N, masks B·N values.
//
// # Caveats
//
// Shape mismatches are programmer errors and panic with an "autodiff:"
// message. Gradients at non-differentiable points follow the usual
// conventions: ReLU'(0) = 0, the degree clamp max(1, d) passes no gradient
// when d ≤ 1, an overwritten diagonal passes none.
package autodiff
