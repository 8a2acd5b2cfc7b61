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
	if cfg.Debias.GuideWeight > 0 && cfg.Debias.GuideNet == GuideLinear {
		return cfg.Debias.GuideRounds
	}
	return 0
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

// trainLinearGuides fits the linear guides on the distinct nodes of v with a
// known sensitive value (features as in v), or on an evenly spaced sample of
// guideMaxNodes of them. It is deterministic (zero initialisation, full
// batches).
func trainLinearGuides(ctx context.Context, v *view, d, rounds int) ([]*nn.Param[float32], error) {
	return trainLinearGuidesAtMost(ctx, v, d, rounds, guideMaxNodes)
}

// trainLinearGuidesAtMost is trainLinearGuides with the sample of at most
// maxNodes distinct nodes.
func trainLinearGuidesAtMost(ctx context.Context, v *view, d, rounds, maxNodes int) ([]*nn.Param[float32], error) {
	// The float64 copy of the features is allocated at its final size
	// (maxNodes×D×8 bytes at most: growing it by appending would hold up
	// to twice that).
	total := guideNodes(v.sgs)
	xs := make([]float64, 0, min(total, maxNodes)*d)
	var ss []float64
	seen := map[uint32]bool{}
	q := 0 // distinct nodes seen so far
	var buf []float32
	for i, g := range v.sgs {
		x, err := v.x(i, buf)
		if err != nil {
			return nil, err
		}
		if !v.holds(i) {
			buf = x
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
			ss = append(ss, float64(g.S[u]))
		}
	}
	n := len(ss)
	ps := newGuideParams(rounds, d)
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
	gw := make([]float64, d)
	for r := 0; r < rounds; r++ {
		w := make([]float64, d)
		var b float64
		mw, vw := make([]float64, d), make([]float64, d)
		var mb, vb float64
		const b1, b2 = 0.9, 0.999
		for it := 1; it <= guideIters; it++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			clear(gw)
			var gb float64
			for k := 0; k < n; k++ {
				row := xs[k*d : (k+1)*d]
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
			row := xs[k*d : (k+1)*d]
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
// pairs whose σ(z_ru) is more than tol from ½, z_ru = w_r·x_u + b_r. It
// ignores A (∂L/∂A = 0). It holds scratch: one per engine.
type linearGuide struct {
	w   [][]float64 // w_r, widened once
	b   []float64
	tol float64
	z   []float64 // the logits of one round, per node
}

// newLinearGuide returns the guide over the parameters ps (w_r, b_r per
// round, as newGuideParams lays them out).
func newLinearGuide(ps []*nn.Param[float32], tol float64) *linearGuide {
	g := &linearGuide{tol: tol}
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

func (g *linearGuide) Grad(x, _ []float32, n, d int, gx, ga []float32) (float64, error) {
	clear(gx)
	clear(ga)
	if cap(g.z) < n {
		g.z = make([]float64, n)
	}
	z := g.z[:n]
	var l float64
	for r, w := range g.w {
		linearLogits(z, x, w, g.b[r], d)
		for u, zu := range z {
			e := 1/(1+math.Exp(-zu)) - 0.5
			if math.Abs(e) <= g.tol {
				continue
			}
			l += math.Abs(zu)/2 + math.Log1p(math.Exp(-math.Abs(zu))) - math.Ln2
			out := gx[u*d : (u+1)*d]
			for j := range out {
				out[j] += float32(e * w[j])
			}
		}
	}
	return l, nil
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
