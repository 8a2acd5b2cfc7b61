package fasd

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// NeighborSampler is the only view of the graph the subgraph sampler needs.
//
// SampleNeighbors appends to dst min(k, deg v) distinct neighbours of v,
// drawn uniformly without replacement, in draw order, never v itself, and
// returns the extended slice. Implementations must use the draw algorithm of
// DrawPositions over v's neighbour list sorted ascending, so that every
// implementation (CSRGraph here, the roaring-bitmap index in storage) gives
// the same sample for the same generator state.
type NeighborSampler interface {
	SampleNeighbors(v uint32, k int, rng *rand.Rand, dst []uint32) ([]uint32, error)
}

// NeighborLister is the extra capability the induced-edges option needs.
//
// Neighbors appends the neighbours of v to dst in ascending order, without v
// itself, and returns the extended slice.
type NeighborLister interface {
	Neighbors(v uint32, dst []uint32) ([]uint32, error)
}

// DrawPositions appends to dst m = min(k, deg) distinct positions in
// [0, deg), uniform without replacement, in draw order. It is a partial
// Fisher–Yates shuffle of the virtual array p = [0, 1, …, deg−1]:
//
//	for i := 0; i < m; i++ {
//		j := i + rng.IntN(deg-i) // called even when deg−i = 1
//		swap(p[i], p[j])
//		emit p[i]
//	}
//
// so the generator is consulted exactly m times. Position q stands for the
// q-th smallest neighbour id. Only the swapped slots are remembered, so the
// cost is O(m²) time and O(m) memory whatever deg is. k ≤ 0 or deg ≤ 0 draws
// nothing.
func DrawPositions(deg, k int, rng *rand.Rand, dst []int) []int {
	m := min(k, deg)
	if m <= 0 {
		return dst
	}
	// moved records slots of p that no longer hold their own index; slots
	// below the current i are never read again.
	type slot struct{ pos, val int }
	var stack [16]slot
	moved := stack[:0]
	val := func(p int) int {
		for _, s := range moved {
			if s.pos == p {
				return s.val
			}
		}
		return p
	}
	set := func(p, v int) {
		for i := range moved {
			if moved[i].pos == p {
				moved[i].val = v
				return
			}
		}
		moved = append(moved, slot{p, v})
	}
	for i := range m {
		j := i + rng.IntN(deg-i)
		vi, vj := val(i), val(j)
		set(j, vi)
		dst = append(dst, vj)
	}
	return dst
}

// CSRGraph is an immutable in-memory undirected graph in compressed sparse
// row form, with nodes 0..NumNodes()−1 and sorted, duplicate-free neighbour
// lists without self-loops. It implements NeighborSampler and NeighborLister
// and is safe for concurrent use.
type CSRGraph struct {
	offsets []int    // len NumNodes+1
	adj     []uint32 // neighbours of v are adj[offsets[v]:offsets[v+1]], ascending
}

// NewCSRGraph builds the graph on numNodes nodes from undirected edges given
// as pairs. Both directions are stored, duplicates are merged and self-loops
// are dropped (FASD never stores self-loops). An endpoint ≥ numNodes is an
// error.
func NewCSRGraph(numNodes int, edges [][2]uint32) (*CSRGraph, error) {
	if numNodes < 0 {
		return nil, fmt.Errorf("%w: negative node count %d", ErrInvalidOptions, numNodes)
	}
	deg := make([]int, numNodes+1)
	for _, e := range edges {
		if int64(e[0]) >= int64(numNodes) || int64(e[1]) >= int64(numNodes) {
			return nil, fmt.Errorf("%w: edge (%d,%d) has an endpoint ≥ %d nodes", ErrInvalidOptions, e[0], e[1], numNodes)
		}
		if e[0] == e[1] {
			continue
		}
		deg[e[0]]++
		deg[e[1]]++
	}
	offsets := make([]int, numNodes+1)
	for v := range numNodes {
		offsets[v+1] = offsets[v] + deg[v]
	}
	adj := make([]uint32, offsets[numNodes])
	fill := append([]int(nil), offsets[:numNodes]...)
	for _, e := range edges {
		if e[0] == e[1] {
			continue
		}
		adj[fill[e[0]]] = e[1]
		fill[e[0]]++
		adj[fill[e[1]]] = e[0]
		fill[e[1]]++
	}
	// Sort and deduplicate each list, compacting in place.
	out := 0
	newOff := make([]int, numNodes+1)
	for v := range numNodes {
		list := adj[offsets[v]:offsets[v+1]]
		slices.Sort(list)
		list = slices.Compact(list)
		newOff[v] = out
		out += copy(adj[out:], list)
	}
	newOff[numNodes] = out
	return &CSRGraph{offsets: newOff, adj: adj[:out:out]}, nil
}

// NumNodes returns the number of nodes.
func (g *CSRGraph) NumNodes() int { return len(g.offsets) - 1 }

// NumEdges returns the number of undirected edges.
func (g *CSRGraph) NumEdges() int { return len(g.adj) / 2 }

// Degree returns the degree of v (0 if v is out of range).
func (g *CSRGraph) Degree(v uint32) int {
	if int64(v) >= int64(g.NumNodes()) {
		return 0
	}
	return g.offsets[v+1] - g.offsets[v]
}

func (g *CSRGraph) list(v uint32) ([]uint32, error) {
	if int64(v) >= int64(g.NumNodes()) {
		return nil, fmt.Errorf("%w: node %d out of range [0, %d)", ErrInvalidOptions, v, g.NumNodes())
	}
	return g.adj[g.offsets[v]:g.offsets[v+1]], nil
}

// Neighbors implements NeighborLister.
func (g *CSRGraph) Neighbors(v uint32, dst []uint32) ([]uint32, error) {
	l, err := g.list(v)
	if err != nil {
		return dst, err
	}
	return append(dst, l...), nil
}

// HasEdge reports whether u and v are adjacent.
func (g *CSRGraph) HasEdge(u, v uint32) bool {
	l, err := g.list(u)
	if err != nil {
		return false
	}
	_, ok := slices.BinarySearch(l, v)
	return ok
}

// SampleNeighbors implements NeighborSampler with DrawPositions over the
// ascending neighbour list of v.
func (g *CSRGraph) SampleNeighbors(v uint32, k int, rng *rand.Rand, dst []uint32) ([]uint32, error) {
	l, err := g.list(v)
	if err != nil {
		return dst, err
	}
	m := min(k, len(l))
	if m <= 0 {
		return dst, nil
	}
	var buf [16]int
	pos := DrawPositions(len(l), m, rng, buf[:0])
	for _, p := range pos {
		dst = append(dst, l[p])
	}
	return dst, nil
}
