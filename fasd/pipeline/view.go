package pipeline

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/fasd-db/fasd/fasd"
)

// view is a set of subgraphs with one choice of features and adjacency per
// subgraph (original or debiased); node attributes come from the subgraph.
// The adjacency is held per subgraph in its compact form (fasd.SparseAdj:
// a 20-node subgraph's 1.6 kB dense matrix in about 150 bytes), read back
// dense with a or scattered into a padded batch with scatterA; every read
// gives the bits of the dense matrix it was made from. The features of
// subgraph i are xs[i] when the view holds them in memory, else the rows
// of the node-feature matrix feat picked by the subgraph's node ids (the
// original view of an Input with Features), else the view's spill
// (debiased features written to Options.Scratch). Every read path gives
// the same bits.
type view struct {
	sgs  []*fasd.Subgraph
	d    int
	xs   [][]float32 // nil, or nil entries, where feat or sp holds them
	as   []fasd.SparseAdj
	feat []float32
	sp   *spill
}

// originalView is the view of the input subgraphs: their own X where they
// hold it, else the rows of feat (NumNodes×d). A subgraph's adjacency is
// its Adj when it is compact (shared, not copied), else compacted from A.
func originalView(sgs []*fasd.Subgraph, d int, feat []float32) *view {
	v := &view{sgs: sgs, d: d, xs: make([][]float32, len(sgs)), as: make([]fasd.SparseAdj, len(sgs)), feat: feat}
	for i, g := range sgs {
		v.xs[i] = g.X
		if g.A != nil {
			v.as[i] = fasd.CompactAdj(g.A, g.N())
		} else {
			v.as[i] = g.Adj
		}
	}
	return v
}

// a returns the adjacency of subgraph i, N×N row-major, in buf (resized).
func (v *view) a(i int, buf []float32) ([]float32, error) {
	n := v.sgs[i].N()
	if v.as[i].N != n {
		return nil, fmt.Errorf("%w: the subgraph of root %d has %d nodes and a %d×%d adjacency", ErrInput, v.sgs[i].Root(), n, v.as[i].N, v.as[i].N)
	}
	buf = resizeF(buf, n*n)
	return buf, v.as[i].Dense(buf)
}

// scatterA writes the adjacency of subgraph i into the top-left block of
// dst, an m×m matrix of zeros (a padded batch's slot).
func (v *view) scatterA(i int, dst []float32, m int) error {
	if n := v.sgs[i].N(); v.as[i].N != n {
		return fmt.Errorf("%w: the subgraph of root %d has %d nodes and a %d×%d adjacency", ErrInput, v.sgs[i].Root(), n, v.as[i].N, v.as[i].N)
	}
	return v.as[i].Scatter(dst, m)
}

// withSubgraphs returns a view of the same features and adjacency with the
// node attributes of sgs (same nodes, in the same order).
func (v *view) withSubgraphs(sgs []*fasd.Subgraph) *view {
	c := *v
	c.sgs = sgs
	return &c
}

// holds says whether the view holds the features of subgraph i in memory.
func (v *view) holds(i int) bool { return v.xs != nil && v.xs[i] != nil }

// x returns the features of subgraph i, N×D row-major: the view's own
// slice when it holds one in memory (read only), else buf, resized and
// filled.
func (v *view) x(i int, buf []float32) ([]float32, error) {
	if v.holds(i) {
		return v.xs[i], nil
	}
	buf = resizeF(buf, v.sgs[i].N()*v.d)
	return buf, v.fillX(i, buf)
}

// fillX writes the features of subgraph i into dst (N×D entries).
func (v *view) fillX(i int, dst []float32) error {
	g := v.sgs[i]
	d := v.d
	switch {
	case v.holds(i):
		copy(dst, v.xs[i])
	case v.sp != nil:
		return v.sp.read(i, dst)
	case v.feat != nil:
		for l, u := range g.Nodes {
			copy(dst[l*d:(l+1)*d], v.feat[int(u)*d:(int(u)+1)*d])
		}
	default:
		return fmt.Errorf("%w: no features for the subgraph of root %d", ErrInput, g.Root())
	}
	return nil
}

// close releases the view's spill, if any; the view must not be read after.
func (v *view) close() error {
	if v == nil || v.sp == nil {
		return nil
	}
	err := v.sp.close()
	v.sp = nil
	return err
}

// Scratch is temporary storage a run writes its debiased features to
// instead of the Go heap (Options.Scratch): every byte range is written
// once (concurrently for distinct ranges) and then read many times,
// concurrently. A file opened for reading and writing qualifies; Close
// releases it (and should remove a file).
type Scratch interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
}

// spill holds the features of a view's subgraphs in a Scratch, as
// little-endian float32, subgraph after subgraph.
type spill struct {
	s   Scratch
	off []int64 // byte offset of subgraph i; off[len] = total
	buf sync.Pool
}

func newSpill(s Scratch, sgs []*fasd.Subgraph, d int) *spill {
	p := &spill{s: s, off: make([]int64, len(sgs)+1)}
	for i, g := range sgs {
		p.off[i+1] = p.off[i] + 4*int64(g.N())*int64(d)
	}
	p.buf.New = func() any { return new([]byte) }
	return p
}

func (p *spill) bytes(n int) *[]byte {
	b := p.buf.Get().(*[]byte)
	if cap(*b) < n {
		*b = make([]byte, n)
	}
	*b = (*b)[:n]
	return b
}

// write stores the features x of subgraph i.
func (p *spill) write(i int, x []float32) error {
	n := int(p.off[i+1] - p.off[i])
	if 4*len(x) != n {
		return fmt.Errorf("spill: subgraph %d has %d features, want %d", i, len(x), n/4)
	}
	b := p.bytes(n)
	defer p.buf.Put(b)
	for k, f := range x {
		binary.LittleEndian.PutUint32((*b)[4*k:], math.Float32bits(f))
	}
	if _, err := p.s.WriteAt(*b, p.off[i]); err != nil {
		return fmt.Errorf("spill: write subgraph %d: %w", i, err)
	}
	return nil
}

// read fills dst with the features of subgraph i.
func (p *spill) read(i int, dst []float32) error {
	n := int(p.off[i+1] - p.off[i])
	if 4*len(dst) != n {
		return fmt.Errorf("spill: subgraph %d has %d features, want %d", i, n/4, len(dst))
	}
	b := p.bytes(n)
	defer p.buf.Put(b)
	if k, err := p.s.ReadAt(*b, p.off[i]); k < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("spill: read subgraph %d: %w", i, err)
	}
	for k := range dst {
		dst[k] = math.Float32frombits(binary.LittleEndian.Uint32((*b)[4*k:]))
	}
	return nil
}

func (p *spill) close() error { return p.s.Close() }
