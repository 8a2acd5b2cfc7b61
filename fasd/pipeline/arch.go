package pipeline

import (
	"context"
	"math"
	"math/rand/v2"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/nn"
)

// Parameters of rootBetterOnValidation.
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
// rootBetterOnValidation says so. The result records the choice in
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
	if rootBetterOnValidation(ev, &r1, &r0, fasd.NewRand(fasd.DeriveSeed(trainSeed, purposeArch))) {
		r1.Arch = string(ArchRoot)
		return f1, r1, nil
	}
	r0.Arch = string(ArchGCN)
	return f0, r0, nil
}

// rootBetterOnValidation says whether root, f with root weights, is to be
// kept over plain, the same f without them, from their selected epochs'
// scores on the validation nodes (VariantResult.ValScores) alone:
//
//   - root ranks the validation nodes significantly better: its ROC AUC
//     is higher on the validation nodes themselves, and at most archLevel
//     of archResamples paired bootstrap resamples (positives and negatives
//     resampled separately, so every resample has both classes; both
//     models scored on the same resample) have plain's AUC at least as
//     high; and
//   - root is no less fair there: its ΔDP + ΔEO at its own threshold is
//     not larger than plain's (skipped when either is undefined, an empty
//     group).
//
// Missing scores or a validation class with no node keep plain: the
// choice falls back to the paper's layers whenever the evidence is thin.
// rng draws the resamples.
func rootBetterOnValidation(ev *evalData, root, plain *VariantResult, rng *rand.Rand) bool {
	n := len(ev.val)
	if n == 0 || len(root.ValScores) != n || len(plain.ValScores) != n {
		return false
	}
	gr, gp := float64(root.Val.DP+root.Val.EO), float64(plain.Val.DP+plain.Val.EO)
	if !math.IsNaN(gr) && !math.IsNaN(gp) && gr > gp {
		return false
	}
	var pos, neg []int
	for i, u := range ev.val {
		switch ev.labels[u] {
		case 1:
			pos = append(pos, i)
		case 0:
			neg = append(neg, i)
		}
	}
	if len(pos) == 0 || len(neg) == 0 {
		return false
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
	if ar, ap, ok := auc(at); !ok || !(ar > ap) {
		return false
	}
	draw := make([]int, len(y))
	atLeast := 0
	for r := 0; r < archResamples; r++ {
		for k := range draw {
			if k < len(pos) {
				draw[k] = pos[rng.IntN(len(pos))]
			} else {
				draw[k] = neg[rng.IntN(len(neg))]
			}
		}
		ar, ap, ok := auc(func(k int) int { return draw[k] })
		if !ok || ap >= ar {
			atLeast++
		}
	}
	return float64(atLeast) <= archLevel*archResamples
}
