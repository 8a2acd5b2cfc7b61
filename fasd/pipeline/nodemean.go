package pipeline

import (
	"context"
	"fmt"
	"math"
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

// nodePropFeatures returns, for every node, the mean over the subgraphs of
// v that contain it of the node's rows of [X, ÂX, Â²X] (n×3d, row-major),
// where X and A are the subgraph's features and adjacency in v and Â is
// the GCN normalisation of A (autodiff's GCNNorm: diagonal 1, degrees
// clamped at 1). A node in none keeps [x, x, x] with x its row of base
// (n×d). This is the input of VariantFASDProp (v debiased) and VariantProp
// (v original): the propagated features of a simplified GCN (SGC, SIGN),
// computed inside each subgraph and averaged per node, so that a
// classifier on them sees the neighbourhood through the subgraphs that
// contain the node. Sums run in float64 in subgraph order.
//
// With rootOnly set, a node that roots a subgraph of v takes its rows from
// that subgraph alone (ShaDow-GNN's readout: its own, most complete view
// of its neighbourhood); other nodes keep the mean.
func nodePropFeatures(ctx context.Context, v *view, n int, base []float32, rootOnly bool) ([]float32, error) {
	d := v.d
	if len(base) != n*d {
		return nil, fmt.Errorf("%w: node features |X|=%d, want %d·%d", ErrInput, len(base), n, d)
	}
	w := 3 * d
	sum := make([]float64, n*w)
	cnt := make([]int32, n)
	var rooted []bool
	if rootOnly {
		rooted = make([]bool, n)
		for _, g := range v.sgs {
			if r := g.Root(); int(r) < n {
				rooted[r] = true
			}
		}
	}
	var buf, abuf []float32
	var r, p1, p2 []float64
	for i, g := range v.sgs {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		x, err := v.x(i, buf)
		if err != nil {
			return nil, err
		}
		if !v.holds(i) {
			buf = x
		}
		nn := g.N()
		a, err := v.a(i, abuf)
		if err != nil {
			return nil, err
		}
		abuf = a
		r = resize64(r, nn)
		for k := 0; k < nn; k++ {
			deg := 1.0
			for j, av := range a[k*nn : (k+1)*nn] {
				if j != k {
					deg += float64(av)
				}
			}
			r[k] = 1 / math.Sqrt(max(deg, 1))
		}
		// ahat(k, j) is Â_kj.
		ahat := func(k, j int) float64 {
			if k == j {
				return r[k] * r[k]
			}
			return r[k] * float64(a[k*nn+j]) * r[j]
		}
		p1 = resize64(p1, nn*d)
		p2 = resize64(p2, nn*d)
		propagate(p1, x, ahat, nn, d)
		propagate(p2, p1, ahat, nn, d)
		for l, u := range g.Nodes {
			if int(u) >= n {
				return nil, fmt.Errorf("%w: subgraph of root %d holds node %d beyond %d nodes", ErrInput, g.Root(), u, n)
			}
			if rootOnly && rooted[u] && u != g.Root() {
				continue
			}
			row := sum[int(u)*w : (int(u)+1)*w]
			for t, xv := range x[l*d : (l+1)*d] {
				row[t] += float64(xv)
			}
			for t, pv := range p1[l*d : (l+1)*d] {
				row[d+t] += pv
			}
			for t, pv := range p2[l*d : (l+1)*d] {
				row[2*d+t] += pv
			}
			cnt[u]++
		}
	}
	out := make([]float32, n*w)
	for u := 0; u < n; u++ {
		if cnt[u] == 0 {
			for k := 0; k < 3; k++ {
				copy(out[u*w+k*d:u*w+(k+1)*d], base[u*d:(u+1)*d])
			}
			continue
		}
		inv := 1 / float64(cnt[u])
		for j := 0; j < w; j++ {
			out[u*w+j] = float32(sum[u*w+j] * inv)
		}
	}
	return out, nil
}

// propagate sets dst (nn×d) to Â·src, with ahat(k, j) = Â_kj, in float64
// summed in j order.
func propagate[T float32 | float64](dst []float64, src []T, ahat func(k, j int) float64, nn, d int) {
	clear(dst)
	for k := 0; k < nn; k++ {
		row := dst[k*d : (k+1)*d]
		for j := 0; j < nn; j++ {
			c := ahat(k, j)
			if c == 0 {
				continue
			}
			for t, v := range src[j*d : (j+1)*d] {
				row[t] += c * float64(v)
			}
		}
	}
}

func resize64(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}

// trainProp trains variant (VariantFASDProp or VariantProp): the
// baseline's architecture without the graph on nodePropFeatures of v.
// With orig set and classifier.fallback on, the same is trained on orig's
// features and served instead when fallBack says so (as for fasd_gcn).
func trainProp(ctx context.Context, cfg *Config, in *Input, v, orig *view, train []uint32, ev *evalData,
	variant Variant, stage Stage, seed uint64, rep *reporter) (VariantResult, error) {
	if in.Graph == nil {
		return VariantResult{}, fmt.Errorf("%w: %s needs Input.Graph", ErrInput, variant)
	}
	rep.begin(stage, cfg.Baseline.Epochs)
	defer rep.end()
	in3 := *in
	in3.D = 3 * in.D
	fit := func(v *view) (VariantResult, error) {
		xp, err := nodePropFeatures(ctx, v, in.NumNodes, in.Graph.X, Readout(cfg.Classifier.Readout) == ReadoutRoot)
		if err != nil {
			return VariantResult{}, fmt.Errorf("%s: %w", variant, err)
		}
		vr, err := trainFullGraph(ctx, cfg, &in3, nil, xp, nil, train, ev, variant, seed, rep)
		if err != nil {
			return VariantResult{}, fmt.Errorf("%s: %w", variant, err)
		}
		return vr, nil
	}
	vr, err := fit(v)
	if err != nil || orig == nil || !cfg.Classifier.Fallback {
		return vr, err
	}
	vo, err := fit(orig)
	if err != nil {
		return VariantResult{}, err
	}
	if fallBack(&vr, &vo) {
		vr, vr.FellBack = vo, true
	}
	return vr, nil
}
