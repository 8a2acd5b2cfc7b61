package fasd

import (
	"math"
	"slices"
	"sort"
)

// plattRidge is the ridge on the recalibration's slope and intercept in
// PlattThreshold: small against any validation set, it only keeps Newton's
// method finite when the validation scores separate the classes perfectly.
const plattRidge = 1e-3

// logitClamp keeps logit(p) finite for p at 0 or 1.
const logitClamp = 1e-7

// clampedLogit is log(p/(1−p)) with p clamped to [1e-7, 1−1e-7].
func clampedLogit(p float64) float64 {
	p = min(max(p, logitClamp), 1-logitClamp)
	return math.Log(p / (1 - p))
}

// PlattThreshold recalibrates scores on labelled data (Platt scaling):
// it fits P' = σ(a·logit p + b) by Newton's method on the log loss with a
// small ridge on a and b, and returns the threshold on the raw score at
// which P' = ½, σ(−b/a). Predicting 1 iff p > threshold is then the
// recalibrated model's Bayes decision for accuracy on data distributed
// like the labelled set: it corrects both a shifted prior and a model
// whose scores are not calibrated (an epoch chosen by ranking, say). When
// the fit is not increasing in p (a ≤ 0: the scores rank the set
// backwards) or cannot be computed (fewer than one label of each class),
// fallback is returned. NaN scores are skipped.
func PlattThreshold(scores []float64, labels []int8, fallback float64) float64 {
	z := make([]float64, 0, len(scores))
	y := make([]float64, 0, len(scores))
	var pos, neg int
	for i, p := range scores {
		if math.IsNaN(p) {
			continue
		}
		z = append(z, clampedLogit(p))
		y = append(y, float64(labels[i]))
		if labels[i] == 1 {
			pos++
		} else {
			neg++
		}
	}
	if pos == 0 || neg == 0 {
		return fallback
	}
	// loss is the ridge-penalised log loss of (a, b).
	loss := func(a, b float64) float64 {
		l := plattRidge * (a*a + b*b) / 2
		for i, zi := range z {
			m := a*zi + b
			// log(1 + e^m) − y·m, computed without overflow
			l += max(m, 0) + math.Log1p(math.Exp(-math.Abs(m))) - y[i]*m
		}
		return l
	}
	a, b := 0.0, 0.0
	cur := loss(a, b)
	for range 100 {
		var ga, gb, haa, hab, hbb float64
		for i, zi := range z {
			q := 1 / (1 + math.Exp(-(a*zi + b)))
			r, w := q-y[i], q*(1-q)
			ga += r * zi
			gb += r
			haa += w * zi * zi
			hab += w * zi
			hbb += w
		}
		ga += plattRidge * a
		gb += plattRidge * b
		haa += plattRidge
		hbb += plattRidge
		det := haa*hbb - hab*hab
		if !(det > 0) {
			break
		}
		da := (hbb*ga - hab*gb) / det
		db := (-hab*ga + haa*gb) / det
		// Newton's step, halved until the loss does not rise (damped
		// Newton: convergent on this convex loss from any start).
		step := 1.0
		next := loss(a-da, b-db)
		for next > cur && step > 1e-6 {
			step /= 2
			next = loss(a-step*da, b-step*db)
		}
		a -= step * da
		b -= step * db
		cur = next
		if step*(math.Abs(da)+math.Abs(db)) < 1e-12 {
			break
		}
	}
	if !(a > 0) || math.IsNaN(b) {
		return fallback
	}
	return 1 / (1 + math.Exp(b/a))
}

// AccuracyThreshold returns the threshold t that maximises the accuracy
// of "1 iff p > t" on labelled scores. Candidates are the midpoints
// between consecutive distinct scores and one value below (everything 1)
// and above (everything 0) them all; among equally accurate candidates the
// one closest to fallback in logit wins. With no usable score it returns
// fallback. NaN scores are skipped.
func AccuracyThreshold(scores []float64, labels []int8, fallback float64) float64 {
	type pair struct {
		p float64
		y int8
	}
	ps := make([]pair, 0, len(scores))
	correct := 0
	for i, p := range scores {
		if math.IsNaN(p) {
			continue
		}
		ps = append(ps, pair{p, labels[i]})
		if labels[i] == 1 {
			correct++ // everything predicted 1
		}
	}
	if len(ps) == 0 {
		return fallback
	}
	slices.SortFunc(ps, func(a, b pair) int {
		switch {
		case a.p < b.p:
			return -1
		case a.p > b.p:
			return 1
		}
		return int(a.y) - int(b.y)
	})
	lf := clampedLogit(fallback)
	bestT := max(0, ps[0].p-1e-9)
	best := correct
	bestD := math.Abs(clampedLogit(bestT) - lf)
	for i := 0; i < len(ps); {
		j := i
		for j < len(ps) && ps[j].p == ps[i].p {
			if ps[j].y == 0 {
				correct++
			} else {
				correct--
			}
			j++
		}
		t := min(1, ps[i].p+1e-9)
		if j < len(ps) {
			t = (ps[i].p + ps[j].p) / 2
		}
		d := math.Abs(clampedLogit(t) - lf)
		if correct > best || correct == best && d < bestD {
			best, bestT, bestD = correct, t, d
		}
		i = j
	}
	return bestT
}

// RateThreshold returns the threshold t at which the share of scores with
// p > t is closest to the share of labels equal to 1: predicting "1 iff
// p > t" on data like the labelled set then predicts class 1 as often as
// it occurs there. Only the ranking of the scores matters, so a model
// whose scores are shifted or badly calibrated still predicts class 1
// about as often as it is labelled (exactly as often when the scores are
// distinct), never one class for every node because its scores sit on
// one side of a fixed level. Candidates are the midpoints between consecutive
// distinct scores and one value below and one above them all; among
// equally close candidates the one closest to fallback in logit wins.
// With no usable score it returns fallback. NaN scores are skipped.
func RateThreshold(scores []float64, labels []int8, fallback float64) float64 {
	ps := make([]float64, 0, len(scores))
	pos := 0
	for i, p := range scores {
		if math.IsNaN(p) {
			continue
		}
		ps = append(ps, p)
		if labels[i] == 1 {
			pos++
		}
	}
	if len(ps) == 0 {
		return fallback
	}
	slices.Sort(ps)
	n := float64(len(ps))
	target := float64(pos) / n
	lf := clampedLogit(fallback)
	// gap is how far the share of scores above t is from target; counted,
	// not inferred from t's place, so a midpoint that rounds onto a score
	// is judged by what "p > t" will do.
	gap := func(t float64) float64 {
		above := len(ps) - sort.Search(len(ps), func(k int) bool { return ps[k] > t })
		return math.Abs(float64(above)/n - target)
	}
	bestT := max(0, ps[0]-1e-9) // below them all
	bestGap := gap(bestT)
	bestD := math.Abs(clampedLogit(bestT) - lf)
	for i := 0; i < len(ps); {
		j := i
		for j < len(ps) && ps[j] == ps[i] {
			j++
		}
		t := min(1, ps[i]+1e-9) // above them all
		if j < len(ps) {
			t = (ps[i] + ps[j]) / 2
		}
		g, d := gap(t), math.Abs(clampedLogit(t)-lf)
		if g < bestGap || g == bestGap && d < bestD {
			bestT, bestGap, bestD = t, g, d
		}
		i = j
	}
	return bestT
}
