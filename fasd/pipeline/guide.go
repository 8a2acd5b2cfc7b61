package pipeline

import (
	"context"
	"fmt"
	"math"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/nn"
)

// Linear guides (debias.guide_net = "linear").
//
// A frozen GCN g_sen trained on every subgraph largely memorises nodes, so
// pushing its output to chance moves the data in directions a fresh probe
// does not care about (and larger pushes flip the groups). The linear guides
// are instead a short sequence of logistic probes of s on the node features,
// trained the way iterative null-space projection does it: probe r is fitted
// on the features with the directions of probes 1..r−1 already removed, so
// together they cover the linearly readable sensitive information, and each
// is regularised and class-balanced so that its boundary sits between the
// groups rather than on individual nodes. Guidance then pushes every node's
// logit under every probe toward 0 (chance) inside the reverse run. For a
// single probe the fixed point of those steps is the projection of x onto
// the probe's decision hyperplane, x − ((w·x + b)/‖w‖²)·w: exactly the
// component that tells the groups apart is removed and nothing else.

// guideParams returns the parameters of the linear guides: w_r (1×d) and
// b_r (1) for every round, in order.
func newGuideParams(rounds, d int) []*nn.Param[float32] {
	ps := make([]*nn.Param[float32], 0, 2*rounds)
	for r := 0; r < rounds; r++ {
		ps = append(ps, autodiff.NewParam[float32](fmt.Sprintf("guide%d.w", r), 1, d), autodiff.NewParam[float32](fmt.Sprintf("guide%d.b", r), 1))
	}
	return ps
}

// guideRounds is the number of linear guides the config asks for (0 when
// the run uses none).
func guideRounds(cfg *Config) int {
	if cfg.Debias.GuideWeight > 0 && linearGuideNet(cfg.Debias.GuideNet) {
		return cfg.Debias.GuideRounds
	}
	return 0
}

// linearGuideNet says whether guide_net names linear guides (fitted once
// per run and stored in the model bundle).
func linearGuideNet(n GuideNet) bool { return n == GuideLinear || n == GuideLinearAgg }

// guideWidth is the number of inputs of one linear guide of kind net over
// d features: d, or 2d for "linear_agg" ([x_u, m_u]).
func guideWidth(net GuideNet, d int) int {
	if net == GuideLinearAgg {
		return 2 * d
	}
	return d
}

// guideNetOf returns the linear guide kind shared by the configs that ask
// for linear guides (GuideLinear when none does). A run fits one sequence
// of guides for all of them, so two kinds in one run are an error.
func guideNetOf(cfgs ...*Config) (GuideNet, error) {
	net := GuideNet("")
	for _, c := range cfgs {
		if guideRounds(c) == 0 {
			continue
		}
		if net != "" && c.Debias.GuideNet != net {
			return "", fmt.Errorf("%w: debias.guide_net %q and %q in one run: the linear guides are fitted once per run, so its settings must share one kind", ErrConfig, net, c.Debias.GuideNet)
		}
		net = c.Debias.GuideNet
	}
	if net == "" {
		net = GuideLinear
	}
	return net, nil
}

// Logistic-regression settings of the linear guides: full-batch Adam on the
// class-balanced mean BCE plus ½·guideL2·‖w‖².
const (
	guideIters = 300
	guideLR    = 0.05
	guideL2    = 1e-2
)

// guideMaxNodes is the most distinct nodes the linear guides fit on. A
// graph with more nodes of known s gives them an evenly spaced sample of
// this size (in the order the subgraphs first show the nodes), so that the
// fits cost the same on any larger graph: 65,536 rows estimate the
// weights of a logistic probe on D features to well within the spread its
// L2 term allows, and the fit costs 300 full-batch passes over its rows
// per round. A graph with at most this many such nodes fits on all of
// them, as before the cap.
const guideMaxNodes = 1 << 16

// evenlyKept reports whether item q of n (q < n) is in the evenly spaced
// sample of at most k of them: every item when n ≤ k, else exactly k, the
// first one included and any two consecutive ones ⌊n/k⌋ or ⌈n/k⌉ apart.
func evenlyKept(q, n, k int) bool {
	if n <= k {
		return true
	}
	// Item q is kept when some j < k has ⌊j·n/k⌋ = q, i.e. when
	// [q·k/n, (q+1)·k/n) holds an integer.
	return ((q+1)*k+n-1)/n > (q*k+n-1)/n
}

// guideNodes counts the distinct nodes of sgs with a known sensitive
// value: the nodes trainLinearGuides samples its rows from.
func guideNodes(sgs []*fasd.Subgraph) int {
	seen := map[uint32]bool{}
	for _, g := range sgs {
		for u, id := range g.Nodes {
			if g.S[u] >= 0 {
				seen[id] = true
			}
		}
	}
	return len(seen)
}

// trainLinearGuides fits the linear guides of kind net on the distinct
// nodes of v with a known sensitive value (features as in v), or on an
// evenly spaced sample of guideMaxNodes of them. It is deterministic (zero
// initialisation, full batches).
func trainLinearGuides(ctx context.Context, v *view, d, rounds int, net GuideNet) ([]*nn.Param[float32], error) {
	return trainLinearGuidesAtMost(ctx, v, d, rounds, guideMaxNodes, net)
}

// trainLinearGuidesAtMost is trainLinearGuides with the sample of at most
// maxNodes distinct nodes. A node's row is read from the first subgraph
// that shows it: its features, and for "linear_agg" beside them its
// neighbourhood mean in that subgraph (neighbourMean).
func trainLinearGuidesAtMost(ctx context.Context, v *view, d, rounds, maxNodes int, net GuideNet) ([]*nn.Param[float32], error) {
	agg := net == GuideLinearAgg
	dw := guideWidth(net, d)
	// The float64 copy of the rows is allocated at its final size
	// (maxNodes×width×8 bytes at most: growing it by appending would hold
	// up to twice that).
	total := guideNodes(v.sgs)
	xs := make([]float64, 0, min(total, maxNodes)*dw)
	var ss []float64
	seen := map[uint32]bool{}
	q := 0 // distinct nodes seen so far
	var buf, abuf, mbuf []float32
	var deg, mrow []float64
	for i, g := range v.sgs {
		fresh := false
		for u, id := range g.Nodes {
			if g.S[u] >= 0 && !seen[id] {
				fresh = true
				break
			}
		}
		if !fresh {
			continue
		}
		x, err := v.x(i, buf)
		if err != nil {
			return nil, err
		}
		if !v.holds(i) {
			buf = x
		}
		var m []float32
		if agg {
			if abuf, err = v.a(i, abuf); err != nil {
				return nil, err
			}
			mbuf, deg, mrow = neighbourMean(mbuf, deg, mrow, x, abuf, g.N(), d)
			m = mbuf
		}
		for u := 0; u < g.N(); u++ {
			if g.S[u] < 0 || seen[g.Nodes[u]] {
				continue
			}
			seen[g.Nodes[u]] = true
			q++
			if !evenlyKept(q-1, total, maxNodes) {
				continue
			}
			for _, f := range x[u*d : (u+1)*d] {
				xs = append(xs, float64(f))
			}
			if agg {
				for _, f := range m[u*d : (u+1)*d] {
					xs = append(xs, float64(f))
				}
			}
			ss = append(ss, float64(g.S[u]))
		}
	}
	n := len(ss)
	ps := newGuideParams(rounds, dw)
	if n == 0 {
		return ps, nil
	}
	var n1 float64
	for _, s := range ss {
		n1 += s
	}
	// Class-balanced weights: each group carries half of the loss.
	wt := [2]float64{0.5 / math.Max(1, float64(n)-n1), 0.5 / math.Max(1, n1)}
	z := make([]float64, n)
	gw := make([]float64, dw)
	for r := 0; r < rounds; r++ {
		w := make([]float64, dw)
		var b float64
		mw, vw := make([]float64, dw), make([]float64, dw)
		var mb, vb float64
		const b1, b2 = 0.9, 0.999
		for it := 1; it <= guideIters; it++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			clear(gw)
			var gb float64
			for k := 0; k < n; k++ {
				row := xs[k*dw : (k+1)*dw]
				zk := b
				for j, x := range row {
					zk += w[j] * x
				}
				z[k] = zk
				e := (1/(1+math.Exp(-zk)) - ss[k]) * wt[int(ss[k])]
				for j, x := range row {
					gw[j] += e * x
				}
				gb += e
			}
			c1, c2 := 1-math.Pow(b1, float64(it)), 1-math.Pow(b2, float64(it))
			for j := range w {
				g := gw[j] + guideL2*w[j]
				mw[j] = b1*mw[j] + (1-b1)*g
				vw[j] = b2*vw[j] + (1-b2)*g*g
				w[j] -= guideLR * (mw[j] / c1) / (math.Sqrt(vw[j]/c2) + 1e-8)
			}
			mb = b1*mb + (1-b1)*gb
			vb = b2*vb + (1-b2)*gb*gb
			b -= guideLR * (mb / c1) / (math.Sqrt(vb/c2) + 1e-8)
		}
		for j := range w {
			ps[2*r].Value.Data[j] = float32(w[j])
		}
		ps[2*r+1].Value.Data[0] = float32(b)
		// Remove this probe's direction before fitting the next one.
		var ww float64
		for _, x := range w {
			ww += x * x
		}
		if ww == 0 {
			continue
		}
		for k := 0; k < n; k++ {
			row := xs[k*dw : (k+1)*dw]
			zk := b
			for j, x := range row {
				zk += w[j] * x
			}
			for j := range row {
				row[j] -= zk / ww * w[j]
			}
		}
	}
	return ps, nil
}

// linearGuide is fasd.Guide over the linear guides: L = Σ_r Σ_u
// log cosh(z_ru/2) (BCE toward ½ minus its minimum) over the node-probe
// pairs whose σ(z_ru) is more than tol from ½, z_ru = w_r·x_u + b_r, or for
// "linear_agg" z_ru = w_r·[x_u, m_u] + b_r with m_u the neighbourhood mean
// of neighbourMean on the current state. It does not move A (∂L/∂A is
// reported as 0: the step edits features only). It holds scratch: one per
// engine.
type linearGuide struct {
	w   [][]float64 // w_r, widened once
	b   []float64
	tol float64
	net GuideNet
	agg bool
	z   []float64 // the logits of one round, per node
	zm  []float64 // their neighbourhood-mean part (agg)
	c   []float64 // e_u / deg_u per node (agg)
	m   []float32 // the neighbourhood means, n×d (agg)
	deg []float64
	row []float64 // one mean's float64 sums (agg)
}

// newLinearGuide returns the guide of kind net over the parameters ps (w_r,
// b_r per round, as newGuideParams lays them out).
func newLinearGuide(ps []*nn.Param[float32], tol float64, net GuideNet) *linearGuide {
	g := &linearGuide{tol: tol, net: net, agg: net == GuideLinearAgg}
	for r := 0; r+1 < len(ps); r += 2 {
		w := make([]float64, len(ps[r].Value.Data))
		for j, v := range ps[r].Value.Data {
			w[j] = float64(v)
		}
		g.w = append(g.w, w)
		g.b = append(g.b, float64(ps[r+1].Value.Data[0]))
	}
	return g
}

func (g *linearGuide) Grad(x, a []float32, n, d int, gx, ga []float32) (float64, error) {
	clear(gx)
	clear(ga)
	if cap(g.z) < n {
		g.z, g.zm, g.c = make([]float64, n), make([]float64, n), make([]float64, n)
	}
	z, zm, c := g.z[:n], g.zm[:n], g.c[:n]
	for r, w := range g.w {
		if want := guideWidth(g.net, d); len(w) != want {
			return 0, fmt.Errorf("%w: linear guide %d has %d weights for %d features, want %d", ErrModels, r, len(w), d, want)
		}
	}
	if g.agg {
		if len(a) < n*n {
			return 0, fmt.Errorf("%w: linear_agg guide over %d nodes with %d adjacency entries", ErrInput, n, len(a))
		}
		g.m, g.deg, g.row = neighbourMean(g.m, g.deg, g.row, x, a, n, d)
	}
	var l float64
	for r, w := range g.w {
		linearLogits(z, x, w[:d], g.b[r], d)
		if g.agg {
			linearLogits(zm, g.m, w[d:], 0, d)
			for u := range z {
				z[u] += zm[u]
			}
		}
		for u, zu := range z {
			c[u] = 0
			e := 1/(1+math.Exp(-zu)) - 0.5
			if math.Abs(e) <= g.tol {
				continue
			}
			l += math.Abs(zu)/2 + math.Log1p(math.Exp(-math.Abs(zu))) - math.Ln2
			out := gx[u*d : (u+1)*d]
			for j := range out {
				out[j] += float32(e * w[j])
			}
			if g.agg {
				c[u] = e / g.deg[u]
			}
		}
		if !g.agg {
			continue
		}
		// ∂m_u/∂x_v = ã_uv/deg_u with ã = max(A, 0) + I, so node v
		// receives Σ_u c_u·ã_uv times the mean's weights.
		wm := w[d:]
		for v := 0; v < n; v++ {
			k := c[v]
			for u := 0; u < n; u++ {
				if auv := a[u*n+v]; u != v && auv > 0 {
					k += c[u] * float64(auv)
				}
			}
			if k == 0 {
				continue
			}
			out := gx[v*d : (v+1)*d]
			for j := range out {
				out[j] += float32(k * wm[j])
			}
		}
	}
	return l, nil
}

// neighbourMean sets m_u = (x_u + Σ_v ã_uv·x_v)/deg_u for every node u of
// an n-node state, ã_uv = max(A_uv, 0) off the diagonal, deg_u = 1 +
// Σ_v ã_uv, summed in float64 in the order of v: the mean of a node's own
// and its neighbours' features, weighted by the (non-negative) edge
// weights, which is what a GCN layer's aggregation reads; a node without
// neighbours keeps its own features. It returns m (n×d), deg (n) and the
// scratch row (d), reusing the buffers given.
func neighbourMean(m []float32, deg, row []float64, x, a []float32, n, d int) ([]float32, []float64, []float64) {
	m = resizeF(m, n*d)
	if cap(deg) < n {
		deg = make([]float64, n)
	}
	deg = deg[:n]
	if cap(row) < d {
		row = make([]float64, d)
	}
	row = row[:d]
	for u := 0; u < n; u++ {
		for j, v := range x[u*d : (u+1)*d] {
			row[j] = float64(v)
		}
		k := 1.0
		for v := 0; v < n; v++ {
			auv := a[u*n+v]
			if v == u || !(auv > 0) {
				continue
			}
			k += float64(auv)
			w := float64(auv)
			for j, xv := range x[v*d : (v+1)*d] {
				row[j] += w * float64(xv)
			}
		}
		deg[u] = k
		for j, s := range row {
			m[u*d+j] = float32(s / k)
		}
	}
	return m, deg, row
}

// linearLogits sets z[u] = b + Σ_j w[j]·x[u·d+j], summed in float64 in the
// order of j. Four rows run side by side (four independent sums, each in
// that order), which hides the latency of the additions.
func linearLogits(z []float64, x []float32, w []float64, b float64, d int) {
	w = w[:d]
	u := 0
	for ; u+4 <= len(z); u += 4 {
		x0, x1, x2, x3 := x[u*d:(u+1)*d], x[(u+1)*d:(u+2)*d], x[(u+2)*d:(u+3)*d], x[(u+3)*d:(u+4)*d]
		z0, z1, z2, z3 := b, b, b, b
		for j, wj := range w {
			z0 += wj * float64(x0[j])
			z1 += wj * float64(x1[j])
			z2 += wj * float64(x2[j])
			z3 += wj * float64(x3[j])
		}
		z[u], z[u+1], z[u+2], z[u+3] = z0, z1, z2, z3
	}
	for ; u < len(z); u++ {
		zu := b
		for j, v := range x[u*d : (u+1)*d] {
			zu += w[j] * float64(v)
		}
		z[u] = zu
	}
}

var _ fasd.Guide = (*linearGuide)(nil)
