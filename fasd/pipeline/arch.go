package pipeline

import (
	"context"
	"math"
	"math/rand/v2"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/nn"
)

// Parameters of archCheck.
const (
	// archResamples is the number of bootstrap resamples.
	archResamples = 2000
	// archLevel is the one-sided significance level: the root weights are
	// better when at most this share of the resamples ranks the
	// validation nodes at least as well without them.
	archLevel = 0.05
)

// trainClassifierAuto is trainClassifier under classifier.arch = "auto":
// f is trained twice on v with the same seeds, first with the paper's
// layers (the same network, bit for bit, as under "gcn"), then with root
// weights, and the root network is kept only when
// archCheck says so. The result records the choice in
// VariantResult.Arch. No test label is read.
func trainClassifierAuto(ctx context.Context, cfg *Config, v *view, d int, w *nn.Workers[float32], ev *evalData,
	variant Variant, initSeed, trainSeed uint64, rep *reporter) (*nn.GCNNet[float32], VariantResult, error) {
	arm := *cfg
	arm.Classifier.Arch = string(ArchGCN)
	units := classifierArmUnits(cfg, len(v.sgs))
	rep.estMul = 2 // the first arm's estimate covers both
	f0, r0, err := trainClassifier(ctx, &arm, v, d, w, ev, variant, initSeed, trainSeed, rep)
	if err != nil {
		return nil, VariantResult{}, err
	}
	arm.Classifier.Arch = string(ArchRoot)
	rep.base, rep.estMul = units, -1
	f1, r1, err := trainClassifier(ctx, &arm, v, d, w, ev, variant, initSeed, trainSeed, rep)
	rep.base, rep.estMul = 0, 0
	if err != nil {
		return nil, VariantResult{}, err
	}
	e := archCheck(ev, &r1, &r0, ArchFair(cfg.Classifier.ArchFair), fasd.NewRand(fasd.DeriveSeed(trainSeed, purposeArch)))
	if e.Reason == ArchRootBetter {
		r1.Arch, r1.ArchEvidence = string(ArchRoot), &e
		return f1, r1, nil
	}
	r0.Arch, r0.ArchEvidence = string(ArchGCN), &e
	return f0, r0, nil
}

// ArchEvidence is what classifier.arch = "auto" read on the validation
// nodes when it chose between the paper's f and f with root weights, each
// at its selected epoch (archCheck). Figures it did not reach
// are NaN (null in JSON).
type ArchEvidence struct {
	// Reason is the outcome: ArchRootBetter keeps the root weights, any
	// other the paper's layers.
	Reason ArchReason `json:"reason"`
	// RootAUC and PaperAUC are the two networks' validation ROC AUC.
	RootAUC  Num `json:"root_auc"`
	PaperAUC Num `json:"paper_auc"`
	// Share is the share of the paired bootstrap resamples on which the
	// paper's network ranks the validation nodes at least as well (root
	// is significantly better when it is at most archLevel).
	Share Num `json:"share"`
	// RootUnfair and PaperUnfair are ΔDP + ΔEO on the validation nodes at
	// each network's own threshold.
	RootUnfair  Num `json:"root_unfair"`
	PaperUnfair Num `json:"paper_unfair"`
	// FairShare, under classifier.arch_fair = "significant" when root's
	// ΔDP + ΔEO is the larger, is the share of the paired bootstrap
	// resamples on which root is at least as fair (root is significantly
	// less fair when it is at most archLevel).
	FairShare Num `json:"fair_share"`
}

// ArchReason is the outcome of the choice of classifier.arch = "auto".
type ArchReason string

// The outcomes, in the order the checks run.
const (
	// ArchNoEvidence: scores missing or a validation class empty.
	ArchNoEvidence ArchReason = "no_evidence"
	// ArchLessFair: root's ΔDP + ΔEO is larger.
	ArchLessFair ArchReason = "less_fair"
	// ArchNotHigher: root's AUC is not higher.
	ArchNotHigher ArchReason = "auc_not_higher"
	// ArchNotSignificant: higher, but more than archLevel of the
	// resamples rank at least as well without root weights.
	ArchNotSignificant ArchReason = "not_significant"
	// ArchRootBetter: root weights kept.
	ArchRootBetter ArchReason = "root_better"
)

// archCheck says whether root, f with root weights, is to be kept over
// plain, the same f without them (Reason ArchRootBetter), and with which
// figures, from their selected epochs' scores on the validation nodes
// (VariantResult.ValScores) alone:
//
//   - root ranks the validation nodes significantly better: its ROC AUC
//     is higher on the validation nodes themselves, and at most archLevel
//     of archResamples paired bootstrap resamples (positives and negatives
//     resampled separately, so every resample has both classes; both
//     models scored on the same resample) have plain's AUC at least as
//     high; and
//   - root is no less fair there, by the test fair: under ArchFairPoint
//     its ΔDP + ΔEO at its own threshold is not larger than plain's
//     (skipped when either is undefined, an empty group); under
//     ArchFairSignificant a larger one rules it out only when
//     significant — at most archLevel of archResamples paired bootstrap
//     resamples (drawn as for the AUC, before its resamples) have root at
//     least as fair, each network at its own threshold.
//
// Missing scores or a validation class with no node keep plain: the
// choice falls back to the paper's layers whenever the evidence is thin.
// rng draws the resamples.
func archCheck(ev *evalData, root, plain *VariantResult, fair ArchFair, rng *rand.Rand) ArchEvidence {
	nan := Num(math.NaN())
	e := ArchEvidence{Reason: ArchNoEvidence, RootAUC: nan, PaperAUC: nan, Share: nan,
		RootUnfair: root.Val.DP + root.Val.EO, PaperUnfair: plain.Val.DP + plain.Val.EO, FairShare: nan}
	n := len(ev.val)
	if n == 0 || len(root.ValScores) != n || len(plain.ValScores) != n {
		return e
	}
	gr, gp := float64(e.RootUnfair), float64(e.PaperUnfair)
	if !math.IsNaN(gr) && !math.IsNaN(gp) && gr > gp {
		if fair != ArchFairSignificant {
			e.Reason = ArchLessFair
			return e
		}
		e.FairShare = Num(fairShare(ev, root, plain, rng))
		if !(float64(e.FairShare) > archLevel) { // NaN: no resample had both groups
			e.Reason = ArchLessFair
			return e
		}
	}
	pos, neg := valClasses(ev)
	if len(pos) == 0 || len(neg) == 0 {
		return e
	}
	y := make([]int8, 0, len(pos)+len(neg))
	for range pos {
		y = append(y, 1)
	}
	for range neg {
		y = append(y, 0)
	}
	sr, sp := make([]float64, len(y)), make([]float64, len(y))
	auc := func(pick func(k int) int) (ar, ap float64, ok bool) {
		for k := range y {
			i := pick(k)
			sr[k], sp[k] = root.ValScores[i], plain.ValScores[i]
		}
		ar, err1 := fasd.AUC(sr, y)
		ap, err2 := fasd.AUC(sp, y)
		return ar, ap, err1 == nil && err2 == nil && !math.IsNaN(ar) && !math.IsNaN(ap)
	}
	at := func(k int) int {
		if k < len(pos) {
			return pos[k]
		}
		return neg[k-len(pos)]
	}
	ar, ap, ok := auc(at)
	if !ok {
		return e
	}
	e.RootAUC, e.PaperAUC = Num(ar), Num(ap)
	if !(ar > ap) {
		e.Reason = ArchNotHigher
		return e
	}
	draw := make([]int, len(y))
	atLeast := 0
	for r := 0; r < archResamples; r++ {
		resample(rng, pos, neg, draw)
		ar, ap, ok := auc(func(k int) int { return draw[k] })
		if !ok || ap >= ar {
			atLeast++
		}
	}
	e.Share = Num(float64(atLeast) / archResamples)
	e.Reason = ArchNotSignificant
	if float64(atLeast) <= archLevel*archResamples {
		e.Reason = ArchRootBetter
	}
	return e
}

// fairShare is the share of archResamples paired bootstrap resamples of
// the validation nodes (positives and negatives resampled separately) on
// which root's ΔDP + ΔEO, at root's threshold, is at most plain's at
// plain's; resamples where either is undefined (a group without nodes or
// without positives) do not count. NaN when none counts.
func fairShare(ev *evalData, root, plain *VariantResult, rng *rand.Rand) float64 {
	pos, neg := valClasses(ev)
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	m := len(pos) + len(neg)
	pr, pp, y, s := make([]int8, m), make([]int8, m), make([]int8, m), make([]int8, m)
	tr, tp := float64(root.Threshold), float64(plain.Threshold)
	unfair := func(pred []int8) float64 {
		mt, err := fasd.Evaluate(pred, y, s)
		if err != nil {
			return math.NaN()
		}
		return mt.DP + mt.EO
	}
	draw := make([]int, m)
	counted, atLeast := 0, 0
	for r := 0; r < archResamples; r++ {
		resample(rng, pos, neg, draw)
		for k, i := range draw {
			u := ev.val[i]
			pr[k], pp[k] = fasd.PredictAt(root.ValScores[i], tr), fasd.PredictAt(plain.ValScores[i], tp)
			y[k], s[k] = ev.labels[u], ev.sens[u]
		}
		ur, up := unfair(pr), unfair(pp)
		if math.IsNaN(ur) || math.IsNaN(up) {
			continue
		}
		counted++
		if ur <= up {
			atLeast++
		}
	}
	if counted == 0 {
		return math.NaN()
	}
	return float64(atLeast) / float64(counted)
}

// valClasses returns the positions in ev.val of the positive and of the
// negative validation nodes.
func valClasses(ev *evalData) (pos, neg []int) {
	for i, u := range ev.val {
		switch ev.labels[u] {
		case 1:
			pos = append(pos, i)
		case 0:
			neg = append(neg, i)
		}
	}
	return pos, neg
}

// resample fills draw (len(pos) + len(neg) entries) with one paired
// bootstrap resample: len(pos) draws from pos, then len(neg) from neg,
// positives and negatives resampled separately so both classes stay.
func resample(rng *rand.Rand, pos, neg, draw []int) {
	for k := range draw {
		if k < len(pos) {
			draw[k] = pos[rng.IntN(len(pos))]
		} else {
			draw[k] = neg[rng.IntN(len(neg))]
		}
	}
}
