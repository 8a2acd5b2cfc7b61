package autodiff

import "github.com/fasd-db/fasd/fasd/tensor"

// Packed symmetric channel stacks. A function applied entrywise to the pairs
// of symmetric matrices gives the same value at (i,j) and (j,i), so it needs
// to run on the upper triangle (with the diagonal) only: N(N+1)/2 instead of
// N² pairs. PackSym and UnpackSym move between the two layouts; pair p of a
// packed matrix enumerates (i,j), i ≤ j, row by row:
// p(i,j) = i·N − i(i−1)/2 + (j − i).

// SymPairs returns N(N+1)/2, the number of packed pairs of an N×N matrix.
func SymPairs(n int) int { return n * (n + 1) / 2 }

// PackSym concatenates channel stacks along dimension 1, like ConcatChan
// (inputs (B, C_i, N, N), or (B, N, N) counted as one channel), and packs the
// symmetric part of every matrix X: out[b, c, p(i,j)] = ½(X_ij + X_ji) for
// i < j and X_ii on the diagonal. The result is (B, ΣC_i, N(N+1)/2). For a
// symmetric X the packed values are X's own entries, bit for bit (no
// rounding); an input an op made exactly symmetric (the output of
// Attention, UnpackSym, or MaskPairs of one) is packed by copying its
// upper triangle. The gradient is split evenly between X_ij and X_ji, which for
// symmetric inputs is exactly the gradient the unpacked computation would
// produce.
func (t *Tape[T]) PackSym(xs ...*Var[T]) *Var[T] {
	if !(len(xs) > 0) {
		panicShape("PackSym: no inputs")
	}
	_, nn := squareMats(xs[0].Value.Shape, "PackSym")
	bn := xs[0].Value.Shape.Dim(0)
	total := 0
	req := false
	for _, x := range xs {
		s := x.Value.Shape
		_, n2 := squareMats(s, "PackSym")
		if !(n2 == nn && s.Dim(0) == bn && (s.Rank() == 3 || s.Rank() == 4)) {
			panicShape("PackSym: %v with %v", s, xs[0].Value.Shape)
		}
		total += chanCount(s)
		req = req || x.req
	}
	np := SymPairs(nn)
	out := t.newVar(tensor.S(bn, total, np), req)
	p2 := nn * nn
	off := 0
	for _, x := range xs {
		ci := chanCount(x.Value.Shape)
		for bi := 0; bi < bn; bi++ {
			for c := 0; c < ci; c++ {
				src := x.Value.Data[(bi*ci+c)*p2 : (bi*ci+c+1)*p2]
				dst := out.Value.Data[(bi*total+off+c)*np : (bi*total+off+c+1)*np]
				if x.sym {
					packUpper(dst, src, nn)
				} else {
					packSym(dst, src, nn)
				}
			}
		}
		off += ci
	}
	n := t.push(opPackSym)
	n.out = out
	n.ins = append(n.ins, xs...)
	n.i[0], n.i[1], n.i[2] = bn, total, nn
	return out
}

// chanCount is the number of channels of a (B, C, N, N) or (B, N, N) stack.
func chanCount(s tensor.Shape) int {
	if s.Rank() == 4 {
		return s.Dim(1)
	}
	return 1
}

// packUpper is packSym for an exactly symmetric src: ½(X_ij + X_ji) is then
// X_ij itself (barring overflow of the sum, beyond ±MaxFloat/2), so the
// upper triangle is copied row by row.
func packUpper[T Float](dst, src []T, nn int) {
	p := 0
	for i := 0; i < nn; i++ {
		p += copy(dst[p:p+nn-i], src[i*nn+i:(i+1)*nn])
	}
}

func packSym[T Float](dst, src []T, nn int) {
	p := 0
	for i := 0; i < nn; i++ {
		row := src[i*nn : (i+1)*nn]
		d := dst[p : p+nn-i]
		d[0] = row[i]
		for j := i + 1; j < nn; j++ {
			d[j-i] = (row[j] + src[j*nn+i]) * 0.5
		}
		p += nn - i
	}
}

func (t *Tape[T]) bwPackSym(n *node[T]) {
	bn, total, nn := n.i[0], n.i[1], n.i[2]
	np, p2 := SymPairs(nn), nn*nn
	off := 0
	for _, x := range n.ins {
		ci := chanCount(x.Value.Shape)
		if x.req {
			for bi := 0; bi < bn; bi++ {
				for c := 0; c < ci; c++ {
					g := n.out.Grad[(bi*total+off+c)*np : (bi*total+off+c+1)*np]
					gx := x.Grad[(bi*ci+c)*p2 : (bi*ci+c+1)*p2]
					p := 0
					for i := 0; i < nn; i++ {
						gx[i*nn+i] += g[p]
						for j := i + 1; j < nn; j++ {
							h := g[p+j-i] * 0.5
							gx[i*nn+j] += h
							gx[j*nn+i] += h
						}
						p += nn - i
					}
				}
			}
		}
		off += ci
	}
}

// UnpackSym expands packed symmetric matrices x (B, C, N(N+1)/2) to
// (B, C, N, N): out_ij = out_ji = s·x[p(i,j)]. With s = 2 it equals
// Symmetrize(unpacked, 1) of an entrywise result, bit for bit.
func (t *Tape[T]) UnpackSym(x *Var[T], nn int, s T) *Var[T] {
	xs := x.Value.Shape
	np := SymPairs(nn)
	if !(xs.Rank() == 3 && xs.Dim(2) == np) {
		panicShape("UnpackSym: %v is not packed %d×%d matrices", xs, nn, nn)
	}
	bn, c := xs.Dim(0), xs.Dim(1)
	out := t.newVar(tensor.S(bn, c, nn, nn), x.req)
	mats := bn * c
	for m := 0; m < mats; m++ {
		src := x.Value.Data[m*np : (m+1)*np]
		dst := out.Value.Data[m*nn*nn : (m+1)*nn*nn]
		p := 0
		for i := 0; i < nn; i++ {
			for j := i; j < nn; j++ {
				v := s * src[p+j-i]
				dst[i*nn+j] = v
				dst[j*nn+i] = v
			}
			p += nn - i
		}
	}
	out.sym = true
	n := t.push(opUnpackSym)
	n.out, n.a, n.f = out, x, s
	n.i[0], n.i[1] = mats, nn
	return out
}

func (t *Tape[T]) bwUnpackSym(n *node[T]) {
	if !n.a.req {
		return
	}
	mats, nn, s := n.i[0], n.i[1], n.f
	np := SymPairs(nn)
	for m := 0; m < mats; m++ {
		g := n.out.Grad[m*nn*nn : (m+1)*nn*nn]
		gx := n.a.Grad[m*np : (m+1)*np]
		p := 0
		for i := 0; i < nn; i++ {
			gx[p] += s * g[i*nn+i]
			for j := i + 1; j < nn; j++ {
				gx[p+j-i] += s * (g[i*nn+j] + g[j*nn+i])
			}
			p += nn - i
		}
	}
}
