package fasd

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// PredictLabel returns the predicted label from the averaged probability of
// class 1: 1 iff p1 > 0.5, strictly (DIG's "logit > 0").
func PredictLabel(p1 float64) int8 { return PredictAt(p1, 0.5) }

// PredictAt returns the predicted label from the probability of class 1
// under the decision threshold thr: 1 iff p1 > thr, strictly.
func PredictAt(p1, thr float64) int8 {
	if p1 > thr {
		return 1
	}
	return 0
}

// PriorShiftZ is the two-proportion z statistic beyond which
// ShiftedPriorThreshold takes a difference of class priors for a real shift
// (two-sided p < 0.01) rather than sampling noise.
const PriorShiftZ = 2.576

// ShiftedPriorThreshold is PriorThreshold(piTrain, piTarget) when the two
// positive rates, measured on nTrain and nTarget labels, differ beyond
// sampling noise (pooled two-proportion z test, |z| ≥ PriorShiftZ), and 0.5
// otherwise: a split that draws training and validation nodes from one
// population (NBA's) keeps the plain rule; a class-balanced training split
// over an imbalanced population (NIFTY's German and Income) is corrected.
func ShiftedPriorThreshold(piTrain float64, nTrain int, piTarget float64, nTarget int) float64 {
	if nTrain < 1 || nTarget < 1 || math.IsNaN(piTrain) || math.IsNaN(piTarget) {
		return 0.5
	}
	p := (piTrain*float64(nTrain) + piTarget*float64(nTarget)) / float64(nTrain+nTarget)
	se := math.Sqrt(p * (1 - p) * (1/float64(nTrain) + 1/float64(nTarget)))
	if !(se > 0) || math.Abs(piTarget-piTrain)/se < PriorShiftZ {
		return 0.5
	}
	return PriorThreshold(piTrain, piTarget)
}

// PriorThreshold is the decision threshold on P(1) that corrects a
// classifier trained with positive-class prior piTrain for a population
// whose prior is piTarget (Bayes' rule with shifted priors: predict 1 iff
// logit P(1) + logit piTarget − logit piTrain > 0). Equal priors give 0.5.
// Priors outside (0, 1) leave the threshold at 0.5.
func PriorThreshold(piTrain, piTarget float64) float64 {
	if !(piTrain > 0 && piTrain < 1 && piTarget > 0 && piTarget < 1) {
		return 0.5
	}
	logit := func(p float64) float64 { return math.Log(p / (1 - p)) }
	return 1 / (1 + math.Exp(logit(piTarget)-logit(piTrain)))
}

// Flags marks metrics that could not be computed because a group is empty.
type Flags uint8

const (
	// FlagEmptyS0 and FlagEmptyS1: no evaluated node with s = 0 (s = 1);
	// ΔDP is NaN.
	FlagEmptyS0 Flags = 1 << iota
	FlagEmptyS1
	// FlagEmptyPosS0 and FlagEmptyPosS1: no evaluated node with s = 0
	// (s = 1) and y = 1; ΔEO is NaN.
	FlagEmptyPosS0
	FlagEmptyPosS1
)

// GroupMetrics are the metrics of the nodes with one value of s. Rates over
// an empty set are NaN.
type GroupMetrics struct {
	N       int     // nodes in the group
	Pos     int     // of which y = 1
	Acc     float64 // fraction with ŷ = y
	PosRate float64 // mean ŷ (the ΔDP term)
	TPR     float64 // mean ŷ over y = 1 (the ΔEO term)
	FPR     float64 // mean ŷ over y = 0
}

// Metrics are the evaluation metrics of §1 on one set of nodes (the test
// nodes in the paper's protocol), as fractions (multiply by 100 to report).
type Metrics struct {
	N   int     // evaluated nodes
	Acc float64 // fraction with ŷ = y over all N nodes
	DP  float64 // ΔDP = |PosRate(s=0) − PosRate(s=1)|, NaN if a group is empty
	EO  float64 // ΔEO = |TPR(s=0) − TPR(s=1)|, NaN if a positive group is empty
	// AUC is the ROC AUC of the scores (EvaluateScores; NaN from Evaluate,
	// which sees labels only, or when a class is empty).
	AUC float64
	// F1 is the F1 score of the positive class (0 when nothing is
	// predicted or labelled positive) and MacroF1 the mean of the F1
	// scores of both classes: a constant predictor scores F1 0 or
	// MacroF1 at most 0.5 however accurate it is.
	F1, MacroF1 float64
	Groups      [2]GroupMetrics
	Flags       Flags
}

// Evaluate computes Acc, ΔDP, ΔEO and the per-group metrics from parallel
// slices of predicted labels, true labels and sensitive attributes. pred and
// y must be 0 or 1; s may be −1 (unknown): such nodes count for Acc only.
// With no nodes, Acc is NaN.
func Evaluate(pred, y, s []int8) (Metrics, error) {
	if len(pred) != len(y) || len(pred) != len(s) {
		return Metrics{}, fmt.Errorf("%w: evaluate %d predictions, %d labels, %d attributes", ErrShape, len(pred), len(y), len(s))
	}
	var m Metrics
	m.N = len(pred)
	m.AUC = math.NaN()
	var correct int
	var tp, fp, fn, tn int
	var gCorrect, gPred, gTP, gFP [2]int
	for i := range pred {
		p, yi, si := pred[i], y[i], s[i]
		if p != 0 && p != 1 || yi != 0 && yi != 1 {
			return Metrics{}, fmt.Errorf("%w: node %d has prediction %d, label %d (want 0 or 1)", ErrInvalidOptions, i, p, yi)
		}
		if si < -1 || si > 1 {
			return Metrics{}, fmt.Errorf("%w: node %d has sensitive attribute %d", ErrInvalidOptions, i, si)
		}
		hit := p == yi
		if hit {
			correct++
		}
		switch {
		case p == 1 && yi == 1:
			tp++
		case p == 1:
			fp++
		case yi == 1:
			fn++
		default:
			tn++
		}
		if si < 0 {
			continue
		}
		g := &m.Groups[si]
		g.N++
		if hit {
			gCorrect[si]++
		}
		gPred[si] += int(p)
		if yi == 1 {
			g.Pos++
			gTP[si] += int(p)
		} else {
			gFP[si] += int(p)
		}
	}
	m.Acc = ratio(correct, m.N)
	if m.N > 0 {
		m.F1 = F1Score(tp, fp, fn)
		m.MacroF1 = (m.F1 + F1Score(tn, fn, fp)) / 2
	} else {
		m.F1, m.MacroF1 = math.NaN(), math.NaN()
	}
	for k := range 2 {
		g := &m.Groups[k]
		g.Acc = ratio(gCorrect[k], g.N)
		g.PosRate = ratio(gPred[k], g.N)
		g.TPR = ratio(gTP[k], g.Pos)
		g.FPR = ratio(gFP[k], g.N-g.Pos)
	}
	if m.Groups[0].N == 0 {
		m.Flags |= FlagEmptyS0
	}
	if m.Groups[1].N == 0 {
		m.Flags |= FlagEmptyS1
	}
	if m.Groups[0].Pos == 0 {
		m.Flags |= FlagEmptyPosS0
	}
	if m.Groups[1].Pos == 0 {
		m.Flags |= FlagEmptyPosS1
	}
	m.DP = math.Abs(m.Groups[0].PosRate - m.Groups[1].PosRate)
	m.EO = math.Abs(m.Groups[0].TPR - m.Groups[1].TPR)
	return m, nil
}

// F1Score is the F1 score of one class from its true positives, false
// positives and false negatives: 2·tp / (2·tp + fp + fn), 0 when the class
// is neither predicted nor present.
func F1Score(tp, fp, fn int) float64 {
	if tp+fp+fn == 0 {
		return 0
	}
	return 2 * float64(tp) / float64(2*tp+fp+fn)
}

// EvaluateNodes evaluates the given nodes, reading P(1), y and s from dense
// arrays indexed by node id: ŷ = PredictLabel(p1[v]).
func EvaluateNodes(p1 []float64, y, s []int8, nodes []uint32) (Metrics, error) {
	return EvaluateScores(p1, 0.5, y, s, nodes)
}

// EvaluateScores evaluates the given nodes like EvaluateNodes with
// ŷ = PredictAt(p1[v], thr), and adds the ROC AUC of p1 over them.
func EvaluateScores(p1 []float64, thr float64, y, s []int8, nodes []uint32) (Metrics, error) {
	pred := make([]int8, len(nodes))
	ys := make([]int8, len(nodes))
	ss := make([]int8, len(nodes))
	sc := make([]float64, len(nodes))
	for i, v := range nodes {
		if int64(v) >= int64(len(p1)) || int64(v) >= int64(len(y)) || int64(v) >= int64(len(s)) {
			return Metrics{}, fmt.Errorf("%w: node %d out of range", ErrShape, v)
		}
		pred[i], ys[i], ss[i], sc[i] = PredictAt(p1[v], thr), y[v], s[v], p1[v]
	}
	m, err := Evaluate(pred, ys, ss)
	if err != nil {
		return Metrics{}, err
	}
	if m.AUC, err = AUC(sc, ys); err != nil {
		return Metrics{}, err
	}
	return m, nil
}

// Accuracy returns the fraction of equal entries of pred and y (NaN if
// empty). It is the model-selection criterion on validation nodes.
func Accuracy(pred, y []int8) float64 {
	c := 0
	for i := range pred {
		if pred[i] == y[i] {
			c++
		}
	}
	return ratio(c, len(pred))
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// MeanStd is the mean and the population standard deviation (divisor n, as
// DIG reports) of a set of runs.
type MeanStd struct {
	Mean, Std float64
	N         int
}

// Summarize returns the mean and population std of v. Both are NaN if v is
// empty or holds a NaN (a run with an empty group taints the summary).
func Summarize(v []float64) MeanStd {
	r := MeanStd{N: len(v)}
	if len(v) == 0 {
		r.Mean, r.Std = math.NaN(), math.NaN()
		return r
	}
	for _, x := range v {
		r.Mean += x
	}
	r.Mean /= float64(len(v))
	ss := 0.0
	for _, x := range v {
		ss += (x - r.Mean) * (x - r.Mean)
	}
	r.Std = math.Sqrt(ss / float64(len(v)))
	return r
}

// MetricsSummary summarises Acc, ΔDP and ΔEO over runs.
type MetricsSummary struct {
	Acc, DP, EO MeanStd
}

// SummarizeRuns returns the mean and population std of each metric.
func SummarizeRuns(runs []Metrics) MetricsSummary {
	acc := make([]float64, len(runs))
	dp := make([]float64, len(runs))
	eo := make([]float64, len(runs))
	for i, r := range runs {
		acc[i], dp[i], eo[i] = r.Acc, r.DP, r.EO
	}
	return MetricsSummary{Acc: Summarize(acc), DP: Summarize(dp), EO: Summarize(eo)}
}

// AUC returns the area under the ROC curve of scores for the binary labels
// (1 positive, 0 negative; entries with a negative label are skipped), i.e.
// the probability that a random positive scores above a random negative,
// ties counting one half (Mann–Whitney with mid-ranks). It returns NaN if a
// class is empty or a score is NaN. It allocates a sorted copy of the
// scores; AUCScratch.AUC reuses one across calls.
func AUC(scores []float64, labels []int8) (float64, error) {
	var s AUCScratch
	return s.AUC(scores, labels)
}

// AUCScratch holds the sorted copy AUC makes of its scores, so that a
// caller computing an AUC at every epoch (model selection on a large
// validation set: 16 bytes per node per call) allocates it once. The zero
// value is ready to use; a scratch is not safe for concurrent use.
type AUCScratch struct {
	items []aucItem
}

type aucItem struct {
	s   float64
	pos bool
}

// AUC is the package's AUC, computed in the scratch's memory: the same
// result for the same input.
func (sc *AUCScratch) AUC(scores []float64, labels []int8) (float64, error) {
	if len(scores) != len(labels) {
		return 0, fmt.Errorf("%w: AUC of %d scores and %d labels", ErrShape, len(scores), len(labels))
	}
	items := sc.items[:0]
	defer func() { sc.items = items[:0] }()
	var nPos, nNeg int
	for i, l := range labels {
		switch {
		case l < 0:
			continue
		case l > 1:
			return 0, fmt.Errorf("%w: AUC label %d at %d", ErrInvalidOptions, l, i)
		}
		if math.IsNaN(scores[i]) {
			return math.NaN(), nil
		}
		items = append(items, aucItem{scores[i], l == 1})
		if l == 1 {
			nPos++
		} else {
			nNeg++
		}
	}
	if nPos == 0 || nNeg == 0 {
		return math.NaN(), nil
	}
	slices.SortFunc(items, func(a, b aucItem) int { return cmp.Compare(a.s, b.s) })
	rankSum := 0.0 // sum of the 1-based mid-ranks of the positives
	for i := 0; i < len(items); {
		j := i
		for j < len(items) && items[j].s == items[i].s {
			j++
		}
		mid := float64(i+1+j) / 2 // mean of ranks i+1..j
		for k := i; k < j; k++ {
			if items[k].pos {
				rankSum += mid
			}
		}
		i = j
	}
	u := rankSum - float64(nPos)*float64(nPos+1)/2
	return u / (float64(nPos) * float64(nNeg)), nil
}
