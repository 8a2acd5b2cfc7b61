package index

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/fasd-db/fasd/storage"
)

// RangeSlack is how far beyond the loaded range a new feature value may
// lie, in multiples of the range: a value of column j is accepted when it
// lies in [min − RangeSlack·(max−min), max + RangeSlack·(max−min)], min
// and max being the extremes of the column in the loaded dump. With
// scaling to [-1, 1] that is a stored value in [-3, 3]. A column that was
// constant in the dump (min = max) accepts only its constant.
const RangeSlack = 1

// Scaling is how Load mapped the dump's feature values (the numbers of the
// node file) to the stored ones, recorded in the graph's metadata so that
// nodes added or edited later are scaled the same way (Graph.Scaling).
type Scaling struct {
	// Scaled reports that the features were scaled to [-1, 1] with
	// x' = 2(x−min)/(max−min) − 1 (a constant column to 0); otherwise
	// they are stored as float32(x).
	Scaled bool `json:"scaled"`
	// Min and Max are the extremes of each feature column over the loaded
	// dump, in the dump's units.
	Min []float64 `json:"min"`
	Max []float64 `json:"max"`
}

func (s *Scaling) validate(dim int) error {
	if len(s.Min) != dim || len(s.Max) != dim {
		return fmt.Errorf("%w: scaling has %d/%d columns, schema has %d", ErrCorrupt, len(s.Min), len(s.Max), dim)
	}
	for j := range s.Min {
		if !(s.Min[j] <= s.Max[j]) || math.IsInf(s.Min[j], 0) || math.IsInf(s.Max[j], 0) {
			return fmt.Errorf("%w: scaling of column %d: range [%g, %g]", ErrCorrupt, j, s.Min[j], s.Max[j])
		}
	}
	return nil
}

// Window returns the interval of values of column j (in the dump's units)
// that Scale accepts: the loaded range widened by RangeSlack range widths
// on each side, within the float32 range when features are not scaled.
func (s *Scaling) Window(j int) (lo, hi float64) {
	span := s.Max[j] - s.Min[j]
	lo, hi = s.Min[j]-RangeSlack*span, s.Max[j]+RangeSlack*span
	if math.IsInf(span, 0) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = s.Min[j], s.Max[j]
	}
	if !s.Scaled {
		lo, hi = max(lo, -math.MaxFloat32), min(hi, math.MaxFloat32)
	}
	return lo, hi
}

// Scale maps value v of column j, in the dump's units, to its stored value
// exactly as Load did for values inside the loaded range (linearly
// extrapolated beyond it). A value that is not finite is an error wrapping
// ErrInvalid; one outside Window is an error wrapping ErrOutOfRange, or,
// with clip, is clipped to the nearest end of Window first.
func (s *Scaling) Scale(j int, v float64, clip bool) (float32, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w: %v is not finite", ErrInvalid, v)
	}
	lo, hi := s.Window(j)
	if v < lo || v > hi {
		if !clip {
			return 0, fmt.Errorf("%w: %s; the loaded dump's range is [%s, %s], values within %d range width(s) of it are accepted",
				ErrOutOfRange, fmtFloat(v), fmtFloat(s.Min[j]), fmtFloat(s.Max[j]), RangeSlack)
		}
		v = max(lo, min(hi, v))
	}
	if !s.Scaled {
		return float32(v), nil
	}
	mn, mx := s.Min[j], s.Max[j]
	span := mx - mn
	var x float64
	switch {
	case span == 0:
		return 0, nil
	case math.IsInf(span, 0):
		x = 2*((v/2-mn/2)/(mx/2-mn/2)) - 1
	default:
		// The loader's formula (package dump), clamped like it inside the
		// loaded range so that a value of the dump maps to the same bits.
		x = 2*((v-mn)/span) - 1
	}
	if v >= mn && v <= mx {
		x = max(-1, min(1, x))
	}
	return float32(x), nil
}

// StoredWindow returns the interval of stored values of column j that
// Scale can produce: [-1−2·RangeSlack, 1+2·RangeSlack] for a scaled column,
// {0} for a scaled constant one, Window for unscaled features.
func (s *Scaling) StoredWindow(j int) (lo, hi float64) {
	switch {
	case !s.Scaled:
		return s.Window(j)
	case s.Max[j] == s.Min[j]:
		return 0, 0
	}
	return -1 - 2*RangeSlack, 1 + 2*RangeSlack
}

// checkStored checks a stored value of column j against StoredWindow, with
// a little room for rounding: the guard of Tx.AddNode and Tx.SetFeatures,
// which take stored values.
func (s *Scaling) checkStored(j int, x float32) error {
	lo, hi := s.StoredWindow(j)
	pad := 1e-6 * max(1, math.Abs(lo), math.Abs(hi))
	if v := float64(x); v < lo-pad || v > hi+pad {
		what := "stored"
		if s.Scaled {
			what = "scaled"
		}
		return fmt.Errorf("%w: %s value %s outside [%s, %s]", ErrOutOfRange, what, fmtFloat(float64(x)), fmtFloat(lo), fmtFloat(hi))
	}
	return nil
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Scaling returns the feature scaling recorded by the load that made the
// graph. It returns (nil, nil) for a graph made by Create, whose features
// are stored as given, and an error wrapping ErrNoScaling for a graph
// loaded by a build that did not record it (reload it with Replace, or
// give new features in stored units).
func (g *Graph) Scaling() (*Scaling, error) {
	return readScaling(g.store, g.schema.Dim())
}

func readScaling(r storage.Reader, dim int) (*Scaling, error) {
	b, err := r.Get(keyScaling)
	if errors.Is(err, storage.ErrNotFound) {
		switch _, err := r.Get(keyLoad); {
		case errors.Is(err, storage.ErrNotFound):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("index: read load report: %w", err)
		}
		return nil, ErrNoScaling
	}
	if err != nil {
		return nil, fmt.Errorf("index: read scaling: %w", err)
	}
	var s Scaling
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%w: scaling: %w", ErrCorrupt, err)
	}
	if err := s.validate(dim); err != nil {
		return nil, err
	}
	return &s, nil
}
