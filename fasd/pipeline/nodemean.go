package pipeline

import (
	"context"
	"fmt"
	"slices"
)

// nodeMeanFeatures returns, for every node, the mean of its feature rows
// over the subgraphs of v that contain it (n×d, row-major), and the number
// of nodes in at least one subgraph. A node in none keeps its row of base
// (n×d). With v the debiased view this is the input of VariantFASDGCN: each
// node's debiased features, averaged over the debiased subgraphs that
// contain it — the per-node counterpart of averaging f's predictions.
// Sums run in float64 in subgraph order, so the result is deterministic.
func nodeMeanFeatures(ctx context.Context, v *view, n int, base []float32) ([]float32, int, error) {
	d := v.d
	if len(base) != n*d {
		return nil, 0, fmt.Errorf("%w: node features |X|=%d, want %d·%d", ErrInput, len(base), n, d)
	}
	sum := make([]float64, n*d)
	cnt := make([]int32, n)
	var buf []float32
	for i, g := range v.sgs {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		x, err := v.x(i, buf)
		if err != nil {
			return nil, 0, err
		}
		if !v.holds(i) {
			buf = x
		}
		for l, u := range g.Nodes {
			if int(u) >= n {
				return nil, 0, fmt.Errorf("%w: subgraph of root %d holds node %d beyond %d nodes", ErrInput, g.Root(), u, n)
			}
			row := sum[int(u)*d : (int(u)+1)*d]
			for j, xv := range x[l*d : (l+1)*d] {
				row[j] += float64(xv)
			}
			cnt[u]++
		}
	}
	out := make([]float32, n*d)
	covered := 0
	for u := 0; u < n; u++ {
		if cnt[u] == 0 {
			copy(out[u*d:(u+1)*d], base[u*d:(u+1)*d])
			continue
		}
		covered++
		inv := 1 / float64(cnt[u])
		for j := 0; j < d; j++ {
			out[u*d+j] = float32(sum[u*d+j] * inv)
		}
	}
	return out, covered, nil
}

// neutralize returns x (n×d) with k times the mean row of each node's
// neighbours in the other sensitive group added to the node's row; nodes
// of unknown group, and neighbours of unknown group, take no part. Sums
// run in float64 in edge order.
func neutralize(x []float32, d int, edges [][2]uint32, sens []int8, k float64) []float32 {
	n := len(x) / d
	sum := make([]float64, n*d)
	cnt := make([]int32, n)
	add := func(u, v uint32) {
		cnt[u]++
		row := sum[int(u)*d : (int(u)+1)*d]
		for j, xv := range x[int(v)*d : (int(v)+1)*d] {
			row[j] += float64(xv)
		}
	}
	for _, e := range edges {
		u, v := e[0], e[1]
		if u == v || int(u) >= n || int(v) >= n || sens[u] < 0 || sens[v] < 0 || sens[u] == sens[v] {
			continue
		}
		add(u, v)
		add(v, u)
	}
	out := slices.Clone(x)
	for u := 0; u < n; u++ {
		if cnt[u] == 0 {
			continue
		}
		w := k / float64(cnt[u])
		for j := 0; j < d; j++ {
			out[u*d+j] = float32(float64(x[u*d+j]) + w*sum[u*d+j])
		}
	}
	return out
}
