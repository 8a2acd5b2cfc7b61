package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/nn"
	"github.com/fasd-db/fasd/fasd/pcg"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// sparseGCN is the plain full-graph baseline: a 2-layer GCN
// Z = Â·(dropout(ReLU((Â·X)·W1 + b1))·W2) + b2 with Â = D^{-1/2}(A + I)D^{-1/2}
// in CSR form, so it scales to Pokec-sized graphs. Its backward pass is
// written out by hand (Â is symmetric, so Âᵀ = Â).
//
// Â·X·W1 is computed as (Â·X)·W1 with Â·X formed once (it does not change
// between epochs, and D < h): the first layer then needs no sparse product
// at all, forward or backward (d W1 = (Â·X)ᵀ·dP1), and the epoch's three
// sparse products have width 2; the validation forward and the next
// training forward share P1 and one pass over Â (forwardBoth), so an
// epoch reads Â twice; once the training rows are declared (setTrain) the
// training product covers those rows alone and Â·dZ the non-zeros in their
// columns. The hidden layer's row passes are tensor.ReLUDropDot2 and
// tensor.ReLUDropBack. Row-wise passes run on g.workers
// goroutines over fixed blocks of rows; every output row is computed by
// one goroutine in the same order whatever the worker count, and the
// reductions over rows (the weight gradients) run on one goroutine, so the
// result does not depend on the worker count.
type sparseGCN struct {
	n, d, h int
	workers int
	rowPtr  []int32
	col     []uint32
	val     []float32
	ax      []float32 // Â·X, n×d
	w1, b1  *autodiff.Param[float32]
	w2, b2  *autodiff.Param[float32]
	// forward intermediates: H1 (n×h, training forward only), the
	// dropout mask (one bit per entry of H1, set = kept) and the scale of
	// kept entries
	h1, h1w2, z []float32
	keep        []uint64 // (h+63)/64 words per row
	// forwardBoth's validation outputs (allocated on its first call)
	h1w2v, zv []float32
	scale     float32
	w2c       []float32 // W2's two columns, one after the other
	// scratch: one gcnBlock×h block per worker (P1, then dP1 in backward);
	// part holds each block's weight gradients
	blk [][]float32
	ws  []tensor.GemmWorkspace // one per worker
	// the training rows (setTrain): a training forward computes Z on
	// them alone (the loss reads nothing else), and backward forms
	// dQ = Â·dZ from the non-zeros of Â in their columns (tPtr, tCol,
	// tVal, in CSR order), the only ones dZ does not zero
	train, trainRows []uint32
	tPtr             []int32
	tCol             []uint32
	tVal             []float32
	// evalRows (setEval, sorted) are the rows an evaluation forward
	// computes Z on; nil: every row
	evalRows     []uint32
	draws        [][]uint64 // dropMask's draws, one buffer per worker
	dz, dq, part []float32
}

// gcnBlock is the number of rows of one parallel block.
const gcnBlock = 512

func newSparseGCN(n, d, h, workers int, edges [][2]uint32, x []float32, rng *rand.Rand) (*sparseGCN, error) {
	if len(x) != n*d {
		return nil, fmt.Errorf("%w: baseline features |X|=%d, want %d·%d", ErrInput, len(x), n, d)
	}
	deg := make([]int32, n)
	for _, e := range edges {
		if int(e[0]) >= n || int(e[1]) >= n {
			return nil, fmt.Errorf("%w: baseline edge (%d, %d) beyond %d nodes", ErrInput, e[0], e[1], n)
		}
		if e[0] != e[1] {
			deg[e[0]]++
			deg[e[1]]++
		}
	}
	g := &sparseGCN{n: n, d: d, h: h, workers: max(1, workers), rowPtr: make([]int32, n+1)}
	for v := 0; v < n; v++ {
		g.rowPtr[v+1] = g.rowPtr[v] + deg[v] + 1
	}
	g.col = make([]uint32, g.rowPtr[n])
	g.val = make([]float32, g.rowPtr[n])
	fill := make([]int32, n)
	copy(fill, g.rowPtr[:n])
	put := func(u, v uint32) {
		g.col[fill[u]] = v
		fill[u]++
	}
	for v := 0; v < n; v++ {
		put(uint32(v), uint32(v))
	}
	for _, e := range edges {
		if e[0] != e[1] {
			put(e[0], e[1])
			put(e[1], e[0])
		}
	}
	// The weights and Â·X row by row, on the workers (each row's value
	// does not depend on how the rows are shared out).
	g.rows(func(_, lo, hi int) {
		for u := lo; u < hi; u++ {
			du := 1 / math.Sqrt(float64(deg[u]+1))
			for k := g.rowPtr[u]; k < g.rowPtr[u+1]; k++ {
				g.val[k] = float32(du / math.Sqrt(float64(deg[g.col[k]]+1)))
			}
		}
	})
	glorot := func(p *autodiff.Param[float32], in, out int) {
		b := math.Sqrt(6 / float64(in+out))
		for i := range p.Value.Data {
			p.Value.Data[i] = float32((2*rng.Float64() - 1) * b)
		}
	}
	g.w1, g.b1 = autodiff.NewParam[float32]("gcn.w1", d, h), autodiff.NewParam[float32]("gcn.b1", h)
	g.w2, g.b2 = autodiff.NewParam[float32]("gcn.w2", h, 2), autodiff.NewParam[float32]("gcn.b2", 2)
	glorot(g.w1, d, h)
	glorot(g.w2, h, 2)
	g.ax = make([]float32, n*d)
	g.prop(x, d, nil, g.ax)
	g.h1, g.keep, g.w2c = make([]float32, n*h), make([]uint64, n*((h+63)/64)), make([]float32, 2*h)
	g.h1w2, g.z, g.dz, g.dq = make([]float32, n*2), make([]float32, n*2), make([]float32, n*2), make([]float32, n*2)
	g.part = make([]float32, (n+gcnBlock-1)/gcnBlock*(d*h+3*h))
	for _, p := range g.params() {
		p.Grad = make([]float32, len(p.Value.Data))
	}
	return g, nil
}

func (g *sparseGCN) params() []*autodiff.Param[float32] {
	return []*autodiff.Param[float32]{g.w1, g.b1, g.w2, g.b2}
}

// rows runs fn over the rows [0, n) in blocks of gcnBlock rows on
// g.workers goroutines (blocks taken in turn, w, w+workers, …); w is the
// worker, for its scratch block g.blk[w].
func (g *sparseGCN) rows(fn func(w, lo, hi int)) { g.rowsN(g.n, fn) }

// rowsN is rows over [0, n).
func (g *sparseGCN) rowsN(n int, fn func(w, lo, hi int)) {
	blocks := (n + gcnBlock - 1) / gcnBlock
	workers := max(1, min(g.workers, blocks))
	for len(g.blk) < workers {
		g.blk = append(g.blk, make([]float32, gcnBlock*g.h))
	}
	if len(g.ws) < workers {
		g.ws = append(g.ws, make([]tensor.GemmWorkspace, workers-len(g.ws))...)
	}
	run := func(w int) {
		for b := w; b < blocks; b += workers {
			fn(w, b*gcnBlock, min(n, (b+1)*gcnBlock))
		}
	}
	if workers == 1 {
		run(0)
		return
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(w)
		}()
	}
	run(0)
	wg.Wait()
}

// prop computes dst = Â·src + bias for an n×c matrix src (bias may be nil).
func (g *sparseGCN) prop(src []float32, c int, bias []float32, dst []float32) {
	if c == 2 {
		g.prop2(src, bias, dst)
		return
	}
	g.rows(func(_, lo, hi int) {
		for u := lo; u < hi; u++ {
			row := dst[u*c : (u+1)*c]
			if bias != nil {
				copy(row, bias)
			} else {
				clear(row)
			}
			for k := g.rowPtr[u]; k < g.rowPtr[u+1]; k++ {
				w := g.val[k]
				s := src[int(g.col[k])*c : int(g.col[k]+1)*c]
				for j := range row {
					row[j] += w * s[j]
				}
			}
		}
	})
}

// prop2 is prop for c = 2 with the rows kept in registers (the same
// operations in the same order). Two rows are summed side by side, four
// independent chains of additions instead of two, each row still in its
// own order.
func (g *sparseGCN) prop2(src, bias, dst []float32) {
	g.prop2csr(g.rowPtr, g.col, g.val, src, bias, dst)
}

// prop2csr is prop2 for the matrix (rowPtr, col, val) in CSR form.
func (g *sparseGCN) prop2csr(rowPtr []int32, col []uint32, val []float32, src, bias, dst []float32) {
	var b0, b1 float32
	if bias != nil {
		b0, b1 = bias[0], bias[1]
	}
	g.rows(func(_, lo, hi int) {
		u := lo
		for ; u+1 < hi; u += 2 {
			ca := col[rowPtr[u]:rowPtr[u+1]]
			va := val[rowPtr[u]:rowPtr[u+1]]
			cb := col[rowPtr[u+1]:rowPtr[u+2]]
			vb := val[rowPtr[u+1]:rowPtr[u+2]]
			m := min(len(ca), len(cb))
			va, vb = va[:len(ca)], vb[:len(cb)]
			s0, s1, t0, t1 := b0, b1, b0, b1
			for k := 0; k < m; k++ {
				v, w := ca[k], va[k]
				x, y := cb[k], vb[k]
				s0 += w * src[2*v]
				s1 += w * src[2*v+1]
				t0 += y * src[2*x]
				t1 += y * src[2*x+1]
			}
			s0, s1 = dot2(ca[m:], va[m:], src, s0, s1)
			t0, t1 = dot2(cb[m:], vb[m:], src, t0, t1)
			dst[2*u], dst[2*u+1], dst[2*u+2], dst[2*u+3] = s0, s1, t0, t1
		}
		if u < hi {
			dst[2*u], dst[2*u+1] = dot2(col[rowPtr[u]:rowPtr[u+1]], val[rowPtr[u]:rowPtr[u+1]], src, b0, b1)
		}
	})
}

// dot2 continues the sums (s0, s1) over the non-zeros (col, val) of a row
// of Â against the n×2 matrix src, in order.
func dot2(col []uint32, val, src []float32, s0, s1 float32) (float32, float32) {
	val = val[:len(col)]
	for k, v := range col {
		w := val[k]
		s0 += w * src[2*v]
		s1 += w * src[2*v+1]
	}
	return s0, s1
}

// prop2x2 is prop2(srcA, bias, dstA) and prop2(srcB, bias, dstB) in one
// pass over Â, bit for bit.
func (g *sparseGCN) prop2x2(srcA, srcB, bias, dstA, dstB []float32) {
	var b0, b1 float32
	if bias != nil {
		b0, b1 = bias[0], bias[1]
	}
	g.rows(func(_, lo, hi int) {
		for u := lo; u < hi; u++ {
			a0, a1, c0, c1 := b0, b1, b0, b1
			col := g.col[g.rowPtr[u]:g.rowPtr[u+1]]
			val := g.val[g.rowPtr[u]:g.rowPtr[u+1]]
			val = val[:len(col)]
			for k, v := range col {
				w := val[k]
				a0 += w * srcA[2*v]
				a1 += w * srcA[2*v+1]
				c0 += w * srcB[2*v]
				c1 += w * srcB[2*v+1]
			}
			dstA[2*u], dstA[2*u+1] = a0, a1
			dstB[2*u], dstB[2*u+1] = c0, c1
		}
	})
}

// prop2Rows is prop2 on the rows in list alone (the other rows of dst
// are not written), each row bit for bit as prop2 computes it.
func (g *sparseGCN) prop2Rows(list []uint32, src, bias, dst []float32) {
	var b0, b1 float32
	if bias != nil {
		b0, b1 = bias[0], bias[1]
	}
	g.rowsN(len(list), func(_, lo, hi int) {
		for _, u := range list[lo:hi] {
			k0, k1 := g.rowPtr[u], g.rowPtr[u+1]
			dst[2*u], dst[2*u+1] = dot2(g.col[k0:k1], g.val[k0:k1], src, b0, b1)
		}
	})
}

// setTrain declares the training rows that backward will be given (the
// same slice), so that a training forward computes Z on them alone and
// backward reads only the non-zeros of Â in their columns. The results
// are those of the full products bit for bit: every other entry of dZ is
// +0, and a sum that starts at +0 is not changed by adding +0 products.
func (g *sparseGCN) setTrain(train []uint32) {
	in := make([]bool, g.n)
	for _, u := range train {
		in[u] = true
	}
	g.train = train
	g.trainRows = g.trainRows[:0]
	for u := range g.n {
		if in[u] {
			g.trainRows = append(g.trainRows, uint32(u))
		}
	}
	g.tPtr = make([]int32, g.n+1)
	g.tCol, g.tVal = g.tCol[:0], g.tVal[:0]
	for u := range g.n {
		for k := g.rowPtr[u]; k < g.rowPtr[u+1]; k++ {
			if in[g.col[k]] {
				g.tCol = append(g.tCol, g.col[k])
				g.tVal = append(g.tVal, g.val[k])
			}
		}
		g.tPtr[u+1] = int32(len(g.tCol))
	}
}

// setEval declares the rows whose logits an evaluation forward must
// compute (forward with src == nil, and the validation half of
// forwardBoth): the other rows of z (zv) are then left as they were. Each
// computed row is the full product's bit for bit (prop2Rows). rows may
// repeat and come in any order; nil (or every row) restores the full pass.
func (g *sparseGCN) setEval(rows []uint32) {
	if rows == nil {
		g.evalRows = nil
		return
	}
	in := make([]bool, g.n)
	for _, u := range rows {
		in[u] = true
	}
	g.evalRows = g.evalRows[:0]
	for u := range g.n {
		if in[u] {
			g.evalRows = append(g.evalRows, uint32(u))
		}
	}
	if len(g.evalRows) == g.n {
		g.evalRows = nil
	}
}

// trainSet reports whether train is the slice setTrain was given.
func (g *sparseGCN) trainSet(train []uint32) bool {
	return g.tPtr != nil && len(train) == len(g.train) && (len(train) == 0 || &train[0] == &g.train[0])
}

// forward fills z (n×2 logits). With src != nil dropout p is applied to H1,
// with draws from src, and H1 and the mask are kept for backward; with src
// == nil (validation) nothing of the hidden layer is stored. P1 = (Â·X)·W1 +
// b1 lives only in the worker's block.
func (g *sparseGCN) forward(p float64, src *rand.PCG) {
	g.pass(p, src, src != nil, src == nil)
}

// forwardBoth is forward(0, nil) into zv followed by forward(p, src) into
// z, bit for bit, in one pass: both start from the same P1 (dropout acts on
// ReLU(P1)), so the validation of an epoch's new weights and the training
// forward of the next epoch share the product (Â·X)·W1 and the sparse
// pass. The draws from src are those forward(p, src) takes.
func (g *sparseGCN) forwardBoth(p float64, src *rand.PCG) {
	g.pass(p, src, true, true)
}

// pass is forward (train or eval) and forwardBoth (both): train writes H1,
// H1·W2 and z from the dropout mask drawn from src; eval writes
// ReLU(P1)·W2 and the logits into h1w2 and z, or with train into h1w2v and
// zv. Each output is summed in the same order in every mode.
func (g *sparseGCN) pass(p float64, src *rand.PCG, train, eval bool) {
	d, h := g.d, g.h
	w1, b1, w2 := g.w1.Value.Data, g.b1.Value.Data, g.w2.Value.Data
	if train {
		g.dropMask(p, src)
	}
	both := train && eval
	if both && g.zv == nil {
		g.h1w2v, g.zv = make([]float32, g.n*2), make([]float32, g.n*2)
	}
	scale, wpr := g.scale, (h+63)/64
	// W2's columns, contiguous
	w2c := g.w2c
	for j := 0; j < h; j++ {
		w2c[j], w2c[h+j] = w2[2*j], w2[2*j+1]
	}
	g.rows(func(w, lo, hi int) {
		blk := g.blk[w][:(hi-lo)*h]
		for r := 0; r < hi-lo; r++ {
			copy(blk[r*h:(r+1)*h], b1)
		}
		tensor.GemmWith(&g.ws[w], false, false, hi-lo, h, d, 1, g.ax[lo*d:hi*d], d, w1, h, 1, blk, h)
		if both {
			tensor.ReLUDropDot2(blk, g.h1[lo*h:hi*h], g.keep[lo*wpr:hi*wpr], w2c, scale, hi-lo,
				g.h1w2[2*lo:2*hi], g.h1w2v[2*lo:2*hi])
			return
		}
		for u := lo; u < hi; u++ {
			p1 := blk[(u-lo)*h : (u-lo+1)*h]
			c0, c1 := w2c[:len(p1)], w2c[h:h+len(p1)]
			var s0, s1 float32
			// Branch-free ReLU and mask (the signs are random): relu(v)
			// keeps v's bits when its sign bit is clear; adding the +0 of a
			// negative v changes no sum.
			if train {
				h1 := g.h1[u*h : u*h+len(p1)]
				keep := g.keep[u*wpr : (u+1)*wpr]
				for j, v := range p1 {
					b := math.Float32bits(v)
					m := uint32(int32(^b)>>31) & -uint32(keep[j>>6]>>(j&63)&1)
					r := math.Float32frombits(b&m) * scale
					h1[j] = r
					s0 += r * c0[j]
					s1 += r * c1[j]
				}
			} else {
				for j, v := range p1 {
					b := math.Float32bits(v)
					r := math.Float32frombits(b & uint32(int32(^b)>>31))
					s0 += r * c0[j]
					s1 += r * c1[j]
				}
			}
			g.h1w2[2*u], g.h1w2[2*u+1] = s0, s1
		}
	})
	b2 := g.b2.Value.Data
	switch {
	case train && g.tPtr != nil: // Z on the training rows alone (setTrain)
		g.prop2Rows(g.trainRows, g.h1w2, b2, g.z)
		if both {
			g.propEval(g.h1w2v, b2, g.zv)
		}
	case both && g.evalRows != nil:
		g.prop2(g.h1w2, b2, g.z)
		g.prop2Rows(g.evalRows, g.h1w2v, b2, g.zv)
	case both:
		g.prop2x2(g.h1w2, g.h1w2v, b2, g.z, g.zv)
	case eval:
		g.propEval(g.h1w2, b2, g.z)
	default:
		g.prop2(g.h1w2, b2, g.z)
	}
}

// propEval is the evaluation forward's last product: dst = Â·src + bias on
// the rows setEval declared (every row when it declared none).
func (g *sparseGCN) propEval(src, bias, dst []float32) {
	if g.evalRows == nil {
		g.prop2(src, bias, dst)
		return
	}
	g.prop2Rows(g.evalRows, src, bias, dst)
}

// eachEvalRow calls fn for every row an evaluation forward computes
// (setEval), in increasing order.
func (g *sparseGCN) eachEvalRow(fn func(u int)) {
	if g.evalRows == nil {
		for u := range g.n {
			fn(u)
		}
		return
	}
	for _, u := range g.evalRows {
		fn(int(u))
	}
}

// dropDrawBlock is about how many draws dropMask makes per pcg.Fill call
// (whole rows; at least one).
const dropDrawBlock = 1024

// dropMask draws the dropout mask (dropped with probability p, kept
// entries scaled by 1/(1−p)), one draw of src per entry of H1 in row-major
// order, and leaves src n·h draws on. rand.New(src).Float64() < p is
// decided on the 53-bit integer Float64 would divide by 2^53, the same
// draws and the same decisions without the conversion. The row blocks run
// in parallel, each from the state its first row's draws start at
// (pcg.Advance), so the mask is the sequential stream's bit for bit; a
// block's draws come from pcg.Fill in runs of whole rows.
func (g *sparseGCN) dropMask(p float64, src *rand.PCG) {
	if p <= 0 {
		g.scale = 1
		for i := range g.keep {
			g.keep[i] = ^uint64(0)
		}
		return
	}
	g.scale = float32(1 / (1 - p))
	// Float64() = x/2^53 with x = Uint64() mod 2^53, exact; x/2^53 < p ⟺
	// x < p·2^53 ⟺ x < ⌈p·2^53⌉ (x integer, p·2^53 exact in float64).
	thr := uint64(math.Ceil(math.Ldexp(p, 53)))
	h, wpr := g.h, (g.h+63)/64
	s0h, s0l := pcg.Load(src)
	// kept ⟺ x ≥ thr ⟺ thr−1−x wraps (thr ≥ 1, x < 2^53)
	t1 := thr - 1
	for len(g.draws) < max(1, g.workers) {
		g.draws = append(g.draws, make([]uint64, max(1, dropDrawBlock/h)*h))
	}
	g.rows(func(w, first, end int) {
		// The block's draws in runs of whole rows (pcg.Fill: sixteen
		// at once on AVX-512), from the state at its first row.
		rowsPer := max(1, dropDrawBlock/h)
		draws := g.draws[w]
		sh, sl := pcg.Advance(s0h, s0l, uint64(first)*uint64(h))
		for u := first; u < end; u += rowsPer {
			c := min(rowsPer, end-u)
			r := draws[:c*h]
			sh, sl = pcg.Fill(sh, sl, r)
			if h%64 == 0 { // the rows' draws fill whole words
				pcg.KeepMask(g.keep[u*wpr:(u+c)*wpr], r, t1)
				continue
			}
			for i := range c {
				row, keep := r[i*h:(i+1)*h], g.keep[(u+i)*wpr:(u+i+1)*wpr]
				for k := range keep {
					var w uint64
					for b, d := range row[k*64 : min(h, k*64+64)] {
						w |= (t1 - d&(1<<53-1)) >> 63 << b
					}
					keep[k] = w
				}
			}
		}
	})
	eh, el := pcg.Advance(s0h, s0l, uint64(g.n)*uint64(h))
	pcg.Store(src, eh, el)
}

// backward adds the gradients of the mean cross-entropy over the train
// nodes to the parameters' Grad and returns the loss. It reads H1 of the
// last forward with rng != nil: an entry is non-zero exactly where ReLU
// passed it and dropout kept it (kept entries are P1·scale with P1 > 0), so
// dP1 = scale·dH1 there and 0 elsewhere. The weight gradients are summed
// per block of rows into g.part, then over the blocks in order.
func (g *sparseGCN) backward(train []uint32, labels []int8) float64 {
	n, d, h := g.n, g.d, g.h
	clear(g.dz)
	var loss float64
	inv := 1 / float64(len(train))
	for _, u := range train {
		a, b := float64(g.z[2*u]), float64(g.z[2*u+1])
		m := max(a, b)
		ea, eb := math.Exp(a-m), math.Exp(b-m)
		pa, pb := ea/(ea+eb), eb/(ea+eb)
		y := labels[u]
		if y == 1 {
			loss -= math.Log(pb)
			pb--
		} else {
			loss -= math.Log(pa)
			pa--
		}
		g.dz[2*u], g.dz[2*u+1] = float32(pa*inv), float32(pb*inv)
	}
	for _, p := range g.params() {
		if len(p.Grad) != len(p.Value.Data) {
			p.Grad = make([]float32, len(p.Value.Data))
		}
	}
	for u := 0; u < n; u++ {
		g.b2.Grad[0] += g.dz[2*u]
		g.b2.Grad[1] += g.dz[2*u+1]
	}
	if g.trainSet(train) { // dQ = Âᵀ·dZ (Â is symmetric)
		g.prop2csr(g.tPtr, g.tCol, g.tVal, g.dz, nil, g.dq)
	} else {
		g.prop2(g.dz, nil, g.dq)
	}
	scale := g.scale
	stride := d*h + 3*h // one block's dW1, db1, dW2 (its two columns)
	w2c := g.w2c        // W2's columns, as forward left them
	g.rows(func(w, lo, hi int) {
		part := g.part[lo/gcnBlock*stride : (lo/gcnBlock+1)*stride]
		dw1, db1, dw2 := part[:d*h], part[d*h:d*h+h], part[d*h+h:]
		clear(db1)
		clear(dw2)
		blk := g.blk[w][:(hi-lo)*h]
		tensor.ReLUDropBack(g.h1[lo*h:hi*h], g.dq[2*lo:2*hi], w2c, scale, hi-lo, blk, dw2[:h], dw2[h:], db1)
		// d W1 = (ÂX)ᵀ·dP1 over the block
		tensor.GemmWith(&g.ws[w], true, false, d, h, hi-lo, 1, g.ax[lo*d:hi*d], d, blk, h, 0, dw1, h)
	})
	for b := 0; b < len(g.part)/stride; b++ {
		part := g.part[b*stride : (b+1)*stride]
		for i, v := range part[:d*h] {
			g.w1.Grad[i] += v
		}
		for i, v := range part[d*h : d*h+h] {
			g.b1.Grad[i] += v
		}
		for j, v := range part[d*h+h : d*h+2*h] {
			g.w2.Grad[2*j] += v
		}
		for j, v := range part[d*h+2*h:] {
			g.w2.Grad[2*j+1] += v
		}
	}
	return loss * inv
}

// trainBaseline trains the full-graph GCN on the train nodes with the
// baseline schedule and selects the epoch with the best validation accuracy.
func trainBaseline(ctx context.Context, cfg *Config, in *Input, train []uint32, ev *evalData, seed uint64, rep *reporter) (VariantResult, error) {
	if in.Graph == nil {
		return VariantResult{}, fmt.Errorf("%w: the GCN baseline needs Input.Graph", ErrInput)
	}
	return trainFullGraph(ctx, cfg, in, in.Graph.Edges, in.Graph.X, ev.flipRows(in.Graph.X, in.D), train, ev, VariantGCN, seed, rep)
}

// trainFullGraph trains the baseline architecture on n = in.NumNodes nodes
// with features x (n×D) and the given edges (none: Â = I, an MLP of the
// same widths), and selects the epoch with the best validation accuracy.
// With xcf (x with the sensitive feature flipped) it also measures the
// selected epoch's counterfactual share (VariantResult.Counterfactual).
func trainFullGraph(ctx context.Context, cfg *Config, in *Input, edges [][2]uint32, x, xcf []float32, train []uint32, ev *evalData,
	variant Variant, seed uint64, rep *reporter) (VariantResult, error) {
	bc := cfg.Baseline
	src := fasd.NewPCG(seed)
	rng := rand.New(src) // the same stream: initialisation, then dropout
	g, err := newSparseGCN(in.NumNodes, in.D, bc.Hidden, cfg.workerCount(), edges, x, rng)
	if err != nil {
		return VariantResult{}, err
	}
	g.setTrain(train)
	if !ev.keep {
		// Selection reads P(1) on the validation and test nodes alone
		// (the counterfactual share on the test nodes).
		g.setEval(append(slices.Clone(ev.val), ev.test...))
	}
	cf, err := newFullGraphCF(in, bc.Hidden, g.workers, edges, xcf)
	if err != nil {
		return VariantResult{}, err
	}
	opt := nn.NewAdam(g.params(), nn.AdamConfig{LR: bc.LR, WeightDecay: bc.WeightDecay})
	sel := newSelector(ev, variant)
	p1 := make([]float64, in.NumNodes)
	pat := patience{limit: bc.Patience}
	// An epoch is the training forward (dropout), backward, the Adam step
	// and the validation forward at the new weights. The validation
	// forward shares its P1 with the next epoch's training forward
	// (forwardBoth), so epoch ep+1's training forward runs at the end of
	// epoch ep; the dropout draws are the same, in the same order.
	g.forward(bc.Dropout, src)
	for ep := 0; ep < bc.Epochs; ep++ {
		if err := ctx.Err(); err != nil {
			return VariantResult{}, err
		}
		nn.ZeroGrads(g.params())
		loss := g.backward(train, in.Labels)
		opt.Step()
		z := g.z
		if ep+1 < bc.Epochs {
			g.forwardBoth(bc.Dropout, src)
			z = g.zv
		} else {
			g.forward(0, nil)
		}
		g.eachEvalRow(func(u int) {
			a, b := float64(z[2*u]), float64(z[2*u+1])
			p1[u] = 1 / (1 + math.Exp(a-b))
		})
		acc, improved, err := sel.observe(ep, p1)
		if err != nil {
			return VariantResult{}, err
		}
		if improved && cf != nil {
			sel.res.Counterfactual = numPtr(cf.share(g, p1, sel.bestThreshold(), ev.test))
		}
		rep.epoch(ep, loss, acc)
		rep.progress(ep + 1)
		if pat.observe(improved) {
			break
		}
	}
	return sel.result()
}
