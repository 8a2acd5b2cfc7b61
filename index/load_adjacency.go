// The edge list of a load as compressed sparse rows.

package index

import (
	"slices"
)

// buildAdjacency turns the edge pairs into sorted, duplicate-free,
// symmetric neighbour lists (CSR).
func (l *loader) buildAdjacency() {
	n := l.table.Rows
	off := make([]int, n+1)
	for _, v := range l.pairs {
		off[v+1]++
	}
	for v := range n {
		off[v+1] += off[v]
	}
	adj := make([]uint32, off[n])
	fill := slices.Clone(off[:n])
	for i := 0; i < len(l.pairs); i += 2 {
		a, b := l.pairs[i], l.pairs[i+1]
		adj[fill[a]] = b
		fill[a]++
		adj[fill[b]] = a
		fill[b]++
	}
	l.pairs = nil
	fill = nil
	out := 0
	for v := range n {
		list := adj[off[v]:off[v+1]]
		slices.Sort(list)
		list = slices.Compact(list)
		off[v] = out
		out += copy(adj[out:], list)
	}
	off[n] = out
	l.off, l.adj = off, adj[:out]
	rep := &l.report.Edges
	rep.Kept = int64(out / 2)
	rep.Duplicates = rep.Lines - rep.SelfLoops - rep.UnknownEndpoints - int(rep.Kept)
}
