package query

import (
	"context"
	"fmt"
	"math"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/index"
)

// GroupAudit are the metrics of the evaluated nodes of one sensitive group.
type GroupAudit struct {
	N       int     `json:"n"`
	Acc     float64 `json:"acc"`
	PosRate float64 `json:"pos_rate"` // mean ŷ
	TPR     float64 `json:"tpr"`      // mean ŷ over y = 1
}

// Metrics are Acc, ROC AUC, F1 of class 1, macro-F1, ΔDP and ΔEO
// (fractions; NaN when a group or class is empty) of one set of
// predictions. AUC and macro-F1 expose a constant predictor (AUC ½,
// macro-F1 ≤ ½) that Acc, ΔDP and ΔEO alone flatter.
type Metrics struct {
	Acc     float64       `json:"acc"`
	AUC     float64       `json:"auc"`
	F1      float64       `json:"f1"`
	MacroF1 float64       `json:"macro_f1"`
	DP      float64       `json:"delta_dp"`
	EO      float64       `json:"delta_eo"`
	Groups  [2]GroupAudit `json:"groups"`
}

// AuditReport is the fairness audit of the current views.
type AuditReport struct {
	// Set names the evaluated nodes: "test" (the paper's protocol) or
	// "labelled".
	Set string `json:"set"`
	// Nodes is the number evaluated: in the set, labelled, with a known
	// sensitive value and a view. Missing counts those of the set without
	// a view; Stale the evaluated ones whose view is stale.
	Nodes   int `json:"nodes"`
	Missing int `json:"missing"`
	Stale   int `json:"stale"`
	// Fair are the metrics of the served (fair) predictions; Variants
	// those of the model's other variants (for the FASD models
	// "no_diffusion", the w/o-Diffusion classifier) averaged over the same
	// subgraphs, by name.
	Fair         Metrics             `json:"fair"`
	Variants     map[string]*Metrics `json:"variants,omitempty"`
	GraphVersion uint64              `json:"graph_version"`
	Model        string              `json:"model"`
}

// Audit computes the fairness metrics of the current views over the test
// nodes (set "test") or every labelled node (set "labelled") with bitmaps:
// one scan of the node views builds the predicted-positive sets, and every
// count is an intersection with the group, label and set bitmaps of the
// graph. Views are read through one snapshot; nothing is computed.
func (e *Engine) Audit(ctx context.Context, set string) (*AuditReport, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	v, err := e.g.View()
	if err != nil {
		return nil, err
	}
	defer v.Close()
	var target *roaring.Bitmap
	switch set {
	case "", "test":
		set = "test"
		target, err = v.SplitSet(index.SplitTest)
	case "labelled":
		target, err = v.Labelled()
	default:
		return nil, fmt.Errorf("%w: audit set %q (want test or labelled)", ErrInvalid, set)
	}
	if err != nil {
		return nil, err
	}
	var grp, lab [2]*roaring.Bitmap
	for i := range 2 {
		if grp[i], err = v.Group(int8(i)); err != nil {
			return nil, err
		}
		if lab[i], err = v.LabelSet(int8(i)); err != nil {
			return nil, err
		}
	}
	have, posFair := roaring.New(), roaring.New()
	m := e.models()
	others := m.variants[1:]
	// P(1) of every scanned node, per variant (served first), for the AUC.
	scores := make([]map[uint32]float64, 1+len(others))
	for k := range scores {
		scores[k] = map[uint32]float64{}
	}
	pos := make([]*roaring.Bitmap, len(others))
	for k := range pos {
		pos[k] = roaring.New()
	}
	// A view is stale as All marks it: every view while the views are
	// incomplete (an interrupted Materialize), else those of the stale set.
	staleSet := roaring.New()
	for p, err := range e.all(ctx, m) {
		if err != nil {
			return nil, err
		}
		have.Add(p.Node)
		if p.Stale {
			staleSet.Add(p.Node)
		}
		if p.Class == 1 {
			posFair.Add(p.Node)
		}
		scores[0][p.Node] = p.Probs[1]
		for k, name := range others {
			if m.info.ClassOf(p.Variants[name][1]) == 1 {
				pos[k].Add(p.Node)
			}
			scores[k+1][p.Node] = p.Variants[name][1]
		}
	}
	eval := roaring.And(target, roaring.Or(grp[0], grp[1]))
	eval.And(roaring.Or(lab[0], lab[1]))
	rep := &AuditReport{
		Set: set, Missing: int(roaring.AndNot(eval, have).GetCardinality()),
		GraphVersion: v.Version(), Model: m.info.Version,
	}
	eval.And(have)
	rep.Nodes = int(eval.GetCardinality())
	rep.Stale = int(eval.AndCardinality(staleSet))
	if rep.Fair, err = metricsOf(eval, posFair, scores[0], grp, lab); err != nil {
		return nil, err
	}
	for k, name := range others {
		if rep.Variants == nil {
			rep.Variants = map[string]*Metrics{}
		}
		m, err := metricsOf(eval, pos[k], scores[k+1], grp, lab)
		if err != nil {
			return nil, err
		}
		rep.Variants[name] = &m
	}
	return rep, nil
}

// metricsOf computes the metrics of the nodes in eval with predicted
// positives pos and P(1) scores (every node of eval has one).
func metricsOf(eval, pos *roaring.Bitmap, scores map[uint32]float64, grp, lab [2]*roaring.Bitmap) (Metrics, error) {
	ratio := func(a, b uint64) float64 {
		if b == 0 {
			return math.NaN()
		}
		return float64(a) / float64(b)
	}
	// correct = (pos ∩ y1) ∪ (y0 \ pos), within eval.
	correct := roaring.Or(roaring.And(pos, lab[1]), roaring.AndNot(lab[0], pos))
	correct.And(eval)
	m := Metrics{Acc: ratio(correct.GetCardinality(), eval.GetCardinality())}
	for s := range 2 {
		in := roaring.And(eval, grp[s])
		pos1 := roaring.And(in, lab[1])
		m.Groups[s] = GroupAudit{
			N:       int(in.GetCardinality()),
			Acc:     ratio(correct.AndCardinality(in), in.GetCardinality()),
			PosRate: ratio(pos.AndCardinality(in), in.GetCardinality()),
			TPR:     ratio(pos.AndCardinality(pos1), pos1.GetCardinality()),
		}
	}
	m.DP = math.Abs(m.Groups[0].PosRate - m.Groups[1].PosRate)
	m.EO = math.Abs(m.Groups[0].TPR - m.Groups[1].TPR)
	y1, y0 := roaring.And(eval, lab[1]), roaring.And(eval, lab[0])
	tp, fp := pos.AndCardinality(y1), pos.AndCardinality(y0)
	fn, tn := y1.GetCardinality()-tp, y0.GetCardinality()-fp
	m.F1, m.MacroF1 = math.NaN(), math.NaN()
	if !eval.IsEmpty() {
		m.F1 = fasd.F1Score(int(tp), int(fp), int(fn))
		m.MacroF1 = (m.F1 + fasd.F1Score(int(tn), int(fn), int(fp))) / 2
	}
	sc := make([]float64, 0, eval.GetCardinality())
	ys := make([]int8, 0, eval.GetCardinality())
	for it := eval.Iterator(); it.HasNext(); {
		u := it.Next()
		sc = append(sc, scores[u])
		y := int8(0)
		if y1.Contains(u) {
			y = 1
		}
		ys = append(ys, y)
	}
	var err error
	if m.AUC, err = fasd.AUC(sc, ys); err != nil {
		return Metrics{}, fmt.Errorf("query: audit AUC: %w", err)
	}
	return m, nil
}
