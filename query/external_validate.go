// The validation of an ExternalUpdate: once, in ApplyExternal, before
// anything is written (field-named errors wrapping ErrInvalid), and the
// conversion of its features to stored values.

package query

import (
	"errors"
	"fmt"
	"math"

	"github.com/fasd-db/fasd/index"
)

// Validate checks u against a graph with dim features without reading the
// graph: feature counts, finite features, sensitive values and labels,
// splits and their membership rule, ids given twice, self-loops. The error
// wraps ErrInvalid and names the field (for example "nodes[2] (id 7)
// .features[0]"). Feature ranges need the graph's scaling and are checked
// by ApplyExternal.
func (u *ExternalUpdate) Validate(dim int) error {
	checkFeatures := func(field string, i int, id int64, f []float64) error {
		if len(f) != dim {
			return fmt.Errorf("%w: %s[%d] (id %d): %d features, the graph has %d", ErrInvalid, field, i, id, len(f), dim)
		}
		for j, x := range f {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%w: %s[%d] (id %d).features[%d] is not finite", ErrInvalid, field, i, id, j)
			}
		}
		return nil
	}
	checkMembership := func(field string, i int, id int64, s, y int8, sp index.Split) error {
		switch {
		case sp > index.SplitTest:
			return fmt.Errorf("%w: %s[%d] (id %d).split: %v", ErrInvalid, field, i, id, sp)
		case sp != index.SplitNone && y == index.Unlabelled:
			return fmt.Errorf("%w: %s[%d] (id %d): split %v needs a label", ErrInvalid, field, i, id, sp)
		case sp == index.SplitTest && s == index.Unknown:
			return fmt.Errorf("%w: %s[%d] (id %d): split test needs a known sensitive value", ErrInvalid, field, i, id)
		}
		return nil
	}
	checkTri := func(field string, i int, id int64, what string, x int8) error {
		if x < -1 || x > 1 {
			return fmt.Errorf("%w: %s[%d] (id %d).%s: %d, want 0 or 1 (-1 or omitted: unknown)", ErrInvalid, field, i, id, what, x)
		}
		return nil
	}
	deleted := make(map[int64]bool, len(u.Delete))
	for i, id := range u.Delete {
		if deleted[id] {
			return fmt.Errorf("%w: delete[%d]: id %d given twice", ErrInvalid, i, id)
		}
		deleted[id] = true
	}
	seen := make(map[int64]bool, len(u.Nodes))
	for i := range u.Nodes {
		n := &u.Nodes[i]
		if seen[n.ID] {
			return fmt.Errorf("%w: nodes[%d]: id %d given twice", ErrInvalid, i, n.ID)
		}
		seen[n.ID] = true
		if err := checkFeatures("nodes", i, n.ID, n.Features); err != nil {
			return err
		}
		if err := errors.Join(checkTri("nodes", i, n.ID, "sensitive", n.Sensitive), checkTri("nodes", i, n.ID, "label", n.Label)); err != nil {
			return err
		}
		if err := checkMembership("nodes", i, n.ID, n.Sensitive, n.Label, n.Split); err != nil {
			return err
		}
		for _, w := range n.Edges {
			if w == n.ID {
				return fmt.Errorf("%w: nodes[%d] (id %d): self-loop", ErrInvalid, i, w)
			}
		}
	}
	edited := make(map[int64]bool, len(u.Edits))
	for i := range u.Edits {
		ed := &u.Edits[i]
		switch {
		case edited[ed.ID]:
			return fmt.Errorf("%w: edits[%d]: id %d given twice", ErrInvalid, i, ed.ID)
		case deleted[ed.ID] && !seen[ed.ID]:
			return fmt.Errorf("%w: edits[%d]: id %d is deleted by the same update", ErrInvalid, i, ed.ID)
		case ed.Features == nil && ed.Sensitive == nil && ed.Label == nil && ed.Split == nil:
			return fmt.Errorf("%w: edits[%d] (id %d): nothing to change", ErrInvalid, i, ed.ID)
		}
		edited[ed.ID] = true
		if ed.Features != nil {
			if err := checkFeatures("edits", i, ed.ID, ed.Features); err != nil {
				return err
			}
		}
		if ed.Sensitive != nil {
			if err := checkTri("edits", i, ed.ID, "sensitive", *ed.Sensitive); err != nil {
				return err
			}
		}
		if ed.Label != nil {
			if err := checkTri("edits", i, ed.ID, "label", *ed.Label); err != nil {
				return err
			}
		}
		if ed.Split != nil {
			// The rule is checked against the edited values that are given;
			// ApplyExternal checks the node's result.
			s, y := int8(0), int8(0)
			if ed.Sensitive != nil {
				s = *ed.Sensitive
			}
			if ed.Label != nil {
				y = *ed.Label
			}
			if err := checkMembership("edits", i, ed.ID, s, y, *ed.Split); err != nil {
				return err
			}
		}
	}
	for _, l := range []struct {
		name  string
		edges [][2]int64
	}{{"add_edges", u.AddEdges}, {"remove_edges", u.RemoveEdges}} {
		for i, e := range l.edges {
			if e[0] == e[1] {
				return fmt.Errorf("%w: %s[%d]: self-loop on %d", ErrInvalid, l.name, i, e[0])
			}
		}
	}
	return nil
}

// featureScaler converts the features of an ExternalUpdate to stored
// values.
type featureScaler struct {
	sc     *index.Scaling // nil: stored as given (a graph made by index.Create)
	names  []string
	stored bool
	clip   bool
}

func (e *Engine) newFeatureScaler(u *ExternalUpdate) (*featureScaler, error) {
	fs := &featureScaler{names: e.g.Schema().Features, stored: u.StoredUnits, clip: u.Clip}
	need := false
	for _, n := range u.Nodes {
		need = need || len(n.Features) > 0
	}
	for _, ed := range u.Edits {
		need = need || ed.Features != nil
	}
	if !need {
		return fs, nil
	}
	sc, err := e.g.Scaling()
	switch {
	case errors.Is(err, index.ErrNoScaling) && u.StoredUnits:
	case errors.Is(err, index.ErrNoScaling):
		return nil, fmt.Errorf("query: features cannot be given in the dump's units: %w; or give them in stored units (StoredUnits, fasd update --stored-units, \"units\": \"stored\")", err)
	case err != nil:
		return nil, err
	}
	fs.sc = sc
	return fs, nil
}

// convert scales f (field[i], external id id) and names the offending
// column in its error, which wraps ErrInvalid and index.ErrOutOfRange or
// index.ErrInvalid.
func (fs *featureScaler) convert(field string, i int, id int64, f []float64) ([]float32, error) {
	out := make([]float32, len(f))
	for j, x := range f {
		var err error
		switch {
		case fs.stored || fs.sc == nil:
			out[j], err = fs.storedValue(j, x)
		default:
			out[j], err = fs.sc.Scale(j, x, fs.clip)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s[%d] (id %d): feature %q: %w", ErrInvalid, field, i, id, fs.names[j], err)
		}
	}
	return out, nil
}

// storedValue checks a value given in stored units; with clip it is
// clipped to what the scaling can produce (the float32 range without a
// recorded scaling).
func (fs *featureScaler) storedValue(j int, x float64) (float32, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%w: %v is not finite", index.ErrInvalid, x)
	}
	lo, hi := -math.MaxFloat32, float64(math.MaxFloat32)
	if fs.sc != nil {
		lo, hi = fs.sc.StoredWindow(j)
	}
	if x < lo || x > hi {
		if !fs.clip {
			return 0, fmt.Errorf("%w: stored value %g outside [%g, %g]", index.ErrOutOfRange, x, lo, hi)
		}
		x = max(lo, min(hi, x))
	}
	return float32(x), nil
}
