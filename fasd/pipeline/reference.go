package pipeline

import (
	"context"
	"fmt"
	"math"
)

// Reference variants: what a reader holds a fair model against. The
// majority predictor shows whether a "fair" model is only a constant
// (ΔDP = ΔEO = 0 at the majority class's accuracy, AUC 0.5, macro-F1 at
// most 0.5); the MLP shows whether the graph helps at all.

// majority evaluates the constant predictor of the validation labels'
// majority class (class 1 on a tie): P(1) is 1 or 0 for every node.
func majority(ev *evalData) (VariantResult, error) {
	pos := positiveRate(ev.labels, ev.val)
	if math.IsNaN(pos) {
		return VariantResult{}, fmt.Errorf("%w: no validation labels for the majority predictor", ErrInput)
	}
	c := 0.0
	if pos >= 0.5 {
		c = 1
	}
	p1 := make([]float64, ev.numNodes)
	for i := range p1 {
		p1[i] = c
	}
	// A constant has no ranking to recalibrate: it keeps the prior rule's
	// threshold whatever classifier.decision says.
	fixed := *ev
	fixed.dec = DecisionPrior
	sel := newSelector(&fixed, VariantMajority)
	if _, _, err := sel.observe(0, p1); err != nil {
		return VariantResult{}, err
	}
	res, err := sel.result()
	res.ValCurve = nil
	if ev.flip != nil {
		res.Counterfactual = numPtr(0) // a constant never changes
	}
	return res, err
}

// trainMLP trains the baseline's widths without the graph (Â = I) on the
// original features.
func trainMLP(ctx context.Context, cfg *Config, in *Input, train []uint32, ev *evalData, seed uint64, rep *reporter) (VariantResult, error) {
	if in.Graph == nil {
		return VariantResult{}, fmt.Errorf("%w: the MLP baseline needs Input.Graph (its features)", ErrInput)
	}
	return trainFullGraph(ctx, cfg, in, nil, in.Graph.X, ev.flipRows(in.Graph.X, in.D), train, ev, VariantMLP, seed, rep)
}
