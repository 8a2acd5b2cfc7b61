package pipeline

import (
	"math"
	"math/rand/v2"

	"github.com/fasd-db/fasd/fasd"
)

// fallbackAUC is the validation AUC the debiased model may give up against
// the undebiased one and still be kept (fallBack).
const fallbackAUC = 0.02

// fallBack says whether the check of classifier.fallback (fasd_gcn) and
// classifier.fallback_fasd = "check" replaces the debiased model deb by
// orig, the same model without the debiasing: unless deb is fairer on the
// validation nodes (ΔDP + ΔEO strictly lower) at a validation AUC no more
// than fallbackAUC below orig's. Undefined validation metrics (an empty
// group) keep deb.
func fallBack(deb, orig *VariantResult) bool {
	gap := func(v *VariantResult) float64 { return float64(v.Val.DP + v.Val.EO) }
	gd, g0 := gap(deb), gap(orig)
	if math.IsNaN(gd) || math.IsNaN(g0) {
		return false
	}
	if !(gd < g0) {
		return true
	}
	ad, a0 := float64(deb.Val.AUC), float64(orig.Val.AUC)
	return !math.IsNaN(ad) && !math.IsNaN(a0) && ad < a0-fallbackAUC
}

// Parameters of lessFairOnValidation.
const (
	// fallbackResamples is the number of bootstrap resamples.
	fallbackResamples = 2000
	// fallbackLevel is the one-sided significance level: deb is taken to
	// be less fair when at most this share of the resamples has it at
	// least as fair as orig.
	fallbackLevel = 0.05
)

// lessFairOnValidation is the check of classifier.fallback_fasd =
// "significant": whether the validation nodes show deb significantly less
// fair than orig, ΔDP + ΔEO at each model's own threshold and selected
// epoch (VariantResult.ValScores). The test is a paired bootstrap: the
// validation nodes of known group are resampled with replacement within
// each (group, label) cell, so every resample keeps the cells' sizes and
// both ΔDP and ΔEO stay defined; both models are scored on the same
// resample. deb is less fair when its gap is larger on the validation
// nodes themselves and at most fallbackLevel of the resamples have it
// at least as fair. A missing cell or missing scores keep deb. rng draws
// the resamples; no test label is read.
func lessFairOnValidation(ev *evalData, deb, orig *VariantResult, rng *rand.Rand) bool {
	if len(deb.ValScores) != len(ev.val) || len(orig.ValScores) != len(ev.val) {
		return false
	}
	// Per cell (2·s + y): each node's two predictions as a pair of bits.
	var cells [4][]uint8
	for i, u := range ev.val {
		s, y := ev.sens[u], ev.labels[u]
		if s < 0 || s > 1 || y < 0 || y > 1 {
			continue
		}
		var b uint8
		if fasd.PredictAt(deb.ValScores[i], float64(deb.Threshold)) == 1 {
			b |= 1
		}
		if fasd.PredictAt(orig.ValScores[i], float64(orig.Threshold)) == 1 {
			b |= 2
		}
		cells[2*s+y] = append(cells[2*s+y], b)
	}
	for _, c := range cells {
		if len(c) == 0 {
			return false
		}
	}
	// gaps returns ΔDP + ΔEO of deb and of orig from the number of
	// positive predictions per cell.
	gaps := func(pd, po *[4]int) (float64, float64) {
		gap := func(p *[4]int) float64 {
			n0, n1 := len(cells[0])+len(cells[1]), len(cells[2])+len(cells[3])
			dp := math.Abs(float64(p[0]+p[1])/float64(n0) - float64(p[2]+p[3])/float64(n1))
			eo := math.Abs(float64(p[1])/float64(len(cells[1])) - float64(p[3])/float64(len(cells[3])))
			return dp + eo
		}
		return gap(pd), gap(po)
	}
	var pd, po [4]int
	for k, c := range cells {
		for _, b := range c {
			pd[k] += int(b & 1)
			po[k] += int(b >> 1)
		}
	}
	if gd, g0 := gaps(&pd, &po); !(gd > g0) {
		return false
	}
	atLeastAsFair := 0
	for r := 0; r < fallbackResamples; r++ {
		pd, po = [4]int{}, [4]int{}
		for k, c := range cells {
			for range c {
				b := c[rng.IntN(len(c))]
				pd[k] += int(b & 1)
				po[k] += int(b >> 1)
			}
		}
		if gd, g0 := gaps(&pd, &po); gd <= g0 {
			atLeastAsFair++
		}
	}
	return float64(atLeastAsFair) <= fallbackLevel*fallbackResamples
}
