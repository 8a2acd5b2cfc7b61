package pipeline

import (
	"context"
	"encoding/json"
	"math"
	"sync"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/nn"
)

// Num is a float64 that encodes NaN and ±Inf as JSON null (and decodes
// null as NaN), so run records with undefined metrics stay valid JSON.
type Num float64

// MarshalJSON implements json.Marshaler.
func (x Num) MarshalJSON() ([]byte, error) {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON implements json.Unmarshaler.
func (x *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = Num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*x = Num(f)
	return nil
}

// Metrics are fasd.Metrics in JSON-safe form (fractions, not ×100).
type Metrics struct {
	N       int         `json:"n"`
	Acc     Num         `json:"acc"`
	AUC     Num         `json:"auc"`
	F1      Num         `json:"f1"`
	MacroF1 Num         `json:"macro_f1"`
	DP      Num         `json:"dp"`
	EO      Num         `json:"eo"`
	Groups  [2]GroupRow `json:"groups"` // s = 0, s = 1
	Flags   uint8       `json:"flags,omitempty"`
}

// GroupRow is fasd.GroupMetrics in JSON-safe form.
type GroupRow struct {
	N       int `json:"n"`
	Pos     int `json:"pos"`
	Acc     Num `json:"acc"`
	PosRate Num `json:"pos_rate"`
	TPR     Num `json:"tpr"`
	FPR     Num `json:"fpr"`
}

func metricsOf(m fasd.Metrics) Metrics {
	out := Metrics{N: m.N, Acc: Num(m.Acc), AUC: Num(m.AUC), F1: Num(m.F1), MacroF1: Num(m.MacroF1),
		DP: Num(m.DP), EO: Num(m.EO), Flags: uint8(m.Flags)}
	for i, g := range m.Groups {
		out.Groups[i] = GroupRow{N: g.N, Pos: g.Pos, Acc: Num(g.Acc), PosRate: Num(g.PosRate), TPR: Num(g.TPR), FPR: Num(g.FPR)}
	}
	return out
}

// VariantResult is the evaluation of one variant in one run: the test
// metrics at the epoch with the best validation accuracy (strict
// improvement, first epoch wins ties).
type VariantResult struct {
	Variant   Variant `json:"variant"`
	BestEpoch int     `json:"best_epoch"`
	ValAcc    Num     `json:"val_acc"`
	// ValAUC is the validation ROC AUC of the selected epoch (null when
	// a validation class is empty).
	ValAUC Num `json:"val_auc"`
	// Val are the selected epoch's metrics on the validation nodes.
	Val Metrics `json:"val"`
	// Arch is the architecture classifier.arch = "auto" chose for f
	// ("gcn" or "root"); absent under the other values.
	Arch string `json:"arch,omitempty"`
	// ArchEvidence is what the choice of Arch read on the validation
	// nodes; nil under the other values of classifier.arch.
	ArchEvidence *ArchEvidence `json:"arch_evidence,omitempty"`
	// FellBack is set on fasd_gcn, fasd_prop (classifier.fallback) and fasd
	// (classifier.fallback_fasd) when the check chose the undebiased model
	// (see ClassifierConfig.Fallback): the result is then that model's
	// (w/o Diffusion's for fasd).
	FellBack bool `json:"fell_back,omitempty"`
	// Threshold is the decision threshold on P(1) (classifier.decision).
	Threshold Num     `json:"threshold"`
	Test      Metrics `json:"test"`
	// ValCurve is the validation accuracy after every epoch (under
	// classifier.schedule = "budget": on the validation sample at every
	// evaluation, and BestEpoch is the best evaluation's index).
	ValCurve []Num `json:"val_curve,omitempty"`
	// FBudget describes f's training under classifier.schedule =
	// "budget" (nil under "epochs" and for the full-graph variants).
	FBudget *FBudgetStats `json:"f_budget,omitempty"`
	// Edits describes the debiased subgraphs against the originals; set
	// for the Options.Retune variants.
	Edits *EditStats `json:"edits,omitempty"`
	// Probe is the fresh-probe score of the variant's training data; set
	// when Options.Probe is on.
	Probe *ProbeScore `json:"probe,omitempty"`
	// Counterfactual is the share of test nodes whose predicted class
	// changes when the sensitive attribute's feature column is flipped on
	// every node (NIFTY's counterfactual fairness; see counterfactual.go);
	// nil (absent) when Options.Counterfactual is off or no feature
	// column encodes the sensitive attribute.
	Counterfactual *Num `json:"counterfactual,omitempty"`
	// Scores is P(1) per node (indexed by node id) at the selected epoch;
	// set when Options.KeepScores is on.
	Scores []float64 `json:"-"`
	// ValScores is P(1) of the validation nodes (in the run's validation
	// order) at the selected epoch, for checks that compare variants on
	// the validation nodes (classifier.fallback_fasd).
	ValScores []float64 `json:"-"`
}

// evalData are the global arrays the evaluation reads.
type evalData struct {
	numNodes  int
	labels    []int8
	sens      []int8
	val, test []uint32
	// thr is the decision threshold on P(1) of the prior rule (0.5 under
	// DecisionHalf); the tuned rules start from it.
	thr float64
	// dec is the decision rule (classifier.decision).
	dec Decision
	// root predicts a root from its own subgraph (ReadoutRoot).
	root bool
	// sel is the model-selection criterion (classifier.select).
	sel Select
	// alpha is classifier.select_alpha (SelectFair).
	alpha float64
	// keep copies the selected epoch's P(1) into VariantResult.Scores.
	keep bool
	// flip is the sensitive feature column to flip for the counterfactual
	// share (nil: not measured).
	flip *sensFlip
}

// numPtr returns a pointer to x.
func numPtr(x float64) *Num {
	n := Num(x)
	return &n
}

// flipRows returns x with the sensitive feature flipped, or nil when the
// counterfactual share is not measured.
func (ev *evalData) flipRows(x []float32, d int) []float32 {
	if ev.flip == nil {
		return nil
	}
	return ev.flip.rows(x, d)
}

// newEvalData gathers the evaluation arrays and fixes the decision
// threshold of cfg's rule from the training and validation labels.
func newEvalData(cfg *Config, in *Input, train, val, test []uint32) *evalData {
	ev := &evalData{numNodes: in.NumNodes, labels: in.Labels, sens: in.Sens, val: val, test: test, thr: 0.5,
		sel: Select(cfg.Classifier.Select), alpha: cfg.Classifier.SelectAlpha, dec: Decision(cfg.Classifier.Decision),
		root: Readout(cfg.Classifier.Readout) == ReadoutRoot}
	if ev.dec != DecisionHalf {
		ev.thr = fasd.ShiftedPriorThreshold(positiveRate(in.Labels, train), len(train), positiveRate(in.Labels, val), len(val))
	}
	return ev
}

// positiveRate is the fraction of nodes with label 1 (NaN for none).
func positiveRate(labels []int8, nodes []uint32) float64 {
	pos := 0
	for _, u := range nodes {
		if labels[u] == 1 {
			pos++
		}
	}
	if len(nodes) == 0 {
		return math.NaN()
	}
	return float64(pos) / float64(len(nodes))
}

// selector tracks model selection on validation accuracy.
type selector struct {
	ev     *evalData
	best   float64
	res    VariantResult
	p1     []float64
	pred   []int8
	yval   []int8
	avg    []float64
	counts []int32
	scores []float64 // validation P(1), for SelectAUC
	// auc keeps the sorted copy of the validation scores between epochs:
	// 16 bytes per validation node, which a large graph (10⁵ of them)
	// would otherwise allocate at every epoch.
	auc fasd.AUCScratch
	// bestP1 is P(1) per node at the best epoch so far; pending says
	// that result has not yet computed its metrics.
	bestP1  []float64
	pending bool
	// thrSet says res.Threshold is the pending best epoch's (bestThreshold).
	thrSet bool
	// fair subtracts the ranking gaps from the criterion (SelectFair or
	// SelectEO, on a variant of the FASD pipeline); gaps is its scratch.
	fair bool
	gaps gapScratch
}

func newSelector(ev *evalData, v Variant) *selector {
	s := &selector{ev: ev, best: math.Inf(-1), res: VariantResult{Variant: v, BestEpoch: -1, Threshold: Num(ev.thr)}}
	s.fair = (ev.sel == SelectFair || ev.sel == SelectEO) && v != VariantGCN && v != VariantMLP && v != VariantMajority
	s.p1 = make([]float64, ev.numNodes)
	s.avg = make([]float64, 2*ev.numNodes)
	s.counts = make([]int32, ev.numNodes)
	s.pred = make([]int8, len(ev.val))
	s.yval = make([]int8, len(ev.val))
	for i, u := range ev.val {
		s.yval[i] = ev.labels[u]
	}
	return s
}

// observe takes P(1) per node for one epoch; it returns the validation
// accuracy and whether the epoch is the new best by the selection
// criterion (then its P(1) and validation scores are kept for result and
// bestThreshold).
func (s *selector) observe(epoch int, p1 []float64) (float64, bool, error) {
	if s.scores == nil {
		s.scores = make([]float64, len(s.ev.val))
	}
	acc, crit, err := s.criterion(p1, s.ev.val, s.yval, s.pred, s.scores)
	s.res.ValCurve = append(s.res.ValCurve, Num(acc))
	if err != nil {
		return acc, false, err
	}
	if !(crit > s.best) {
		return acc, false, nil
	}
	s.best = crit
	s.res.BestEpoch = epoch
	s.res.ValScores = append(s.res.ValScores[:0], s.scores...)
	s.bestP1 = append(s.bestP1[:0], p1...)
	s.pending, s.thrSet = true, false
	return acc, true, nil
}

// bestThreshold is the decision threshold of the best epoch so far
// (VariantResult.Threshold), tuned on its validation scores when first
// asked for: a tuned threshold sorts the validation scores, which on a
// large graph, where nearly every epoch improves, would cost a sort per
// epoch.
func (s *selector) bestThreshold() float64 {
	if s.pending && !s.thrSet {
		s.res.Threshold = Num(s.threshold(s.res.ValScores))
		s.thrSet = true
	}
	return float64(s.res.Threshold)
}

// result is the variant's result: the metrics of the best epoch's P(1) at
// its threshold, on the test and the validation nodes. They are computed
// here, once, from the copy observe kept (each costs a sort of the nodes'
// scores for the AUC, which on a large graph cost as much as a training
// epoch when done at every improvement).
func (s *selector) result() (VariantResult, error) {
	if !s.pending {
		return s.res, nil
	}
	thr := s.bestThreshold()
	m, err := fasd.EvaluateScores(s.bestP1, thr, s.ev.labels, s.ev.sens, s.ev.test)
	if err != nil {
		return s.res, err
	}
	mv, err := fasd.EvaluateScores(s.bestP1, thr, s.ev.labels, s.ev.sens, s.ev.val)
	if err != nil {
		return s.res, err
	}
	s.res.Val, s.res.ValAcc, s.res.ValAUC, s.res.Test = metricsOf(mv), Num(mv.Acc), Num(mv.AUC), metricsOf(m)
	if s.ev.keep {
		s.res.Scores = s.bestP1
		s.bestP1 = nil
	}
	s.pending, s.thrSet = false, false
	return s.res, nil
}

// criterion returns the accuracy at the prior rule's threshold of P(1)
// (p1, per node) on the nodes with labels y, and the selection criterion
// (classifier.select): that accuracy, or the ROC AUC of the scores (the
// accuracy when only one class is present), under SelectFair and
// SelectEO less classifier.select_alpha times the ranking gaps of the
// nodes (selectionGaps) when s.fair. pred and scores are the caller's buffers
// of len(nodes); scores keeps P(1) of the nodes.
func (s *selector) criterion(p1 []float64, nodes []uint32, y, pred []int8, scores []float64) (acc, crit float64, err error) {
	ev := s.ev
	for i, u := range nodes {
		pred[i] = fasd.PredictAt(p1[u], ev.thr)
		scores[i] = p1[u]
	}
	acc = fasd.Accuracy(pred, y)
	crit = acc
	if ev.sel == SelectAUC || ev.sel == SelectFair || ev.sel == SelectEO {
		if crit, err = s.auc.AUC(scores, y); err != nil {
			return acc, crit, err
		}
		if math.IsNaN(crit) { // one validation class only: no ranking to judge
			crit = acc
		}
	}
	if s.fair {
		g, err := s.gaps.gaps(scores, nodes, y, ev.sens, ev.sel == SelectEO)
		if err != nil {
			return acc, crit, err
		}
		crit -= ev.alpha * g
	}
	return acc, crit, nil
}

// selectionGaps is the fairness term of SelectFair on the nodes with
// scores and labels y: |2·AUC_s − 1| + |2·AUC_s,y=1 − 1|, where AUC_s is
// the ROC AUC with which the scores rank group s = 1 above group s = 0
// (over every node with a known group) and AUC_s,y=1 the same among the
// nodes of label 1. They are the ranking counterparts of ΔDP and ΔEO: 0
// when the groups' score distributions agree (overall, and among the
// positives), 1 when the scores separate the groups. Unlike ΔDP and ΔEO
// at a threshold they do not vanish for an epoch that puts every score
// on one side of the threshold, so they do not reward a near-constant
// predictor. With within (SelectEO) the overall term is replaced by the
// one among the nodes of label 0: |2·AUC_s,y=0 − 1| + |2·AUC_s,y=1 − 1|,
// which a ranking that follows the labels alone leaves at 0 however the
// groups' base rates differ. A term whose groups are not both present
// counts 0.
func selectionGaps(scores []float64, nodes []uint32, y, sens []int8, within bool) (float64, error) {
	var sc gapScratch
	return sc.gaps(scores, nodes, y, sens, within)
}

// gapScratch holds selectionGaps' per-group copies of the scores and its
// AUC scratch, so that a selector judging every epoch allocates them once.
// The zero value is ready to use; not safe for concurrent use.
type gapScratch struct {
	all, neg, pos groupScores
	auc           fasd.AUCScratch
}

// gaps is selectionGaps computed in the scratch's memory: the same result
// for the same input.
func (sc *gapScratch) gaps(scores []float64, nodes []uint32, y, sens []int8, within bool) (float64, error) {
	all, neg, pos := &sc.all, &sc.neg, &sc.pos
	for _, c := range [...]*groupScores{all, neg, pos} {
		c.sc, c.s = c.sc[:0], c.s[:0]
	}
	for i, u := range nodes {
		all.sc = append(all.sc, scores[i])
		all.s = append(all.s, sens[u])
		switch y[i] {
		case 0:
			neg.sc = append(neg.sc, scores[i])
			neg.s = append(neg.s, sens[u])
		case 1:
			pos.sc = append(pos.sc, scores[i])
			pos.s = append(pos.s, sens[u])
		}
	}
	first := all
	if within {
		first = neg
	}
	g := 0.0
	for _, c := range [...]*groupScores{first, pos} {
		a, err := sc.auc.AUC(c.sc, c.s)
		if err != nil {
			return 0, err
		}
		if !math.IsNaN(a) {
			g += math.Abs(2*a - 1)
		}
	}
	return g, nil
}

// groupScores is a set of nodes' scores and their groups.
type groupScores struct {
	sc []float64
	s  []int8
}

// threshold is the decision threshold for the validation scores (P(1) of
// the validation nodes, in s.ev.val's order): the prior rule's, or the one
// tuned on them (classifier.decision). The epoch itself is chosen before,
// at the prior rule's threshold.
func (s *selector) threshold(scores []float64) float64 {
	switch s.ev.dec {
	case DecisionPlatt:
		return fasd.PlattThreshold(scores, s.yval, s.ev.thr)
	case DecisionValAcc:
		return fasd.AccuracyThreshold(scores, s.yval, s.ev.thr)
	case DecisionRate:
		return fasd.RateThreshold(scores, s.yval, s.ev.thr)
	}
	return s.ev.thr
}

// averaged computes P(1) per node from per-subgraph probabilities (§10).
func (s *selector) averaged(v *view, probs [][]float32) ([]float64, error) {
	return s.averagedOn(v, probs, nil)
}

// averagedOn is averaged over the subgraphs idx alone (nil: all of them,
// in order): a node every one of whose subgraphs is in idx gets the same
// P(1), bit for bit, as from all subgraphs; a node in none of them NaN.
func (s *selector) averagedOn(v *view, probs [][]float32, idx []int) ([]float64, error) {
	n := len(idx)
	if idx == nil {
		n = len(probs)
	}
	at := func(k int) int {
		if idx == nil {
			return k
		}
		return idx[k]
	}
	sets := make([]fasd.SubgraphProbs, n)
	for k := range sets {
		i := at(k)
		sets[k] = fasd.SubgraphProbs{Root: v.sgs[i].Root(), Nodes: v.sgs[i].Nodes, P: probs[i]}
	}
	if err := fasd.AveragePredictions(sets, s.ev.numNodes, 2, s.avg, s.counts); err != nil {
		return nil, err
	}
	for u := range s.p1 {
		s.p1[u] = s.avg[2*u+1]
	}
	if s.ev.root {
		for k := range sets {
			i := at(k)
			s.p1[v.sgs[i].Root()] = float64(probs[i][1])
		}
	}
	return s.p1, nil
}

// evalChunk is the number of subgraphs evaluated as one padded batch.
const evalChunk = 64

// classProbs runs f in eval mode on every subgraph of v in padded batches
// of evalChunk subgraphs; the valid outputs equal Engine.Probs on each
// subgraph alone bit for bit (padding only appends exact zeros to sums).
func classProbs(ctx context.Context, f *nn.GCNNet[float32], v *view, d, workers int, dst [][]float32) error {
	return classProbsOn(ctx, f, v, nil, d, workers, dst)
}

// classProbsOn is classProbs on the subgraphs idx of v alone (nil: all),
// in padded batches of evalChunk consecutive entries of idx; dst is
// indexed by subgraph and its other entries are left as they are. A
// subgraph's outputs do not depend on its batch, so they equal classProbs's.
// An entry i ≥ len(v.sgs) stands for subgraph i mod len(v.sgs) and is
// written to dst[i] (reporter.evalSet's repetitions).
func classProbsOn(ctx context.Context, f *nn.GCNNet[float32], v *view, idx []int, d, workers int, dst [][]float32) error {
	n := len(idx)
	if idx == nil {
		n = len(v.sgs)
	}
	chunks := (n + evalChunk - 1) / evalChunk
	scr := make([]*evalScratch, max(1, min(workers, chunks)))
	for i := range scr {
		scr[i] = evalScratchPool.Get().(*evalScratch)
	}
	defer func() {
		for _, sc := range scr {
			evalScratchPool.Put(sc)
		}
	}()
	return parallelFor(ctx, workers, chunks, func(w, c int) error {
		sc := scr[w]
		sc.idx, sc.dst = sc.idx[:0], sc.dst[:0]
		for k := c * evalChunk; k < min(n, (c+1)*evalChunk); k++ {
			i := k
			if idx != nil {
				i = idx[k]
			}
			sc.idx = append(sc.idx, i%len(v.sgs))
			sc.dst = append(sc.dst, i)
		}
		if err := sc.pad.build(v, sc.idx, d); err != nil {
			return err
		}
		t := sc.tape
		t.Reset()
		t.SetNoGrad(true)
		z := f.Forward(t, t.Input(sc.pad.X, false), t.Input(sc.pad.A, false), sc.pad.mask, nil).Value.Data
		n := sc.pad.n
		for k, i := range sc.idx {
			gn := v.sgs[i].N()
			o := sc.dst[k]
			dst[o] = resizeF(dst[o], 2*gn)
			softmax2(z[k*n*2:(k*n+gn)*2], dst[o])
		}
		return nil
	})
}

// evalScratch is one worker's tape and padded batch of classProbsOn. The
// scratch is pooled across calls: a stage checks f on the same subgraphs
// after every epoch, so the tape's arena and the batch keep their size
// instead of growing again on every check.
type evalScratch struct {
	tape     *autodiff.Tape[float32]
	pad      padBuf
	idx, dst []int // the subgraphs of the chunk and their slots in dst
}

var evalScratchPool = sync.Pool{New: func() any { return &evalScratch{tape: autodiff.NewTape[float32]()} }}

// slotsFor is the length of the output classProbsOn(…, idx, …) writes
// for a view of m subgraphs: m, or more for reporter.evalSet's repetitions.
func slotsFor(idx []int, m int) int {
	for _, i := range idx {
		m = max(m, i+1)
	}
	return m
}

// classifierRun is what both of f's schedules start from: f initialised
// from initSeed, a network of the same shape for the best weights, the
// trainer, Adam and the selector.
type classifierRun struct {
	net, best *nn.GCNNet[float32]
	t         *netTrainer
	opt       *nn.Adam[float32]
	sel       *selector
}

func newClassifierRun(cfg *Config, v *view, d int, w *nn.Workers[float32], ev *evalData, variant Variant, initSeed uint64) (*classifierRun, error) {
	arch := classifierArch(cfg, d)
	net, err := nn.NewGCNNet[float32](arch, fasd.NewRand(initSeed))
	if err != nil {
		return nil, err
	}
	best, _ := nn.NewGCNNet[float32](arch, fasd.NewRand(initSeed))
	t := newNetTrainer(net, kindClass, v, d, w.N())
	t.rootOnly = ev.root
	fc := cfg.Classifier
	opt := nn.NewAdam(net.Params(), nn.AdamConfig{LR: fc.LR, WeightDecay: fc.WeightDecay})
	return &classifierRun{net: net, best: best, t: t, opt: opt, sel: newSelector(ev, variant)}, nil
}

// trainClassifier trains f (§10) on view v: loss on train-split node
// occurrences only, validation accuracy from subgraph-averaged predictions
// after every epoch, selection by best validation accuracy. It returns the
// selected weights.
func trainClassifier(ctx context.Context, cfg *Config, v *view, d int, w *nn.Workers[float32], ev *evalData,
	variant Variant, initSeed, trainSeed uint64, rep *reporter) (*nn.GCNNet[float32], VariantResult, error) {
	if Arch(cfg.Classifier.Arch) == ArchAuto {
		return trainClassifierAuto(ctx, cfg, v, d, w, ev, variant, initSeed, trainSeed, rep)
	}
	if cfg.Classifier.Schedule == ClassBudget {
		return trainClassifierBudget(ctx, cfg, v, d, w, ev, variant, initSeed, trainSeed, rep)
	}
	c, err := newClassifierRun(cfg, v, d, w, ev, variant, initSeed)
	if err != nil {
		return nil, VariantResult{}, err
	}
	net, best, t, opt, sel, fc := c.net, c.best, c.t, c.opt, c.sel, cfg.Classifier
	evalIdx, evalN := rep.evalSet(nil, len(v.sgs))
	probs := make([][]float32, slotsFor(evalIdx, len(v.sgs)))
	idx := make([]int, len(v.sgs))
	for i := range idx {
		idx[i] = i
	}
	pat := patience{limit: fc.Patience}
	t.patience = fc.Patience
	after := func(ep int) (float64, bool, error) {
		err := rep.timed(evalN, func() error {
			return classProbsOn(ctx, net, v, evalIdx, d, w.N(), probs)
		})
		if err != nil {
			return 0, false, err
		}
		var acc float64
		var improved bool
		err = rep.timedFixed(func() error {
			p1, err := sel.averaged(v, probs[:len(v.sgs)])
			if err != nil {
				return err
			}
			acc, improved, err = sel.observe(ep, p1)
			if improved {
				nn.CopyParams(best.Params(), net.Params())
			}
			return err
		})
		return acc, pat.observe(improved), err
	}
	if _, err := trainLoop(ctx, w, t, opt, idx, fc.Epochs, fc.Batch, fasd.NewRand(trainSeed), rep, after); err != nil {
		return nil, VariantResult{}, err
	}
	res, err := sel.result()
	return best, res, err
}
