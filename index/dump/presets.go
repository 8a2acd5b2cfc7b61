package dump

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fasd-db/fasd/index/split"
)

// SplitMethod names how a preset splits its labelled nodes.
type SplitMethod string

// The split methods of the presets.
const (
	// SplitDIG is the DIG split (split.DIG) with Preset.DIG as cut points.
	SplitDIG SplitMethod = "dig"
	// SplitNIFTY is the per-class NIFTY split (split.NIFTY) with
	// Preset.LabelNumber.
	SplitNIFTY SplitMethod = "nifty"
)

// Preset names a published dump: its file names, its column conventions
// and its split. The presets are the one registry of dataset names: fasd
// load resolves --preset here, and PresetNames is the list the training
// configuration is checked against.
type Preset struct {
	Name string
	// NodeFile and EdgeFile are the published file names; FindFile also
	// accepts them with ".gz" appended.
	NodeFile, EdgeFile string
	Spec               Spec
	// Split is the split the publishing code uses, with its parameters in
	// DIG or LabelNumber.
	Split SplitMethod
	// DIG are the cut points of SplitDIG.
	DIG split.Params
	// LabelNumber is NIFTY's label_number for SplitNIFTY: at most
	// LabelNumber/2 training nodes per class.
	LabelNumber int
	// Origin says where the format and conventions were published.
	Origin string
}

// presets are the known dumps. Features are scaled to [-1, 1] in all of them
// (the DIG protocol; some NIFTY forks scale, some do not, and NIFTY itself
// leaves the sensitive column unscaled).
var presets = []Preset{
	{
		Name: "nba", NodeFile: "nba.csv", EdgeFile: "nba_relationship.txt",
		Spec: Spec{
			IDColumn:  "user_id",
			Sensitive: SensitiveSpec{Column: "country"},
			Label:     LabelSpec{Column: "SALARY"},
			Scale:     true,
		},
		Split: SplitDIG, DIG: split.NBA,
		Origin: "FairGNN (EnyanDai/FairGNN dataset/NBA), DIG split",
	},
	{
		Name: "pokec_z", NodeFile: "region_job.csv", EdgeFile: "region_job_relationship.txt",
		Spec:  pokecSpec(),
		Split: SplitDIG, DIG: split.Pokec,
		Origin: "FairGNN (EnyanDai/FairGNN dataset/pokec), DIG split",
	},
	{
		Name: "pokec_n", NodeFile: "region_job_2.csv", EdgeFile: "region_job_2_relationship.txt",
		Spec:  pokecSpec(),
		Split: SplitDIG, DIG: split.Pokec,
		Origin: "FairGNN (EnyanDai/FairGNN dataset/pokec), DIG split",
	},
	{
		Name: "synth", NodeFile: "synth.csv", EdgeFile: "synth_relationship.txt",
		Spec: Spec{
			IDColumn:  "user_id",
			Sensitive: SensitiveSpec{Column: "sens"},
			Label:     LabelSpec{Column: "label"},
			Scale:     true,
		},
		Split: SplitDIG, DIG: split.Pokec,
		Origin: "fasd gen (package synth)",
	},
	{
		// German credit: no id column, string sensitive values, -1 is the
		// negative class, two columns dropped.
		Name: "german", NodeFile: "german.csv", EdgeFile: "german_edges.txt",
		Spec: Spec{
			Sensitive:        SensitiveSpec{Column: "Gender", Named: map[string]int8{"Female": 1, "Male": 0}},
			Label:            LabelSpec{Column: "GoodCustomer", Named: map[string]int8{"1": 1, "-1": 0}},
			SensitiveFeature: true,
			Exclude:          []string{"OtherLoansAtStore", "PurposeOfLoan"},
			Scale:            true,
		},
		Split: SplitNIFTY, LabelNumber: 100,
		Origin: "NIFTY (chirag126/nifty dataset/german, load_german)",
	},
	{
		Name: "bail", NodeFile: "bail.csv", EdgeFile: "bail_edges.txt",
		Spec: Spec{
			Sensitive:        SensitiveSpec{Column: "WHITE"},
			Label:            LabelSpec{Column: "RECID", AllLabelled: true},
			SensitiveFeature: true,
			Scale:            true,
		},
		Split: SplitNIFTY, LabelNumber: 100,
		Origin: "NIFTY (chirag126/nifty dataset/bail, load_bail)",
	},
	{
		Name: "credit", NodeFile: "credit.csv", EdgeFile: "credit_edges.txt",
		Spec: Spec{
			Sensitive:        SensitiveSpec{Column: "Age"},
			Label:            LabelSpec{Column: "NoDefaultNextMonth", AllLabelled: true},
			SensitiveFeature: true,
			Exclude:          []string{"Single"},
			Scale:            true,
		},
		Split: SplitNIFTY, LabelNumber: 6000,
		Origin: "NIFTY (chirag126/nifty dataset/credit, load_credit)",
	},
	{
		Name: "income", NodeFile: "income.csv", EdgeFile: "income_edges.txt",
		Spec: Spec{
			Sensitive:        SensitiveSpec{Column: "race"},
			Label:            LabelSpec{Column: "income", AllLabelled: true},
			SensitiveFeature: true,
			Scale:            true,
		},
		// BIND's own training script calls load_income with its default
		// label_number, 1000; later forks pass 3000 or 6000.
		Split: SplitNIFTY, LabelNumber: 1000,
		Origin: "BIND (yushundong/BIND data/income.zip, load_income)",
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

// LookupPreset returns the preset called name. The returned value is a deep
// copy the caller may modify.
func LookupPreset(name string) (Preset, error) {
	for _, p := range presets {
		if p.Name == name {
			return p.clone(), nil
		}
	}
	return Preset{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownPreset, name, strings.Join(PresetNames(), ", "))
}

// Presets returns every preset, in the order of PresetNames, as copies.
func Presets() []Preset {
	out := make([]Preset, 0, len(presets))
	for _, name := range PresetNames() {
		p, _ := LookupPreset(name)
		out = append(out, p)
	}
	return out
}

// PresetNames returns the names of the dataset presets, sorted. Every other
// place that accepts a dataset preset name (the training configuration)
// must accept each of these.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for _, p := range presets {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

func (p Preset) clone() Preset {
	c := p
	c.Spec.Features = slices.Clone(p.Spec.Features)
	c.Spec.Exclude = slices.Clone(p.Spec.Exclude)
	c.Spec.Sensitive.Named = cloneMap(p.Spec.Sensitive.Named)
	c.Spec.Label.Named = cloneMap(p.Spec.Label.Named)
	return c
}

func cloneMap(m map[string]int8) map[string]int8 {
	if m == nil {
		return nil
	}
	c := make(map[string]int8, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
