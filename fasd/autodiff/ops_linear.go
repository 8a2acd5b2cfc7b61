package autodiff

import "github.com/fasd-db/fasd/fasd/tensor"

// Linear returns x·w + b over the last dimension of x: x is (…, in), w is
// (in, out), b is (out) or nil; the result is (…, out).
func (t *Tape[T]) Linear(x, w, b *Var[T]) *Var[T] {
	xs, ws := x.Value.Shape, w.Value.Shape
	if !(ws.Rank() == 2 && xs.Rank() >= 1 && xs.Dim(-1) == ws.Dim(0)) {
		panicShape("Linear: x %v, w %v", xs, ws)
	}
	in, outD := ws.Dim(0), ws.Dim(1)
	if b != nil {
		if !(b.Value.Shape.Len() == outD) {
			panicShape("Linear: bias %v for out %d", b.Value.Shape, outD)
		}
	}
	rows := xs.Rows()
	out := t.newVar(xs.WithDim(-1, outD), anyReq(x, w, b))
	y := out.Value.Data
	var beta T
	if b != nil {
		bd := b.Value.Data
		for r := 0; r < rows; r++ {
			copy(y[r*outD:(r+1)*outD], bd)
		}
		beta = 1
	}
	t.gemm(false, false, rows, outD, in, 1, x.Value.Data, in, w.Value.Data, outD, beta, y, outD)
	n := t.push(opLinear)
	n.out, n.a, n.b, n.c = out, x, w, b
	n.i[0], n.i[1], n.i[2] = rows, in, outD
	return out
}

func (t *Tape[T]) bwLinear(n *node[T]) {
	x, w, b, gy := n.a, n.b, n.c, n.out.Grad
	rows, in, outD := n.i[0], n.i[1], n.i[2]
	if x.req {
		t.gemm(false, true, rows, in, outD, 1, gy, outD, w.Value.Data, outD, accBeta(x), x.Grad, in)
	}
	if w.req {
		t.gemm(true, false, in, outD, rows, 1, x.Value.Data, in, gy, outD, accBeta(w), w.Grad, outD)
	}
	if b != nil && b.req {
		t.ready(b)
		colSumAdd(b.Grad, gy, rows, outD)
	}
}

// colSumAdd adds the rows of the rows×cols matrix m to dst[:cols], in
// order (tensor.ColSumAcc).
func colSumAdd[T Float](dst, m []T, rows, cols int) {
	tensor.ColSumAcc(dst[:cols], m, rows)
}

// AddBias returns x + b with b (last dimension of x) broadcast over all rows.
func (t *Tape[T]) AddBias(x, b *Var[T]) *Var[T] {
	xs := x.Value.Shape
	cols := xs.Dim(-1)
	if !(b.Value.Shape.Len() == cols) {
		panicShape("AddBias: x %v, b %v", xs, b.Value.Shape)
	}
	out := t.newVar(xs, anyReq(x, b))
	y, xd, bd := out.Value.Data, x.Value.Data, b.Value.Data
	for r := 0; r < xs.Rows(); r++ {
		o := r * cols
		for j := 0; j < cols; j++ {
			y[o+j] = xd[o+j] + bd[j]
		}
	}
	n := t.push(opAddBias)
	n.out, n.a, n.b = out, x, b
	n.i[0], n.i[1] = xs.Rows(), cols
	return out
}

func (t *Tape[T]) bwAddBias(n *node[T]) {
	if n.a.req {
		if first(n.a) {
			copy(n.a.Grad, n.out.Grad)
		} else {
			addTo(n.a.Grad, n.out.Grad)
		}
	}
	if n.b.req {
		t.ready(n.b)
		colSumAdd(n.b.Grad, n.out.Grad, n.i[0], n.i[1])
	}
}

// ChanLinear applies a linear map across the channel dimension of a channel
// stack, independently at every position: x is (B, Cin, …), w is (Cin, Cout),
// b is (Cout) or nil, and the result is (B, Cout, …) with
// out[b,o,p] = Σ_c w[c,o]·x[b,c,p] + b[o]. This is the entrywise edge MLP
// layer of s_φ, kept channel-first so that channel matrices stay contiguous.
func (t *Tape[T]) ChanLinear(x, w, b *Var[T]) *Var[T] {
	xs, ws := x.Value.Shape, w.Value.Shape
	if !(ws.Rank() == 2 && xs.Rank() >= 2 && xs.Dim(1) == ws.Dim(0)) {
		panicShape("ChanLinear: x %v, w %v", xs, ws)
	}
	cin, cout := ws.Dim(0), ws.Dim(1)
	if b != nil {
		if !(b.Value.Shape.Len() == cout) {
			panicShape("ChanLinear: bias %v for %d channels", b.Value.Shape, cout)
		}
	}
	bn := xs.Dim(0)
	p := 0
	if bn*cin > 0 {
		p = xs.Len() / (bn * cin)
	}
	out := t.newVar(xs.WithDim(1, cout), anyReq(x, w, b))
	y, xd, wd := out.Value.Data, x.Value.Data, w.Value.Data
	var beta T
	for bi := 0; bi < bn; bi++ {
		yb := y[bi*cout*p : (bi+1)*cout*p]
		if b != nil {
			for o := 0; o < cout; o++ {
				tensor.Fill(yb[o*p:(o+1)*p], b.Value.Data[o])
			}
			beta = 1
		}
		t.gemm(true, false, cout, p, cin, 1, wd, cout, xd[bi*cin*p:], p, beta, yb, p)
	}
	n := t.push(opChanLinear)
	n.out, n.a, n.b, n.c = out, x, w, b
	n.i[0], n.i[1], n.i[2], n.i[3] = bn, cin, cout, p
	return out
}

func (t *Tape[T]) bwChanLinear(n *node[T]) {
	x, w, b, gy := n.a, n.b, n.c, n.out.Grad
	bn, cin, cout, p := n.i[0], n.i[1], n.i[2], n.i[3]
	var bx T
	if x.req {
		bx = accBeta(x) // the blocks of all bi cover x.Grad
	}
	t.ready(w)
	t.ready(b)
	for bi := 0; bi < bn; bi++ {
		gyb := gy[bi*cout*p : (bi+1)*cout*p]
		if x.req {
			t.gemm(false, false, cin, p, cout, 1, w.Value.Data, cout, gyb, p, bx, x.Grad[bi*cin*p:], p)
		}
		if w.req {
			t.gemm(false, true, cin, cout, p, 1, x.Value.Data[bi*cin*p:], p, gyb, p, 1, w.Grad, cout)
		}
		if b != nil && b.req {
			for o := 0; o < cout; o++ {
				var s T
				for _, v := range gyb[o*p : (o+1)*p] {
					s += v
				}
				b.Grad[o] += s
			}
		}
	}
}

// MatMul returns the batched product a·b of (B, N, K) and (B, K, M) → (B, N, M).
// s_φ uses it for the adjacency power A².
func (t *Tape[T]) MatMul(a, b *Var[T]) *Var[T] {
	as, bs := a.Value.Shape, b.Value.Shape
	if !(as.Rank() == 3 && bs.Rank() == 3 && as.Dim(0) == bs.Dim(0) && as.Dim(2) == bs.Dim(1)) {
		panicShape("MatMul: %v · %v", as, bs)
	}
	bn, nr, k, m := as.Dim(0), as.Dim(1), as.Dim(2), bs.Dim(2)
	out := t.newVar(tensor.S(bn, nr, m), anyReq(a, b))
	for bi := 0; bi < bn; bi++ {
		t.gemm(false, false, nr, m, k, 1, a.Value.Data[bi*nr*k:], k, b.Value.Data[bi*k*m:], m, 0, out.Value.Data[bi*nr*m:], m)
	}
	n := t.push(opMatMul)
	n.out, n.a, n.b = out, a, b
	n.i[0], n.i[1], n.i[2], n.i[3] = bn, nr, k, m
	return out
}

func (t *Tape[T]) bwMatMul(n *node[T]) {
	a, b, g := n.a, n.b, n.out.Grad
	bn, nr, k, m := n.i[0], n.i[1], n.i[2], n.i[3]
	// Block bi of a.Grad is written before block bi of b.Grad, so a == b
	// (first writer a, then b accumulating) stays right.
	var ba, bb T
	if a.req {
		ba = accBeta(a)
	}
	if b.req {
		bb = accBeta(b)
	}
	for bi := 0; bi < bn; bi++ {
		gb := g[bi*nr*m:]
		if a.req {
			t.gemm(false, true, nr, k, m, 1, gb, m, b.Value.Data[bi*k*m:], m, ba, a.Grad[bi*nr*k:], k)
		}
		if b.req {
			t.gemm(true, false, k, m, nr, 1, a.Value.Data[bi*nr*k:], k, gb, m, bb, b.Grad[bi*k*m:], m)
		}
	}
}

// addTo adds src to dst entry by entry (tensor.Acc).
func addTo[T Float](dst, src []T) { tensor.Acc(dst, src) }
