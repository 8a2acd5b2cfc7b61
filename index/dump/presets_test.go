package dump

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// Ensure that every preset is valid and complete, that names are unique and
// sorted, and that LookupPreset hands out copies.
func TestPresets(t *testing.T) {
	names := PresetNames()
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("names not sorted and unique: %v", names)
	}
	for _, want := range []string{"bail", "credit", "german", "income", "nba", "pokec_n", "pokec_z", "synth"} {
		if !slices.Contains(names, want) {
			t.Errorf("preset %s missing from %v", want, names)
		}
	}
	ps := Presets()
	if len(ps) != len(names) {
		t.Fatalf("Presets has %d entries, names %d", len(ps), len(names))
	}
	for i, p := range ps {
		if p.Name != names[i] || p.NodeFile == "" || p.EdgeFile == "" || p.Origin == "" {
			t.Errorf("preset %d: %+v", i, p)
		}
		if err := p.Spec.Validate(); err != nil || !p.Spec.Scale {
			t.Errorf("preset %s: %v (scale %v)", p.Name, err, p.Spec.Scale)
		}
		switch p.Split {
		case SplitDIG:
			if p.DIG.Validate() != nil || p.DIG.B == 0 {
				t.Errorf("preset %s: DIG params %+v", p.Name, p.DIG)
			}
		case SplitNIFTY:
			if p.LabelNumber <= 0 {
				t.Errorf("preset %s: label number %d", p.Name, p.LabelNumber)
			}
		default:
			t.Errorf("preset %s: split %q", p.Name, p.Split)
		}
	}
	g, _ := LookupPreset("german")
	g.Spec.Label.Named["1"] = 0
	g.Spec.Exclude[0] = "x"
	if g2, _ := LookupPreset("german"); g2.Spec.Label.Named["1"] != 1 || g2.Spec.Exclude[0] == "x" {
		t.Errorf("LookupPreset shares state with the registry: %+v", g2.Spec)
	}
	if _, err := LookupPreset("nope"); !errors.Is(err, ErrUnknownPreset) || !strings.Contains(err.Error(), "german") {
		t.Errorf("LookupPreset(nope) = %v", err)
	}
}

// Ensure that SensitiveFeature keeps the sensitive column among the
// features, mapped when the mapping is named and raw when numeric, at its
// file position or where Features lists it, and that the spec refuses the
// sensitive column as a feature without it.
func TestSpec_SensitiveFeature(t *testing.T) {
	const csv = "y,g,a\r\n1,Female,10\r\n-1,Male,20\r\n1,?,30"
	named := map[string]int8{"Female": 1, "Male": 0, "?": -1}
	labels := map[string]int8{"1": 1, "-1": 0}
	cases := []struct {
		name  string
		spec  Spec
		names []string
		feats [][]float32
	}{
		{"named, default set", Spec{Sensitive: SensitiveSpec{Column: "g", Named: named}, Label: LabelSpec{Column: "y", Named: labels}, SensitiveFeature: true},
			[]string{"g", "a"}, [][]float32{{1, 10}, {0, 20}, {-1, 30}}},
		{"named, listed", Spec{Sensitive: SensitiveSpec{Column: "g", Named: named}, Label: LabelSpec{Column: "y", Named: labels}, SensitiveFeature: true, Features: []string{"a", "g"}},
			[]string{"a", "g"}, [][]float32{{10, 1}, {20, 0}, {30, -1}}},
		{"dropped", Spec{Sensitive: SensitiveSpec{Column: "g", Named: named}, Label: LabelSpec{Column: "y", Named: labels}},
			[]string{"a"}, [][]float32{{10}, {20}, {30}}},
		{"scaled", Spec{Sensitive: SensitiveSpec{Column: "g", Named: named}, Label: LabelSpec{Column: "y", Named: labels}, SensitiveFeature: true, Scale: true},
			[]string{"g", "a"}, [][]float32{{1, -1}, {0, 0}, {-1, 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab, rows, err := readAll(t, csv, c.spec)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tab.FeatureNames, c.names) {
				t.Errorf("features %v, want %v", tab.FeatureNames, c.names)
			}
			for i, r := range rows {
				if !slices.Equal(r.Features, c.feats[i]) {
					t.Errorf("row %d: %v, want %v", i, r.Features, c.feats[i])
				}
			}
			if tab.Groups != [2]int{1, 1} || tab.UnknownSensitive != 1 || tab.Labels != [2]int{1, 2} {
				t.Errorf("groups %v unknown %d labels %v", tab.Groups, tab.UnknownSensitive, tab.Labels)
			}
		})
	}
	// Numeric sensitive column: the raw value is the feature, the threshold
	// only makes the group.
	tab, rows, err := readAll(t, "s,y\n0,0\n3,1\n-2,1\n", Spec{Sensitive: SensitiveSpec{Column: "s", Threshold: 1}, Label: LabelSpec{Column: "y"}, SensitiveFeature: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tab.FeatureNames, []string{"s"}) || rows[1].Features[0] != 3 || rows[2].Features[0] != -2 ||
		rows[1].Sensitive != 1 || rows[2].Sensitive != Unknown {
		t.Errorf("numeric kept sensitive: %v %+v", tab.FeatureNames, rows)
	}
	bad := Spec{Sensitive: SensitiveSpec{Column: "g"}, Label: LabelSpec{Column: "y"}, Features: []string{"g"}}
	if err := bad.Validate(); !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "SensitiveFeature") {
		t.Errorf("sensitive feature without the flag: %v", err)
	}
}

// Ensure that a label value map matches cells by string and, for numeric
// keys, by value, that an unmapped value is an error naming it, and that two
// keys with one value and different classes are refused.
func TestSpec_LabelValues(t *testing.T) {
	m, err := ParseNamedMap("1=1,-1=0")
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Sensitive: SensitiveSpec{Column: "s"}, Label: LabelSpec{Column: "y", Named: m}}
	tab, rows, err := readAll(t, "s,y\n0,1\n1,-1\n0,-1.0\n1, 1e0 \n0,+1\n", spec)
	if err != nil {
		t.Fatal(err)
	}
	want := []int8{1, 0, 0, 1, 1}
	for i, r := range rows {
		if r.Label != want[i] {
			t.Errorf("row %d: label %d, want %d", i, r.Label, want[i])
		}
	}
	if tab.Labels != [2]int{2, 3} || tab.NumUnlabelled != 0 {
		t.Errorf("labels %v unlabelled %d", tab.Labels, tab.NumUnlabelled)
	}
	_, _, err = readAll(t, "s,y\n0,1\n1,2\n", spec)
	var e *Error
	if !errors.Is(err, ErrUnmappedLabel) || !errors.As(err, &e) || e.Line != 3 || !strings.Contains(err.Error(), `"2"`) {
		t.Errorf("unmapped value: %v", err)
	}
	for _, s := range []string{"1=1,1.0=0", "0=0,-0=1"} {
		m, err := ParseNamedMap(s)
		if err != nil {
			t.Fatal(err)
		}
		sp := Spec{Sensitive: SensitiveSpec{Column: "s"}, Label: LabelSpec{Column: "y", Named: m}}
		if err := sp.Validate(); !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "same number") {
			t.Errorf("%s: %v", s, err)
		}
	}
	if m, _ := ParseNamedMap("1=1,1.0=1,x=0"); (&Spec{Sensitive: SensitiveSpec{Column: "s"}, Label: LabelSpec{Column: "y", Named: m}}).Validate() != nil {
		t.Errorf("equal keys with the same class refused")
	}
}

// Ensure that the German preset reads the published German credit file as
// NIFTY does: 1,000 nodes, 27 features (Gender kept, two columns dropped),
// groups 690/310 and labels 300/700 with none unlabelled.
func TestPreset_GermanShared(t *testing.T) {
	p, _ := LookupPreset("german")
	path, err := FindFile("../../../shared/datasets/german", p.NodeFile)
	if err != nil {
		t.Skip("shared German credit dump not present:", err)
	}
	tab, err := AnalyzeFile(context.Background(), path, p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Rows != 1000 || tab.Features() != 27 || tab.FeatureNames[0] != "Gender" ||
		slices.Contains(tab.FeatureNames, "PurposeOfLoan") || slices.Contains(tab.FeatureNames, "OtherLoansAtStore") {
		t.Errorf("rows %d features %d %v", tab.Rows, tab.Features(), tab.FeatureNames)
	}
	// Male = 0 (690), Female = 1 (310); -1 → 0 (300), 1 (700).
	if tab.Groups != [2]int{690, 310} || tab.UnknownSensitive != 0 || tab.Labels != [2]int{300, 700} || tab.NumUnlabelled != 0 {
		t.Errorf("groups %v (unknown %d) labels %v (unlabelled %d)", tab.Groups, tab.UnknownSensitive, tab.Labels, tab.NumUnlabelled)
	}
}
