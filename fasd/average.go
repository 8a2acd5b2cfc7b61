package fasd

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// SubgraphProbs is the classifier's output on one subgraph: class
// probabilities per local node.
type SubgraphProbs struct {
	// Root identifies the subgraph (its root's global id); roots are unique
	// within a set.
	Root uint32
	// Nodes maps local index → global id.
	Nodes []uint32
	// P holds len(Nodes)×C probabilities, row-major.
	P []float32
}

// NodeContribution is one subgraph's class probabilities for one node.
type NodeContribution struct {
	Root uint32
	P    []float32 // C values
}

// AveragePredictions computes, for every global node 0..numNodes−1, the mean
// class probabilities over all subgraphs of sets that contain it (§10). The
// sums run in float64 over the subgraphs in ascending root order, whatever
// the order of sets, and are divided by the count at the end, so the result
// is bit-identical however the work was scheduled, and bit-identical to
// AverageNode on the same contributions.
//
// dst (numNodes×classes) receives the means and counts (numNodes) the number
// of subgraphs containing each node; a node in no subgraph gets NaN means and
// count 0. Duplicate roots, or nodes ≥ numNodes, are errors.
func AveragePredictions(sets []SubgraphProbs, numNodes, classes int, dst []float64, counts []int32) error {
	if classes < 1 || len(dst) != numNodes*classes || len(counts) != numNodes {
		return fmt.Errorf("%w: average into %d means and %d counts for %d nodes × %d classes",
			ErrShape, len(dst), len(counts), numNodes, classes)
	}
	order := make([]int, len(sets))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(sets[a].Root, sets[b].Root) })
	for k := 1; k < len(order); k++ {
		if sets[order[k]].Root == sets[order[k-1]].Root {
			return fmt.Errorf("%w: root %d appears twice", ErrInvalidOptions, sets[order[k]].Root)
		}
	}
	clear(dst)
	clear(counts)
	for _, i := range order {
		sp := &sets[i]
		if len(sp.P) != len(sp.Nodes)*classes {
			return fmt.Errorf("%w: subgraph %d has %d probabilities for %d nodes × %d classes",
				ErrShape, sp.Root, len(sp.P), len(sp.Nodes), classes)
		}
		for l, v := range sp.Nodes {
			if int64(v) >= int64(numNodes) {
				return fmt.Errorf("%w: subgraph %d holds node %d ≥ %d", ErrShape, sp.Root, v, numNodes)
			}
			row := dst[int(v)*classes : (int(v)+1)*classes]
			for c := range row {
				row[c] += float64(sp.P[l*classes+c])
			}
			counts[v]++
		}
	}
	for v, n := range counts {
		row := dst[v*classes : (v+1)*classes]
		for c := range row {
			if n == 0 {
				row[c] = math.NaN()
			} else {
				row[c] /= float64(n)
			}
		}
	}
	return nil
}

// AverageNode computes one node's mean class probabilities from its
// contributions, exactly as AveragePredictions does (float64 sums in
// ascending root order, then one division), so that an incrementally
// refreshed node equals a full rebuild bit for bit. It sorts parts by root in
// place. dst has one entry per class; with no parts it is filled with NaN.
func AverageNode(parts []NodeContribution, dst []float64) error {
	slices.SortFunc(parts, func(a, b NodeContribution) int { return cmp.Compare(a.Root, b.Root) })
	clear(dst)
	for k, p := range parts {
		if k > 0 && p.Root == parts[k-1].Root {
			return fmt.Errorf("%w: root %d appears twice", ErrInvalidOptions, p.Root)
		}
		if len(p.P) != len(dst) {
			return fmt.Errorf("%w: contribution of root %d has %d classes, want %d", ErrShape, p.Root, len(p.P), len(dst))
		}
		for c := range dst {
			dst[c] += float64(p.P[c])
		}
	}
	for c := range dst {
		if len(parts) == 0 {
			dst[c] = math.NaN()
		} else {
			dst[c] /= float64(len(parts))
		}
	}
	return nil
}
