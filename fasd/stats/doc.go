// Package stats holds the small-sample statistics that evaluation reports
// use: Student's t distribution (CDF and quantile) and the paired mean
// difference of two per-seed series with its t confidence interval.
//
// It is pure computation on float64 slices, with no dependency beyond the
// standard library. Undefined results (too few pairs, zero spread where a
// ratio is needed) are NaN, never a made-up number.
package stats
