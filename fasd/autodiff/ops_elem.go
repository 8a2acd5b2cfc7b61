package autodiff

import (
	"github.com/fasd-db/fasd/fasd/tensor"
)

// Activation selects an elementwise nonlinearity.
type Activation uint8

// The supported activations. ELU uses α = 1.
const (
	Identity Activation = iota
	ReLU
	ELU
	Tanh
	Sigmoid
)

// String names the activation.
func (a Activation) String() string {
	switch a {
	case Identity:
		return "identity"
	case ReLU:
		return "relu"
	case ELU:
		return "elu"
	case Tanh:
		return "tanh"
	case Sigmoid:
		return "sigmoid"
	}
	return "unknown"
}

// Act applies an activation elementwise. Identity returns x itself.
func (t *Tape[T]) Act(x *Var[T], kind Activation) *Var[T] {
	if kind == Identity {
		return x
	}
	out := t.newVar(x.Value.Shape, x.req)
	actTo(kind, out.Value.Data, x.Value.Data)
	n := t.push(opAct)
	n.out, n.a = out, x
	n.i[0] = int(kind)
	return out
}

// ActInPlace is Act computed over x's value, for a pre-activation that
// nothing else reads (the hidden layers of an MLP): it saves one buffer of
// x's size on the tape and gives bit for bit Act's values and gradients.
// x must not be used after the call (its value is the activation's). When
// x is not the value recorded last on this tape, or was recorded by Act
// (whose backward step reads its own output), or is a leaf, ActInPlace is
// Act. The ops whose output it may overwrite never read that output in
// their backward step.
func (t *Tape[T]) ActInPlace(x *Var[T], kind Activation) *Var[T] {
	if kind == Identity {
		return x
	}
	if t.nn == 0 || t.nodes[t.nn-1].out != x || t.nodes[t.nn-1].op == opAct {
		return t.Act(x, kind)
	}
	out := t.newVarOver(x)
	actTo(kind, out.Value.Data, x.Value.Data)
	n := t.push(opAct)
	n.out, n.a = out, x
	n.i[0] = int(kind)
	return out
}

// actTo sets y = kind(xd); y may be xd.
func actTo[T Float](kind Activation, y, xd []T) {
	switch kind {
	case ReLU:
		reluTo(y, xd)
	case ELU:
		tensor.ELUTo(y, xd)
	case Tanh:
		tensor.TanhTo(y, xd)
	case Sigmoid:
		for i, v := range xd {
			y[i] = tensor.Sigmoid(v)
		}
	default:
		panic("autodiff: unknown activation")
	}
}

// bwAct uses only the output: relu' = 1[y>0], elu' = y+1 for y ≤ 0,
// tanh' = 1−y², sigmoid' = y(1−y).
func (t *Tape[T]) bwAct(n *node[T]) {
	if !n.a.req {
		return
	}
	y, g, ga := n.out.Value.Data, n.out.Grad, n.a.Grad
	if first(n.a) {
		// First writer: set instead of add (no zeroing pass).
		switch Activation(n.i[0]) {
		case ReLU:
			reluGradTo(ga, g, y)
		case ELU:
			tensor.ELUGradTo(ga, g, y)
		case Tanh:
			tensor.TanhGradTo(ga, g, y)
		case Sigmoid:
			for i, v := range y {
				ga[i] = g[i] * v * (1 - v)
			}
		}
		return
	}
	switch Activation(n.i[0]) {
	case ReLU:
		for i, v := range y {
			if v > 0 {
				ga[i] += g[i]
			}
		}
	case ELU:
		tensor.ELUGradAcc(ga, g, y)
	case Tanh:
		tensor.TanhGradAcc(ga, g, y)
	case Sigmoid:
		for i, v := range y {
			ga[i] += g[i] * v * (1 - v)
		}
	}
}

// Add returns a + b (same shape).
func (t *Tape[T]) Add(a, b *Var[T]) *Var[T] {
	if !(a.Value.Shape == b.Value.Shape) {
		panicShape("Add: %v + %v", a.Value.Shape, b.Value.Shape)
	}
	out := t.newVar(a.Value.Shape, anyReq(a, b))
	tensor.AddTo(out.Value.Data, a.Value.Data, b.Value.Data)
	n := t.push(opAdd)
	n.out, n.a, n.b = out, a, b
	return out
}

func (t *Tape[T]) bwAdd(n *node[T]) {
	if n.a.req {
		addTo(n.a.Grad, n.out.Grad)
	}
	if n.b.req {
		addTo(n.b.Grad, n.out.Grad)
	}
}

// Mul returns the elementwise product a ⊙ b (same shape).
func (t *Tape[T]) Mul(a, b *Var[T]) *Var[T] {
	if !(a.Value.Shape == b.Value.Shape) {
		panicShape("Mul: %v ⊙ %v", a.Value.Shape, b.Value.Shape)
	}
	out := t.newVar(a.Value.Shape, anyReq(a, b))
	for i, v := range a.Value.Data {
		out.Value.Data[i] = v * b.Value.Data[i]
	}
	n := t.push(opMul)
	n.out, n.a, n.b = out, a, b
	return out
}

func (t *Tape[T]) bwMul(n *node[T]) {
	g := n.out.Grad
	if n.a.req {
		tensor.MulAcc(n.a.Grad, g, n.b.Value.Data)
	}
	if n.b.req {
		tensor.MulAcc(n.b.Grad, g, n.a.Value.Data)
	}
}

// Scale returns s·x.
func (t *Tape[T]) Scale(x *Var[T], s T) *Var[T] {
	out := t.newVar(x.Value.Shape, x.req)
	for i, v := range x.Value.Data {
		out.Value.Data[i] = s * v
	}
	n := t.push(opScale)
	n.out, n.a, n.f = out, x, s
	return out
}

func (t *Tape[T]) bwScale(n *node[T]) {
	if n.a.req {
		for i, g := range n.out.Grad {
			n.a.Grad[i] += n.f * g
		}
	}
}

// Reshape returns a view of x with another shape of equal length. The view
// shares value and gradient with x, so it records nothing.
func (t *Tape[T]) Reshape(x *Var[T], s tensor.Shape) *Var[T] {
	if !(s.Len() == x.Value.Shape.Len()) {
		panicShape("Reshape: %v to %v", x.Value.Shape, s)
	}
	// The view shares x's gradient buffer, so x gets one of its own (not
	// from the gradient pool) and it must be defined (zero) now: the first
	// writer of one of them cannot know of the other.
	t.pin(x)
	t.ready(x)
	v := t.pooledVar()
	v.Value = tensor.Dense[T]{Data: x.Value.Data, Shape: s}
	v.Grad, v.req, v.pend, v.pooled = x.Grad, x.req, false, false
	return v
}

// GatherCols selects, from every row of x (…, C·group), the column window
// [c·group+off, c·group+off+width) of each of the C groups; the result is
// (…, C·width). s_φ uses it to pick the V blocks out of the fused Q|K|V.
func (t *Tape[T]) GatherCols(x *Var[T], group, off, width int) *Var[T] {
	xs := x.Value.Shape
	cols := xs.Dim(-1)
	if !(group > 0 && cols%group == 0 && off >= 0 && width >= 0 && off+width <= group) {
		panicShape("GatherCols: %v group %d window [%d,+%d)", xs, group, off, width)
	}
	c := cols / group
	out := t.newVar(xs.WithDim(-1, c*width), x.req)
	rows := xs.Rows()
	for r := 0; r < rows; r++ {
		for ci := 0; ci < c; ci++ {
			copy(out.Value.Data[r*c*width+ci*width:r*c*width+(ci+1)*width], x.Value.Data[r*cols+ci*group+off:])
		}
	}
	n := t.push(opGatherCols)
	n.out, n.a = out, x
	n.i = [4]int{rows, c, group, off}
	n.f = T(width)
	return out
}

func (t *Tape[T]) bwGatherCols(n *node[T]) {
	if !n.a.req {
		return
	}
	rows, c, group, off, width := n.i[0], n.i[1], n.i[2], n.i[3], int(n.f)
	cols := c * group
	if first(n.a) {
		// First writer: copy the windows, zero the rest, in one pass.
		for r := 0; r < rows; r++ {
			for ci := 0; ci < c; ci++ {
				g := n.a.Grad[r*cols+ci*group : r*cols+(ci+1)*group]
				clear(g[:off])
				copy(g[off:off+width], n.out.Grad[r*c*width+ci*width:])
				clear(g[off+width:])
			}
		}
		return
	}
	for r := 0; r < rows; r++ {
		for ci := 0; ci < c; ci++ {
			addTo(n.a.Grad[r*cols+ci*group+off:r*cols+ci*group+off+width], n.out.Grad[r*c*width+ci*width:])
		}
	}
}

// ConcatLast concatenates along the last dimension; all inputs must agree on
// the other dimensions.
func (t *Tape[T]) ConcatLast(xs ...*Var[T]) *Var[T] {
	if !(len(xs) > 0) {
		panicShape("ConcatLast: no inputs")
	}
	s0 := xs[0].Value.Shape
	total := 0
	req := false
	for _, x := range xs {
		s := x.Value.Shape
		if !(s.Rank() == s0.Rank() && s.Rows() == s0.Rows()) {
			panicShape("ConcatLast: %v with %v", s, s0)
		}
		total += s.Dim(-1)
		req = req || x.req
	}
	out := t.newVar(s0.WithDim(-1, total), req)
	rows := s0.Rows()
	off := 0
	for _, x := range xs {
		w := x.Value.Shape.Dim(-1)
		for r := 0; r < rows; r++ {
			copy(out.Value.Data[r*total+off:r*total+off+w], x.Value.Data[r*w:(r+1)*w])
		}
		off += w
	}
	n := t.push(opConcatLast)
	n.out = out
	n.ins = append(n.ins, xs...)
	n.i[0], n.i[1] = rows, total
	return out
}

func (t *Tape[T]) bwConcatLast(n *node[T]) {
	rows, total := n.i[0], n.i[1]
	off := 0
	for _, x := range n.ins {
		w := x.Value.Shape.Dim(-1)
		if x.req {
			// The rows cover x.Grad; x may appear twice among the inputs.
			ow := first(x)
			for r := 0; r < rows; r++ {
				if ow {
					copy(x.Grad[r*w:(r+1)*w], n.out.Grad[r*total+off:])
				} else {
					addTo(x.Grad[r*w:(r+1)*w], n.out.Grad[r*total+off:])
				}
			}
		}
		off += w
	}
}

// ConcatChan concatenates channel stacks along dimension 1. Inputs are
// (B, C_i, N, N), or (B, N, N) counted as one channel; the result is
// (B, ΣC_i, N, N).
func (t *Tape[T]) ConcatChan(xs ...*Var[T]) *Var[T] {
	if !(len(xs) > 0) {
		panicShape("ConcatChan: no inputs")
	}
	_, nn := squareMats(xs[0].Value.Shape, "ConcatChan")
	bn := xs[0].Value.Shape.Dim(0)
	total := 0
	req := false
	for _, x := range xs {
		mats, n2 := squareMats(x.Value.Shape, "ConcatChan")
		if !(n2 == nn && x.Value.Shape.Dim(0) == bn && (x.Value.Shape.Rank() == 3 || x.Value.Shape.Rank() == 4)) {
			panicShape("ConcatChan: %v with %v", x.Value.Shape, xs[0].Value.Shape)
		}
		if bn > 0 {
			total += mats / bn
		} else if x.Value.Shape.Rank() == 4 {
			total += x.Value.Shape.Dim(1)
		} else {
			total++
		}
		req = req || x.req
	}
	out := t.newVar(tensor.S(bn, total, nn, nn), req)
	p := nn * nn
	off := 0
	for _, x := range xs {
		ci := len(x.Value.Data) / max(1, bn*p)
		for bi := 0; bi < bn; bi++ {
			copy(out.Value.Data[(bi*total+off)*p:(bi*total+off+ci)*p], x.Value.Data[bi*ci*p:(bi+1)*ci*p])
		}
		off += ci
	}
	n := t.push(opConcatChan)
	n.out = out
	n.ins = append(n.ins, xs...)
	n.i[0], n.i[1], n.i[2] = bn, total, p
	return out
}

func (t *Tape[T]) bwConcatChan(n *node[T]) {
	bn, total, p := n.i[0], n.i[1], n.i[2]
	off := 0
	for _, x := range n.ins {
		ci := len(x.Value.Data) / max(1, bn*p)
		if x.req {
			ow := first(x)
			for bi := 0; bi < bn; bi++ {
				if ow {
					copy(x.Grad[bi*ci*p:(bi+1)*ci*p], n.out.Grad[(bi*total+off)*p:])
				} else {
					addTo(x.Grad[bi*ci*p:(bi+1)*ci*p], n.out.Grad[(bi*total+off)*p:])
				}
			}
		}
		off += ci
	}
}
