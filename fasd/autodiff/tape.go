package autodiff

import (
	"fmt"

	"github.com/fasd-db/fasd/fasd/tensor"
)

// Float is the element type constraint (float32 for training, float64 for
// gradient checks).
type Float = tensor.Float

// Var is a value recorded on a tape, with its gradient when one is needed.
type Var[T Float] struct {
	// Value is the forward value. Owned by the tape (or aliased input).
	Value tensor.Dense[T]
	// Grad has len(Value.Data) entries when NeedsGrad, else it is nil. For
	// the leaves (Tape.Input with needGrad, Tape.Param), for a value that
	// was reshaped (Tape.Reshape) and on a tape with KeepGrads it is defined
	// after Backward. Otherwise the gradient of a recorded value lives only
	// while Backward runs: Grad is nil before and after (see Tape.Backward).
	Grad []T
	req  bool
	// pend marks a gradient buffer that no backward op has written yet: its
	// contents are stale arena memory. The first writer overwrites it (or
	// clears it first, see Tape.ready); Backward clears what is left.
	pend bool
	// pooled marks a recorded value whose gradient buffer comes from the
	// tape's gradient pool: bound when Backward first needs it, given back
	// once the op that produced the value has passed its gradient on.
	pooled bool
	slot   int32 // gradient pool slot while bound
	// sym marks a value whose every trailing N×N matrix is exactly
	// symmetric (X_ij and X_ji the same bits), as the op that made it
	// guarantees (Attention, UnpackSym, MaskPairs of such a value).
	// PackSym then copies the upper triangles instead of averaging.
	sym bool
}

// NeedsGrad reports whether a gradient flows into v.
func (v *Var[T]) NeedsGrad() bool { return v.req }

// Shape returns the shape of the value.
func (v *Var[T]) Shape() tensor.Shape { return v.Value.Shape }

// Data returns the value's flat data.
func (v *Var[T]) Data() []T { return v.Value.Data }

// Param is a trainable tensor owned by a model. Grad accumulates gradients
// from tapes (see Tape.AccumulateGrads) until the optimiser consumes them.
type Param[T Float] struct {
	Name  string
	Value tensor.Dense[T]
	Grad  []T
}

// NewParam allocates a zero parameter of the given shape.
func NewParam[T Float](name string, dims ...int) *Param[T] {
	v := tensor.New[T](dims...)
	return &Param[T]{Name: name, Value: v, Grad: make([]T, len(v.Data))}
}

// ZeroGrad clears p.Grad.
func (p *Param[T]) ZeroGrad() { clear(p.Grad) }

type leaf[T Float] struct {
	p *Param[T]
	v *Var[T]
}

// Tape records operations for reverse-mode differentiation and owns the
// memory of everything it records. The zero value is not usable; call
// NewTape.
type Tape[T Float] struct {
	nodes []node[T]
	nn    int
	vars  []*Var[T]
	nv    int
	bufs  [][]T
	nb    int
	// Gradient pool of the recorded values (see Backward): slot buffers,
	// and the free slots (indices into gpool).
	gpool [][]T
	gfree []int32

	leaves    []leaf[T]
	leafIdx   map[*Param[T]]int
	noGrad    bool
	frozen    bool
	keepGrads bool
	flops     int64
	ws        tensor.GemmWorkspace
}

// gemm runs tensor.Gemm and counts its 2·m·n·k floating-point operations.
func (t *Tape[T]) gemm(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	t.flops += 2 * int64(m) * int64(n) * int64(k)
	tensor.GemmWith(&t.ws, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Flops returns the number of floating-point operations this tape has spent
// in matrix products (forward and backward) since it was made; elementwise
// work is not counted. Benchmarks divide it by time to get GFLOP/s.
func (t *Tape[T]) Flops() int64 { return t.flops }

// NewTape returns an empty tape.
func NewTape[T Float]() *Tape[T] {
	return &Tape[T]{leafIdx: make(map[*Param[T]]int)}
}

// Reset forgets the recorded operations, recycles the arena and clears the
// gradients of the parameter leaves. Vars from before the Reset become
// invalid.
func (t *Tape[T]) Reset() {
	t.nn, t.nv, t.nb = 0, 0, 0
	t.gfree = t.gfree[:0]
	for i := range t.gpool {
		t.gfree = append(t.gfree, int32(i))
	}
	for _, l := range t.leaves {
		clear(l.v.Grad)
	}
}

// Release is Reset that also hands the arena, the gradient pool and the
// parameter leaves back to the garbage collector, keeping only the GEMM
// workspace and the modes. The tape stays usable: the next recording grows
// the arena again and makes new leaves. Call it when a tape that recorded
// large batches stays around for work that needs much less (or none), or for
// other models, e.g. between training stages.
func (t *Tape[T]) Release() {
	t.Reset()
	t.nodes, t.vars, t.bufs, t.gpool, t.gfree = nil, nil, nil, nil, nil
	t.leaves = nil
	clear(t.leafIdx)
}

// ArenaBytes returns the bytes the tape holds for values and gradients:
// arena and gradient pool capacity and the gradients of the parameter
// leaves.
func (t *Tape[T]) ArenaBytes() int64 {
	var n int64
	for _, l := range t.leaves {
		n += int64(cap(l.v.Grad))
	}
	for _, b := range t.bufs {
		n += int64(cap(b))
	}
	for _, b := range t.gpool {
		n += int64(cap(b))
	}
	var z T
	if _, ok := any(z).(float64); ok {
		return 8 * n
	}
	return 4 * n
}

// SetNoGrad switches gradient recording off (eval mode: parameters and inputs
// never need gradients, so no gradient buffers are made and Backward is not
// allowed) or back on. Call it right after Reset.
func (t *Tape[T]) SetNoGrad(off bool) { t.noGrad = off }

// FreezeParams makes parameter leaves need no gradient while inputs made
// with needGrad still get one: the mode for ∇_X/∇_A of a frozen network.
func (t *Tape[T]) FreezeParams(frozen bool) { t.frozen = frozen }

// KeepGrads(true) gives every recorded value that needs a gradient a buffer
// of its own in the arena, defined after Backward: for inspecting the
// gradients of intermediate values, at the cost of one gradient buffer per
// recorded value. The default (false) recycles those buffers through the
// tape's gradient pool during Backward (see Backward); both give bit for bit
// the same leaf gradients. Call it before recording; the setting persists
// across Reset and Release.
func (t *Tape[T]) KeepGrads(keep bool) { t.keepGrads = keep }

// NoGrad reports whether gradient recording is off.
func (t *Tape[T]) NoGrad() bool { return t.noGrad }

// buf returns an arena slice of length n with unspecified contents.
func (t *Tape[T]) buf(n int) []T {
	if t.nb == len(t.bufs) {
		t.bufs = append(t.bufs, make([]T, n))
	} else if cap(t.bufs[t.nb]) < n {
		t.bufs[t.nb] = make([]T, n)
	}
	b := t.bufs[t.nb][:n]
	t.nb++
	return b
}

// zbuf returns a zeroed arena slice.
func (t *Tape[T]) zbuf(n int) []T {
	b := t.buf(n)
	clear(b)
	return b
}

func (t *Tape[T]) pooledVar() *Var[T] {
	if t.nv == len(t.vars) {
		t.vars = append(t.vars, new(Var[T]))
	}
	v := t.vars[t.nv]
	t.nv++
	return v
}

// newVar returns a var of shape s whose value is uninitialised and whose
// gradient buffer (if req) is pending: Backward's first writer overwrites it
// (first) or clears it before accumulating (ready), and Backward zeroes the
// buffers nobody wrote, so every Grad reads as a sum from zero afterwards.
func (t *Tape[T]) newVar(s tensor.Shape, req bool) *Var[T] {
	v := t.pooledVar()
	n := s.Len()
	v.Value = tensor.Dense[T]{Data: t.buf(n), Shape: s}
	v.sym = false
	v.req = req && !t.noGrad
	v.Grad = nil
	v.pend = v.req
	// A pooled gradient buffer is bound by Backward (bindGrad).
	v.pooled = v.req && !t.keepGrads
	if v.req && t.keepGrads {
		v.Grad = t.buf(n)
	}
	return v
}

// newVarOver is newVar whose value is x's value buffer (same shape), for an
// op that overwrites x in place.
func (t *Tape[T]) newVarOver(x *Var[T]) *Var[T] {
	v := t.pooledVar()
	v.Value = x.Value
	v.sym = false
	v.req = x.req && !t.noGrad
	v.Grad = nil
	v.pend = v.req
	v.pooled = v.req && !t.keepGrads
	if v.req && t.keepGrads {
		v.Grad = t.buf(len(x.Value.Data))
	}
	return v
}

// bindGrad gives a pooled var that needs a gradient its pending buffer from
// the gradient pool, if it has none yet: the free slot of the smallest
// sufficient capacity, else the largest free slot grown, else a new slot.
func (t *Tape[T]) bindGrad(v *Var[T]) {
	if v == nil || !v.pooled || v.Grad != nil || !v.req {
		return
	}
	n := len(v.Value.Data)
	best, bestCap := -1, 0
	big, bigCap := -1, -1
	for k, s := range t.gfree {
		c := cap(t.gpool[s])
		if c >= n && (best < 0 || c < bestCap) {
			best, bestCap = k, c
		}
		if c > bigCap {
			big, bigCap = k, c
		}
	}
	var s int32
	switch {
	case best >= 0:
		s = t.gfree[best]
		t.gfree = deleteAt(t.gfree, best)
	case big >= 0:
		s = t.gfree[big]
		t.gfree = deleteAt(t.gfree, big)
		t.gpool[s] = make([]T, n)
	default:
		s = int32(len(t.gpool))
		t.gpool = append(t.gpool, make([]T, n))
	}
	v.slot = s
	v.Grad = t.gpool[s][:n]
	v.pend = true
}

// unbindGrad returns the pool buffer of v (bound by bindGrad) to the free
// slots.
func (t *Tape[T]) unbindGrad(v *Var[T]) {
	if !v.pooled || v.Grad == nil {
		return
	}
	v.Grad = nil
	v.pend = true
	t.gfree = append(t.gfree, v.slot)
}

// pin gives a pooled var a gradient buffer of its own from the arena, for a
// gradient that must outlive Backward (Reshape views share it).
func (t *Tape[T]) pin(v *Var[T]) {
	if v.pooled {
		v.pooled = false
		if v.req {
			v.Grad = t.buf(len(v.Value.Data))
			v.pend = true
		}
	}
}

func deleteAt(s []int32, k int) []int32 {
	last := len(s) - 1
	s[k] = s[last]
	return s[:last]
}

// ready makes a pending gradient buffer of v hold zeros, for a backward op
// that accumulates into it.
func (t *Tape[T]) ready(v *Var[T]) {
	if v != nil && v.pend {
		clear(v.Grad)
		v.pend = false
	}
}

// first reports whether a backward op that writes every entry of v.Grad is
// its first writer (and may overwrite instead of accumulating), and marks
// the buffer written. The op must then write all of v.Grad.
func first[T Float](v *Var[T]) bool {
	if v.pend {
		v.pend = false
		return true
	}
	return false
}

// accBeta is the GEMM beta of a backward product into v.Grad covering all of
// it: 0 for the first writer (overwrite), 1 otherwise (accumulate).
func accBeta[T Float](v *Var[T]) T {
	if first(v) {
		return 0
	}
	return 1
}

// Input makes a leaf from d (aliased, not copied). With needGrad the leaf gets
// a zeroed gradient buffer that Backward fills with ∂loss/∂d.
func (t *Tape[T]) Input(d tensor.Dense[T], needGrad bool) *Var[T] {
	v := t.pooledVar()
	v.Value = d
	v.req = needGrad && !t.noGrad
	v.Grad = nil
	v.pend = false
	v.pooled = false
	if v.req {
		v.Grad = t.zbuf(len(d.Data))
	}
	return v
}

// Param returns the leaf Var of p on this tape. The leaf persists across
// Reset (its gradient is cleared there) and aliases p.Value.
func (t *Tape[T]) Param(p *Param[T]) *Var[T] {
	i, ok := t.leafIdx[p]
	if !ok {
		i = len(t.leaves)
		t.leaves = append(t.leaves, leaf[T]{p: p, v: new(Var[T])})
		t.leafIdx[p] = i
	}
	v := t.leaves[i].v
	v.Value = p.Value
	v.req = !t.noGrad && !t.frozen
	if len(v.Grad) != len(p.Value.Data) {
		v.Grad = make([]T, len(p.Value.Data))
	}
	return v
}

// AccumulateGrads adds the gradient of every parameter leaf of this tape to
// its Param.Grad (allocating Grad if it has the wrong length).
func (t *Tape[T]) AccumulateGrads() {
	for _, l := range t.leaves {
		if !l.v.req {
			continue
		}
		if len(l.p.Grad) != len(l.v.Grad) {
			l.p.Grad = make([]T, len(l.v.Grad))
		}
		g := l.p.Grad
		for i, x := range l.v.Grad {
			g[i] += x
		}
	}
}

// Backward accumulates ∂loss/∂v into every leaf v on the tape that needs a
// gradient (Tape.Input with needGrad, Tape.Param) and into the values that
// were reshaped. loss must be a scalar (one element) recorded on this tape.
//
// The gradients of the other recorded values are intermediate: each is
// bound to a buffer of the tape's gradient pool when the first op (in
// reverse order) writes it and given back as soon as the op that recorded
// the value has run its backward step, so a backward pass holds only the
// gradients in flight instead of one buffer per recorded value. Their Grad
// is nil after Backward, unless the tape keeps them (KeepGrads).
func (t *Tape[T]) Backward(loss *Var[T]) {
	if len(loss.Value.Data) != 1 {
		panic(fmt.Sprintf("autodiff: Backward on non-scalar %v", loss.Value.Shape))
	}
	if !loss.req {
		panic("autodiff: Backward on a value that needs no gradient (eval mode or constant)")
	}
	t.bindGrad(loss)
	t.ready(loss)
	loss.Grad[0] += 1
	for i := t.nn - 1; i >= 0; i-- {
		n := &t.nodes[i]
		// An output no gradient reached (still pending) contributes nothing.
		if n.out.req && !n.out.pend {
			t.bindGrad(n.a)
			t.bindGrad(n.b)
			t.bindGrad(n.c)
			for _, v := range n.ins {
				t.bindGrad(v)
			}
			t.backward(n)
		}
		t.unbindGrad(n.out)
	}
	for _, v := range t.vars[:t.nv] {
		if v.pooled {
			t.unbindGrad(v)
		} else {
			t.ready(v)
		}
	}
}

func anyReq[T Float](vs ...*Var[T]) bool {
	for _, v := range vs {
		if v != nil && v.req {
			return true
		}
	}
	return false
}

// panicShape reports a programmer error (shape mismatch). Callers test the
// condition first so that the happy path boxes no arguments (no allocation).
func panicShape(format string, args ...any) {
	panic(fmt.Sprintf("autodiff: "+format, args...))
}
