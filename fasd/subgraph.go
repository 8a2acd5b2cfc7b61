package fasd

import (
	"errors"
	"fmt"
	"math"

	"github.com/fasd-db/fasd/fasd/attr"
)

// Sentinel errors of the package. Errors returned by fasd wrap one of these
// (check with errors.Is) and add the details.
var (
	// ErrInvalidSubgraph reports a Subgraph that breaks one of its invariants.
	ErrInvalidSubgraph = errors.New("fasd: invalid subgraph")
	// ErrShape reports buffers whose lengths do not match the stated sizes.
	ErrShape = errors.New("fasd: shape mismatch")
	// ErrInvalidOptions reports option values outside their domain.
	ErrInvalidOptions = errors.New("fasd: invalid options")
	// ErrSampler reports a NeighborSampler that broke its contract
	// (returned the node itself, a duplicate, or too many neighbours).
	ErrSampler = errors.New("fasd: neighbour sampler broke its contract")
	// ErrNotSupported reports a graph that lacks a capability an option needs
	// (for example induced edges need a NeighborLister).
	ErrNotSupported = errors.New("fasd: capability not supported")
)

// Split tells which part of the node split a node belongs to; it is
// attr.Split, the type package index stores.
type Split = attr.Split

// The node splits (attr's). SplitNone marks nodes outside train ∪ val ∪
// test.
const (
	SplitNone  = attr.SplitNone
	SplitTrain = attr.SplitTrain
	SplitVal   = attr.SplitVal
	SplitTest  = attr.SplitTest
)

// Subgraph is one sampled subgraph with its node data, the unit FASD works
// on. Local node 0 is the root. All matrices are dense and row-major.
//
// Invariants (checked by Validate):
//   - N = len(Nodes) ≥ 1; the global ids in Nodes are distinct.
//   - len(X) = N·D, len(A) = N·N (or A nil and Adj.N = N: Compact),
//     len(S) = len(Y) = len(Split) = N.
//   - A is exactly symmetric with a zero diagonal; entries are finite edge
//     weights (0 = no edge). Self-loops are never stored.
//   - X is finite.
//   - S and Y are in {−1, 0, 1}; −1 means unknown (S) or unlabelled (Y).
//   - Expanded holds distinct local indices in [0, N).
type Subgraph struct {
	// Nodes maps local index → global node id; Nodes[0] is the root.
	Nodes []uint32
	// D is the number of features per node.
	D int
	// X holds the features, N×D row-major.
	X []float32
	// A holds the weighted adjacency, N×N row-major, or is nil when Adj
	// holds it (Compact).
	A []float32
	// Adj holds the adjacency when A is nil: the same matrix as its
	// non-zero entries, for callers that keep many subgraphs at once
	// (DenseA reads it back).
	Adj SparseAdj
	// S is the sensitive attribute per local node (−1 unknown).
	S []int8
	// Y is the label per local node (−1 unlabelled).
	Y []int8
	// Split is the split of each local node.
	Split []Split
	// Expanded lists, in expansion order, the local indices of the nodes
	// whose neighbour lists the sampler read. The sample depends on the
	// graph only through those lists (and, with induced edges, through the
	// edges among members), which is what incremental maintenance needs.
	Expanded []int32
}

// N returns the number of nodes.
func (g *Subgraph) N() int { return len(g.Nodes) }

// Root returns the global id of the root (local node 0). It panics on an
// empty subgraph.
func (g *Subgraph) Root() uint32 { return g.Nodes[0] }

// Validate checks the invariants listed on Subgraph and reports every
// violation it finds (joined), each wrapping ErrInvalidSubgraph.
func (g *Subgraph) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidSubgraph}, args...)...))
	}
	n := len(g.Nodes)
	if n == 0 {
		bad("no nodes")
		return errors.Join(errs...)
	}
	seen := make(map[uint32]struct{}, n)
	for i, v := range g.Nodes {
		if _, dup := seen[v]; dup {
			bad("global node %d appears twice (local %d)", v, i)
		}
		seen[v] = struct{}{}
	}
	if g.D < 0 {
		bad("negative feature dimension %d", g.D)
	} else if len(g.X) != n*g.D {
		bad("len(X) = %d, want N·D = %d·%d", len(g.X), n, g.D)
	} else {
		for i, v := range g.X {
			if !finite32(v) {
				bad("X[%d,%d] = %v is not finite", i/max(g.D, 1), i%max(g.D, 1), v)
				break
			}
		}
	}
	dense := g.A
	if dense == nil && g.Adj.N == n {
		var err error
		if dense, err = g.DenseA(nil); err != nil {
			bad("compact adjacency: %v", err)
		}
	}
	if len(dense) != n*n {
		bad("len(A) = %d, want N·N = %d", len(g.A), n*n)
	} else {
	adj:
		for i := range n {
			if dense[i*n+i] != 0 {
				bad("A[%d,%d] = %v: diagonal must be 0", i, i, dense[i*n+i])
				break
			}
			for j := i + 1; j < n; j++ {
				a, b := dense[i*n+j], dense[j*n+i]
				if !finite32(a) || !finite32(b) {
					bad("A[%d,%d] is not finite", i, j)
					break adj
				}
				if a != b {
					bad("A not symmetric: A[%d,%d] = %v, A[%d,%d] = %v", i, j, a, j, i, b)
					break adj
				}
			}
		}
	}
	checkTri := func(name string, v []int8) {
		if len(v) != n {
			bad("len(%s) = %d, want N = %d", name, len(v), n)
			return
		}
		for i, x := range v {
			if x < -1 || x > 1 {
				bad("%s[%d] = %d, want −1, 0 or 1", name, i, x)
				return
			}
		}
	}
	checkTri("S", g.S)
	checkTri("Y", g.Y)
	if len(g.Split) != n {
		bad("len(Split) = %d, want N = %d", len(g.Split), n)
	} else {
		for i, s := range g.Split {
			if !s.Valid() {
				bad("Split[%d] = %d is not a valid split", i, s)
				break
			}
		}
	}
	exp := make(map[int32]struct{}, len(g.Expanded))
	for _, e := range g.Expanded {
		if e < 0 || int(e) >= n {
			bad("expanded index %d out of range [0, %d)", e, n)
			continue
		}
		if _, dup := exp[e]; dup {
			bad("expanded index %d listed twice", e)
		}
		exp[e] = struct{}{}
	}
	return errors.Join(errs...)
}

// Clone returns a deep copy of g.
func (g *Subgraph) Clone() *Subgraph {
	return &Subgraph{
		Nodes:    append([]uint32(nil), g.Nodes...),
		D:        g.D,
		X:        append([]float32(nil), g.X...),
		A:        append([]float32(nil), g.A...),
		Adj:      SparseAdj{N: g.Adj.N, Idx: append([]uint32(nil), g.Adj.Idx...), W: append([]float32(nil), g.Adj.W...)},
		S:        append([]int8(nil), g.S...),
		Y:        append([]int8(nil), g.Y...),
		Split:    append([]Split(nil), g.Split...),
		Expanded: append([]int32(nil), g.Expanded...),
	}
}

// NumEdges returns the number of undirected edges (non-zero entries above the
// diagonal) of the adjacency.
func (g *Subgraph) NumEdges() int {
	if g.A == nil && g.Adj.N == g.N() {
		n, c := uint32(g.N()), 0
		for k, p := range g.Adj.Idx {
			if p%n > p/n && (g.Adj.W == nil || g.Adj.W[k] != 0) {
				c++
			}
		}
		return c
	}
	return countEdges(g.A, g.N())
}

// Compact moves the dense adjacency A into Adj and sets A to nil; a
// subgraph already compact is left as it is.
func (g *Subgraph) Compact() {
	if g.A != nil {
		g.Adj = CompactAdj(g.A, g.N())
		g.A = nil
	}
}

// DenseA returns the adjacency, N×N row-major: A itself when the subgraph
// holds it (read only), else buf, resized, with Adj written into it.
func (g *Subgraph) DenseA(buf []float32) ([]float32, error) {
	if g.A != nil {
		return g.A, nil
	}
	n := g.N()
	if g.Adj.N != n {
		return nil, fmt.Errorf("%w: subgraph of %d nodes holds a %d×%d compact adjacency", ErrShape, n, g.Adj.N, g.Adj.N)
	}
	buf = resize(buf, n*n)
	return buf, g.Adj.Dense(buf)
}

func countEdges(a []float32, n int) int {
	c := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			if a[i*n+j] != 0 {
				c++
			}
		}
	}
	return c
}

func finite32(v float32) bool {
	f := float64(v)
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

// resize returns s with length n, reusing its storage when large enough. The
// contents are not cleared.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
