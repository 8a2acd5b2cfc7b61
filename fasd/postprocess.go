package fasd

import (
	"fmt"
	"math"
)

// DefaultTau is the pruning threshold τ of §9.
const DefaultTau = 0.5

// PostOptions configures the post-processing of a debiased adjacency (§9).
// The zero value (or nil) is the paper's: τ = 0.5, continuous weights kept.
type PostOptions struct {
	// Tau is the pruning threshold; entries < Tau become 0. Unset means
	// DefaultTau; Some(0) prunes only negative entries; a negative value is
	// invalid.
	Tau Opt[float64]
	// Clip01 caps surviving weights at 1.
	Clip01 bool
	// Binarize sets surviving weights to 1 (GDSS's quantisation).
	Binarize bool
}

// Validate checks Tau.
func (o *PostOptions) Validate() error {
	if o == nil {
		return nil
	}
	if tau, ok := o.Tau.Get(); ok && (tau < 0 || math.IsNaN(tau) || math.IsInf(tau, 0)) {
		return fmt.Errorf("%w: τ = %v, want finite ≥ 0", ErrInvalidOptions, tau)
	}
	return nil
}

// PostProcess turns the raw n×n output of the reverse sampler into the
// debiased adjacency, in place:
//
//  1. A ← ½(A + Aᵀ) (removes floating-point asymmetry);
//  2. the diagonal is set to 0;
//  3. entries < τ become 0 (this also removes negative entries; a NaN
//     entry counts as below τ);
//  4. surviving weights stay continuous, or are capped at 1 (Clip01) or
//     set to 1 (Binarize).
//
// The result is symmetric with a zero diagonal and no entry in (−∞, τ) other
// than 0. The features X̃ need no post-processing.
func PostProcess(a []float32, n int, opt *PostOptions) error {
	if len(a) != n*n {
		return fmt.Errorf("%w: post-process %d values as %d×%d", ErrShape, len(a), n, n)
	}
	if err := opt.Validate(); err != nil {
		return err
	}
	var o PostOptions
	if opt != nil {
		o = *opt
	}
	tau := o.Tau.Or(DefaultTau)
	for i := range n {
		a[i*n+i] = 0
		for j := i + 1; j < n; j++ {
			w := 0.5 * (float64(a[i*n+j]) + float64(a[j*n+i]))
			if !(w >= tau) {
				w = 0
			} else if o.Binarize {
				w = 1
			} else if o.Clip01 && w > 1 {
				w = 1
			}
			a[i*n+j] = float32(w)
			a[j*n+i] = float32(w)
		}
	}
	return nil
}

// FeatureChange returns ‖X̃ − X‖/‖X‖ (Frobenius, float64). It returns 0 when
// both are zero and +Inf when only X is.
func FeatureChange(x, xt []float32) float64 {
	var diff, base float64
	for i := range x {
		dv := float64(xt[i]) - float64(x[i])
		diff += dv * dv
		base += float64(x[i]) * float64(x[i])
	}
	switch {
	case diff == 0:
		return 0
	case base == 0:
		return math.Inf(1)
	}
	return math.Sqrt(diff / base)
}

// EdgeStats compares the edge sets (non-zero entries above the diagonal) of
// an adjacency before and after debiasing.
type EdgeStats struct {
	Before, After int // edges before and after
	Kept          int // edges present in both
	Removed       int // edges only before
	Added         int // edges only after
	// MinWeight, MaxWeight and MeanWeight describe the weights of the edges
	// after (0 when there are none).
	MinWeight, MaxWeight, MeanWeight float64
}

// CompareEdges returns the EdgeStats of two n×n adjacencies; apply it to the
// post-processed debiased adjacency.
func CompareEdges(before, after []float32, n int) EdgeStats {
	var st EdgeStats
	sum := 0.0
	for i := range n {
		for j := i + 1; j < n; j++ {
			b, a := before[i*n+j] != 0, after[i*n+j] != 0
			switch {
			case b && a:
				st.Kept++
			case b:
				st.Removed++
			case a:
				st.Added++
			}
			if b {
				st.Before++
			}
			if a {
				w := float64(after[i*n+j])
				if st.After == 0 || w < st.MinWeight {
					st.MinWeight = w
				}
				if st.After == 0 || w > st.MaxWeight {
					st.MaxWeight = w
				}
				st.After++
				sum += w
			}
		}
	}
	if st.After > 0 {
		st.MeanWeight = sum / float64(st.After)
	}
	return st
}

// Add accumulates other into st (counts summed, weight range merged, mean
// weighted by edge counts), for totals over many subgraphs.
func (st *EdgeStats) Add(other EdgeStats) {
	if other.After > 0 {
		if st.After == 0 || other.MinWeight < st.MinWeight {
			st.MinWeight = other.MinWeight
		}
		if st.After == 0 || other.MaxWeight > st.MaxWeight {
			st.MaxWeight = other.MaxWeight
		}
		st.MeanWeight = (st.MeanWeight*float64(st.After) + other.MeanWeight*float64(other.After)) / float64(st.After+other.After)
	}
	st.Before += other.Before
	st.After += other.After
	st.Kept += other.Kept
	st.Removed += other.Removed
	st.Added += other.Added
}
