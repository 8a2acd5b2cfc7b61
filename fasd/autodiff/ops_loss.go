package autodiff

import (
	"math"

	"github.com/fasd-db/fasd/fasd/tensor"
)

// BCEWithLogits returns Σ_i weight[i]·ℓ(z_i, target[i]) / norm, the binary
// cross-entropy on logits ℓ(z, s) = log(1+e^z) − s·z, as a scalar. z has one
// logit per entry (e.g. (B, N, 1)); weight selects and weighs entries (node
// mask times "s is known"). For g_sen's per-subgraph sum averaged over the
// batch, pass norm = B; for ∇_X/∇_A of the per-subgraph loss, norm = 1.
func (t *Tape[T]) BCEWithLogits(z *Var[T], target, weight []T, norm T) *Var[T] {
	nz := len(z.Value.Data)
	if !(len(target) == nz && len(weight) == nz && norm != 0) {
		panicShape("BCEWithLogits: %d logits, %d targets, %d weights, norm %v", nz, len(target), len(weight), norm)
	}
	out := t.newVar(tensor.Shape{}, z.req)
	var s float64
	for i, v := range z.Value.Data {
		if w := weight[i]; w != 0 {
			s += float64(w) * float64(tensor.Log1pExp(v)-target[i]*v)
		}
	}
	out.Value.Data[0] = T(s / float64(norm))
	n := t.push(opBCE)
	n.out, n.a, n.cst, n.cst2, n.f = out, z, target, weight, norm
	return out
}

func (t *Tape[T]) bwBCE(n *node[T]) {
	if !n.a.req {
		return
	}
	g := n.out.Grad[0] / n.f
	for i, v := range n.a.Value.Data {
		if w := n.cst2[i]; w != 0 {
			n.a.Grad[i] += g * w * (tensor.Sigmoid(v) - n.cst[i])
		}
	}
}

// SoftmaxNLL returns Σ_r weight[r]·(−log softmax(logits_r)[labels[r]]) / norm
// over the rows r of logits (…, K). Rows with weight 0 are skipped (their
// label may be anything, e.g. −1 for unlabelled). For f's loss "mean over
// selected node occurrences", pass weight = 1 on train nodes and norm = their
// count.
func (t *Tape[T]) SoftmaxNLL(logits *Var[T], labels []int32, weight []T, norm T) *Var[T] {
	ls := logits.Value.Shape
	k := ls.Dim(-1)
	rows := ls.Rows()
	if !(len(labels) == rows && len(weight) == rows && norm != 0) {
		panicShape("SoftmaxNLL: logits %v, %d labels, %d weights, norm %v", ls, len(labels), len(weight), norm)
	}
	out := t.newVar(tensor.Shape{}, logits.req)
	prob := t.buf(rows * k)
	var s float64
	for r := 0; r < rows; r++ {
		row, pr := logits.Value.Data[r*k:(r+1)*k], prob[r*k:(r+1)*k]
		m := row[0]
		for _, v := range row {
			m = max(m, v)
		}
		var z T
		for j, v := range row {
			pr[j] = tensor.Exp(v - m)
			z += pr[j]
		}
		for j := range pr {
			pr[j] /= z
		}
		if w := weight[r]; w != 0 {
			y := int(labels[r])
			if !(y >= 0 && y < k) {
				panicShape("SoftmaxNLL: label %d outside [0,%d) on a weighted row", y, k)
			}
			s += float64(w) * (float64(m-row[y]) + math.Log(float64(z)))
		}
	}
	out.Value.Data[0] = T(s / float64(norm))
	n := t.push(opSoftmaxNLL)
	n.out, n.a, n.aux, n.lbl, n.cst, n.f = out, logits, prob, labels, weight, norm
	n.i[0], n.i[1] = rows, k
	return out
}

func (t *Tape[T]) bwSoftmaxNLL(n *node[T]) {
	if !n.a.req {
		return
	}
	rows, k := n.i[0], n.i[1]
	g := n.out.Grad[0] / n.f
	for r := 0; r < rows; r++ {
		w := n.cst[r]
		if w == 0 {
			continue
		}
		ga, pr := n.a.Grad[r*k:(r+1)*k], n.aux[r*k:(r+1)*k]
		for j, p := range pr {
			ga[j] += g * w * p
		}
		ga[n.lbl[r]] -= g * w
	}
}

// SquaredError returns ½·Σ_i (x_i − target_i)² / norm. With norm = B it is the
// score-matching loss of docs/method.md §5 (per-subgraph half sum of squares,
// averaged over the batch); norm = 1 gives the plain half sum.
func (t *Tape[T]) SquaredError(x *Var[T], target []T, norm T) *Var[T] {
	if !(len(target) == len(x.Value.Data) && norm != 0) {
		panicShape("SquaredError: %d values, %d targets, norm %v", len(x.Value.Data), len(target), norm)
	}
	out := t.newVar(tensor.Shape{}, x.req)
	var s float64
	for i, v := range x.Value.Data {
		d := float64(v - target[i])
		s += d * d
	}
	out.Value.Data[0] = T(0.5 * s / float64(norm))
	n := t.push(opSquaredError)
	n.out, n.a, n.cst, n.f = out, x, target, norm
	return out
}

func (t *Tape[T]) bwSquaredError(n *node[T]) {
	if !n.a.req {
		return
	}
	g := n.out.Grad[0] / n.f
	for i, v := range n.a.Value.Data {
		n.a.Grad[i] += g * (v - n.cst[i])
	}
}

// Dot returns Σ_i x_i·w_i for a constant w; with random w it turns any tensor
// into a scalar whose gradient is w (used by gradient checks).
func (t *Tape[T]) Dot(x *Var[T], w []T) *Var[T] {
	if !(len(w) == len(x.Value.Data)) {
		panicShape("Dot: %d values, %d weights", len(x.Value.Data), len(w))
	}
	out := t.newVar(tensor.Shape{}, x.req)
	var s float64
	for i, v := range x.Value.Data {
		s += float64(v) * float64(w[i])
	}
	out.Value.Data[0] = T(s)
	n := t.push(opDot)
	n.out, n.a, n.cst = out, x, w
	return out
}

func (t *Tape[T]) bwDot(n *node[T]) {
	if n.a.req {
		g := n.out.Grad[0]
		for i, w := range n.cst {
			n.a.Grad[i] += g * w
		}
	}
}

// Sum returns the sum of all entries of x.
func (t *Tape[T]) Sum(x *Var[T]) *Var[T] {
	out := t.newVar(tensor.Shape{}, x.req)
	var s float64
	for _, v := range x.Value.Data {
		s += float64(v)
	}
	out.Value.Data[0] = T(s)
	n := t.push(opSum)
	n.out, n.a = out, x
	return out
}

func (t *Tape[T]) bwSum(n *node[T]) {
	if n.a.req {
		g := n.out.Grad[0]
		for i := range n.a.Grad {
			n.a.Grad[i] += g
		}
	}
}
