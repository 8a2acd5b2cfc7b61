package dump

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fasd-db/fasd/fasd/attr"
)

// Unknown marks a node whose sensitive attribute is unknown, and Unlabelled a
// node without a label. Both are attr.Unknown (-1, as in the FairGNN
// files).
const (
	Unknown    = attr.Unknown
	Unlabelled = attr.Unknown
)

// Endpoints says how edge-file endpoints name nodes.
type Endpoints int

const (
	// EndpointsAuto means ids when the Spec has an id column, row indices
	// otherwise (where the two coincide).
	EndpointsAuto Endpoints = iota
	// EndpointsID means endpoints are values of the id column.
	EndpointsID
	// EndpointsRow means endpoints are 0-based row indices of the node file.
	EndpointsRow
)

func (e Endpoints) String() string {
	switch e {
	case EndpointsAuto:
		return "auto"
	case EndpointsID:
		return "id"
	case EndpointsRow:
		return "row"
	}
	return "Endpoints(" + strconv.Itoa(int(e)) + ")"
}

// SensitiveSpec says which column holds the sensitive attribute and how its
// cells map to the groups 0 and 1.
type SensitiveSpec struct {
	Column string
	// Named, if non-nil, maps a cell (after trimming spaces) to 0, 1 or
	// Unknown. A key that is a number also matches every cell with the same
	// numeric value ("1" matches "1.0" and "1e0"). A cell missing from the
	// map is an ErrUnmappedSensitive error.
	Named map[string]int8
	// Threshold is used when Named is nil, as in FairGNN with 0: a numeric
	// cell v < 0 is Unknown, 0 ≤ v ≤ Threshold is group 0 and v > Threshold
	// is group 1.
	Threshold float64
}

// LabelSpec says which column holds the label and how its cells map to the
// classes 0 and 1.
type LabelSpec struct {
	Column string
	// Named, if non-nil, maps a cell (after trimming spaces) to 0, 1 or
	// Unlabelled, as a label value map: {"1": 1, "-1": 0} reads German
	// credit's -1 as class 0. A key that is a number also matches every cell
	// with the same numeric value ("1" matches "1.0"). A cell missing from
	// the map is an ErrUnmappedLabel error.
	Named map[string]int8
	// Unlabelled is, for the numeric mapping (Named nil), the value that
	// marks an unlabelled node, compared numerically; "" means "-1".
	// Otherwise 0 → 0 and every value ≥ 1 → 1 (FairGNN's "values > 1
	// become 1"); any other value is an ErrUnmappedLabel error.
	Unlabelled string
	// AllLabelled, for the numeric mapping, says no value means unlabelled.
	AllLabelled bool
}

// Spec describes the columns of a node file. The zero value is not valid:
// Sensitive.Column and Label.Column are required.
type Spec struct {
	// IDColumn names the int64 node-id column; "" means the file has none
	// and the 0-based row index is the id.
	IDColumn  string
	Sensitive SensitiveSpec
	Label     LabelSpec
	// Features lists the feature columns in the order wanted. Nil means every
	// column except the id, sensitive, label and Exclude columns, in file
	// order (the sensitive column included if SensitiveFeature).
	Features []string
	// SensitiveFeature keeps the sensitive column as a feature as well, as
	// the NIFTY loaders do: in the default feature set at its place in the
	// file, or where Features lists it. With a Named mapping the feature is
	// the mapped value (0, 1, or -1 for Unknown); with the numeric mapping
	// it is the cell's number, as for any feature. Scale applies to it too.
	SensitiveFeature bool
	// Exclude lists columns to drop from the default feature set. It must be
	// empty when Features is given.
	Exclude []string
	// Scale maps every feature column to [-1, 1] with
	// x' = 2(x-min)/(max-min) - 1 over all rows; a constant column maps to 0.
	Scale bool
	// Endpoints says how the edge file names nodes.
	Endpoints Endpoints
}

// Validate reports every problem of the spec, joined.
func (s *Spec) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, newError(ErrSpec, fmt.Sprintf(format, args...)))
	}
	if s.Sensitive.Column == "" {
		bad("no sensitive column")
	}
	if s.Label.Column == "" {
		bad("no label column")
	}
	if s.Sensitive.Column != "" && s.Sensitive.Column == s.Label.Column {
		bad("column %q is both sensitive and label", s.Label.Column)
	}
	if s.IDColumn != "" && (s.IDColumn == s.Sensitive.Column || s.IDColumn == s.Label.Column) {
		bad("id column %q is also sensitive or label", s.IDColumn)
	}
	for k, v := range s.Sensitive.Named {
		if v < -1 || v > 1 {
			bad("sensitive mapping %q → %d: want 0, 1 or -1", k, v)
		}
	}
	for k, v := range s.Label.Named {
		if v < -1 || v > 1 {
			bad("label mapping %q → %d: want 0, 1 or -1", k, v)
		}
	}
	for _, m := range []struct {
		role  string
		named map[string]int8
	}{{"sensitive", s.Sensitive.Named}, {"label", s.Label.Named}} {
		if _, err := numericKeys(m.named); err != nil {
			bad("%s mapping: %v", m.role, err)
		}
	}
	if s.Label.Named == nil && s.Label.Unlabelled != "" {
		if _, err := parseNumber(s.Label.Unlabelled); err != nil {
			bad("unlabelled value %q is not a number", s.Label.Unlabelled)
		}
	}
	if len(s.Features) > 0 && len(s.Exclude) > 0 {
		bad("both Features and Exclude given")
	}
	if s.Endpoints < EndpointsAuto || s.Endpoints > EndpointsRow {
		bad("unknown endpoints mode %d", s.Endpoints)
	}
	if s.Endpoints == EndpointsID && s.IDColumn == "" {
		bad("endpoints are ids but there is no id column")
	}
	seen := map[string]bool{}
	for _, f := range s.Features {
		if seen[f] {
			bad("feature column %q listed twice", f)
		}
		seen[f] = true
		switch {
		case f == s.IDColumn || f == s.Label.Column:
			bad("feature column %q is also the id or label column", f)
		case f == s.Sensitive.Column && !s.SensitiveFeature:
			bad("feature column %q is the sensitive column (set SensitiveFeature / --sens-feature to keep it as a feature)", f)
		}
	}
	return errors.Join(errs...)
}

// numericKeys returns the keys of a value map that are numbers, by value.
// Two keys with the same value ("1" and "1.0") are an error unless they map
// to the same class.
func numericKeys(named map[string]int8) (map[float64]int8, error) {
	var num map[float64]int8
	var first map[float64]string
	keys := make([]string, 0, len(named))
	for k := range named {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic error messages
	for _, k := range keys {
		x, err := parseNumber(trimSpace(k))
		if err != nil {
			continue
		}
		if num == nil {
			num, first = map[float64]int8{}, map[float64]string{}
		}
		if v, dup := num[x]; dup && v != named[k] {
			return nil, fmt.Errorf("keys %q and %q are the same number but map to %d and %d", first[x], k, v, named[k])
		}
		if _, dup := num[x]; !dup {
			num[x], first[x] = named[k], k
		}
	}
	return num, nil
}

// ParseNamedMap parses a mapping written "a=0,b=1,?=-1" (for command-line
// flags) into a map suitable for SensitiveSpec.Named or LabelSpec.Named.
// Keys are trimmed of spaces; values must be 0, 1 or -1.
func ParseNamedMap(s string) (map[string]int8, error) {
	m := map[string]int8{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, newError(ErrSpec, fmt.Sprintf("mapping entry %q: want NAME=VALUE", part))
		}
		k = trimSpace(k)
		n, err := strconv.Atoi(trimSpace(v))
		if err != nil || n < -1 || n > 1 {
			return nil, newError(ErrSpec, fmt.Sprintf("mapping entry %q: value must be 0, 1 or -1", part))
		}
		if _, dup := m[k]; dup {
			return nil, newError(ErrSpec, fmt.Sprintf("mapping key %q given twice", k))
		}
		m[k] = int8(n)
	}
	return m, nil
}
