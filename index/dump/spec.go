package dump

import (
	"errors"
	"fmt"
	"sort"
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
	// Unknown. A cell missing from the map is an ErrUnmappedSensitive error.
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
	// Unlabelled. A cell missing from the map is an ErrUnmappedLabel error.
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
	// order.
	Features []string
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
		if f == s.IDColumn || f == s.Sensitive.Column || f == s.Label.Column {
			bad("feature column %q is also the id, sensitive or label column", f)
		}
	}
	return errors.Join(errs...)
}

// Preset names a known dump: its file names, column spec and split protocol.
type Preset struct {
	Name     string
	NodeFile string // file name in the dataset directory (may also exist as NodeFile+".gz")
	EdgeFile string
	Spec     Spec
	// Split names the split parameters of method.md §1 ("nba" or "pokec");
	// package split maps the name to its parameters.
	Split string
}

// presets are the FairGNN dumps (method.md §1) and the synthetic generator's
// output. Scaling is on for all of them (the DIG protocol).
var presets = map[string]Preset{
	"nba": {
		Name: "nba", NodeFile: "nba.csv", EdgeFile: "nba_relationship.txt",
		Spec: Spec{
			IDColumn:  "user_id",
			Sensitive: SensitiveSpec{Column: "country"},
			Label:     LabelSpec{Column: "SALARY"},
			Scale:     true,
		},
		Split: "nba",
	},
	"pokec_z": {
		Name: "pokec_z", NodeFile: "region_job.csv", EdgeFile: "region_job_relationship.txt",
		Spec:  pokecSpec(),
		Split: "pokec",
	},
	"pokec_n": {
		Name: "pokec_n", NodeFile: "region_job_2.csv", EdgeFile: "region_job_2_relationship.txt",
		Spec:  pokecSpec(),
		Split: "pokec",
	},
	"synth": {
		Name: "synth", NodeFile: "synth.csv", EdgeFile: "synth_relationship.txt",
		Spec: Spec{
			IDColumn:  "user_id",
			Sensitive: SensitiveSpec{Column: "sens"},
			Label:     LabelSpec{Column: "label"},
			Scale:     true,
		},
		Split: "pokec",
	},
}

func pokecSpec() Spec {
	return Spec{
		IDColumn:  "user_id",
		Sensitive: SensitiveSpec{Column: "region"},
		Label:     LabelSpec{Column: "I_am_working_in_field"},
		Scale:     true,
	}
}

// ErrUnknownPreset is returned by LookupPreset for an unknown name.
var ErrUnknownPreset = errors.New("dump: unknown preset")

// LookupPreset returns the preset called name. The returned value is a copy
// the caller may modify.
func LookupPreset(name string) (Preset, error) {
	p, ok := presets[name]
	if !ok {
		return Preset{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownPreset, name, strings.Join(PresetNames(), ", "))
	}
	return p, nil
}

// PresetNames returns the preset names, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
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
