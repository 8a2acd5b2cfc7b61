package pipeline

import (
	"context"
	"math"
	"slices"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/nn"
)

// Counterfactual fairness (NIFTY, Agarwal et al. 2021): where the sensitive
// attribute is also a feature, the share of test nodes whose predicted
// class changes when that feature is flipped on every node at once, the
// model (the selected epoch's weights, the variant's threshold) unchanged.
// For the variants that debias, the flipped features are debiased again
// with the same models and per-root seeds, so the measure covers the whole
// path from input to prediction. Only the feature column is flipped: the
// group labels FASD's fairness terms read (Input.Sens) stay as they are.

// sensFlip swaps the two values of the feature column that encodes the
// sensitive attribute.
type sensFlip struct {
	col    int
	v0, v1 float32 // the column's value on group 0 and on group 1
}

// findSensFeature returns the first feature column that takes one value on
// every node of group 0 and another on every node of group 1 (nodes of
// unknown group are ignored): the sensitive attribute kept as a feature,
// as NIFTY's loaders keep it. x is n×d row-major.
func findSensFeature(x []float32, d int, sens []int8) (sensFlip, bool) {
	if d < 1 || len(x) != len(sens)*d {
		return sensFlip{}, false
	}
	for j := 0; j < d; j++ {
		var seen [2]bool
		var val [2]float32
		ok := true
		for u, s := range sens {
			if s != 0 && s != 1 {
				continue
			}
			x := x[u*d+j]
			if !seen[s] {
				seen[s], val[s] = true, x
			} else if x != val[s] {
				ok = false
				break
			}
		}
		if ok && seen[0] && seen[1] && val[0] != val[1] {
			return sensFlip{col: j, v0: val[0], v1: val[1]}, true
		}
	}
	return sensFlip{}, false
}

// rows returns a copy of x (rows of d features) with the column flipped.
func (f sensFlip) rows(x []float32, d int) []float32 {
	if x == nil {
		return nil
	}
	out := slices.Clone(x)
	for k := f.col; k < len(out); k += d {
		switch out[k] {
		case f.v0:
			out[k] = f.v1
		case f.v1:
			out[k] = f.v0
		}
	}
	return out
}

// view returns the original view v with the column flipped in every
// feature row it holds or reads.
func (f sensFlip) view(v *view) *view {
	c := *v
	c.feat = f.rows(v.feat, v.d)
	if v.xs != nil {
		c.xs = make([][]float32, len(v.xs))
		for i, x := range v.xs {
			c.xs[i] = f.rows(x, v.d)
		}
	}
	return &c
}

// changedShare is the share of nodes whose class at thr differs between
// p1 and p1cf.
func changedShare(p1, p1cf []float64, thr float64, nodes []uint32) float64 {
	if len(nodes) == 0 {
		return math.NaN()
	}
	changed := 0
	for _, u := range nodes {
		if fasd.PredictAt(p1[u], thr) != fasd.PredictAt(p1cf[u], thr) {
			changed++
		}
	}
	return float64(changed) / float64(len(nodes))
}

// subgraphP1 is P(1) per node of the subgraph classifier f on view v,
// averaged over the subgraphs (a fresh slice).
func subgraphP1(ctx context.Context, f *nn.GCNNet[float32], v *view, d, workers int, ev *evalData) ([]float64, error) {
	probs := make([][]float32, len(v.sgs))
	if err := classProbs(ctx, f, v, d, workers, probs); err != nil {
		return nil, err
	}
	s := newSelector(ev, "")
	p1, err := s.averaged(v, probs)
	if err != nil {
		return nil, err
	}
	return slices.Clone(p1), nil
}

// subgraphCounterfactual is the counterfactual share of f between views v
// and vcf at the variant's threshold.
func subgraphCounterfactual(ctx context.Context, f *nn.GCNNet[float32], v, vcf *view, d, workers int, ev *evalData, thr float64) (float64, error) {
	p1, err := subgraphP1(ctx, f, v, d, workers, ev)
	if err != nil {
		return math.NaN(), err
	}
	p1cf, err := subgraphP1(ctx, f, vcf, d, workers, ev)
	if err != nil {
		return math.NaN(), err
	}
	return changedShare(p1, p1cf, thr, ev.test), nil
}

// fullGraphCF evaluates a full-graph model (GCN, MLP) on flipped features:
// a second network over the same edges whose weights are copied from the
// trained one before each evaluation.
type fullGraphCF struct {
	g  *sparseGCN
	p1 []float64
}

// newFullGraphCF returns nil when xcf is nil (no counterfactual asked or
// no sensitive feature).
func newFullGraphCF(in *Input, h, workers int, edges [][2]uint32, xcf []float32) (*fullGraphCF, error) {
	if xcf == nil {
		return nil, nil
	}
	// The initial weights are overwritten before every use; a fixed seed
	// keeps the training's own generator untouched.
	g, err := newSparseGCN(in.NumNodes, in.D, h, workers, edges, xcf, fasd.NewRand(0))
	if err != nil {
		return nil, err
	}
	return &fullGraphCF{g: g, p1: make([]float64, in.NumNodes)}, nil
}

// share is the counterfactual share of the trained network g, whose P(1)
// on the original features is p1, at threshold thr on the test nodes.
func (c *fullGraphCF) share(g *sparseGCN, p1 []float64, thr float64, test []uint32) float64 {
	nn.CopyParams(c.g.params(), g.params())
	if c.g.evalRows == nil {
		c.g.setEval(test)
	}
	c.g.forward(0, nil)
	c.g.eachEvalRow(func(u int) {
		a, b := float64(c.g.z[2*u]), float64(c.g.z[2*u+1])
		c.p1[u] = 1 / (1 + math.Exp(a-b))
	})
	return changedShare(p1, c.p1, thr, test)
}
