package dump

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var testSpec = Spec{
	IDColumn:  "user_id",
	Sensitive: SensitiveSpec{Column: "country"},
	Label:     LabelSpec{Column: "SALARY"},
	Scale:     true,
}

// readAll runs both passes over csv and returns the table and the rows.
func readAll(t *testing.T, csv string, spec Spec) (*Table, []Row, error) {
	t.Helper()
	tab, err := Analyze(context.Background(), strings.NewReader(csv), "t.csv", spec)
	if err != nil {
		return nil, nil, err
	}
	rr := tab.NewRowReader(strings.NewReader(csv))
	var rows []Row
	for rr.Next() {
		r := *rr.Row()
		r.Features = append([]float32(nil), r.Features...)
		rows = append(rows, r)
	}
	return tab, rows, rr.Err()
}

// Ensure that both passes produce ids, mappings and scaled features as
// documented (min → -1, max → 1, constant → 0).
func TestAnalyze_Scaling(t *testing.T) {
	const in = "user_id,AGE,FG%,country,SALARY,const\n" +
		"10,20,0.5,0,1,7\n" +
		"11,30,0.25,1,-1,7\n" +
		"12,25,1,-1,3,7\n"
	tab, rows, err := readAll(t, in, testSpec)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(tab.FeatureNames, ","), "AGE,FG%,const"; got != want {
		t.Errorf("features %q, want %q", got, want)
	}
	if tab.Rows != 3 || tab.Groups != [2]int{1, 1} || tab.UnknownSensitive != 1 ||
		tab.Labels != [2]int{0, 2} || tab.NumUnlabelled != 1 {
		t.Errorf("stats: %+v", tab)
	}
	want := []Row{
		{Index: 0, Line: 2, ID: 10, Sensitive: 0, Label: 1, Features: []float32{-1, 2*(0.25/0.75) - 1, 0}},
		{Index: 1, Line: 3, ID: 11, Sensitive: 1, Label: Unlabelled, Features: []float32{1, -1, 0}},
		{Index: 2, Line: 4, ID: 12, Sensitive: Unknown, Label: 1, Features: []float32{0, 1, 0}},
	}
	if len(rows) != len(want) {
		t.Fatalf("got %d rows", len(rows))
	}
	for i := range want {
		g, w := rows[i], want[i]
		if g.Index != w.Index || g.Line != w.Line || g.ID != w.ID || g.Sensitive != w.Sensitive || g.Label != w.Label {
			t.Errorf("row %d: got %+v, want %+v", i, g, w)
		}
		for j := range w.Features {
			if math.Abs(float64(g.Features[j]-w.Features[j])) > 1e-7 {
				t.Errorf("row %d feature %d: got %v, want %v", i, j, g.Features[j], w.Features[j])
			}
		}
	}
	for _, c := range []struct {
		id  int64
		row int
		ok  bool
	}{{10, 0, true}, {12, 2, true}, {13, -1, false}, {0, -1, false}} {
		if r, ok := tab.Resolve(c.id); r != c.row || ok != c.ok {
			t.Errorf("Resolve(%d) = %d, %v", c.id, r, ok)
		}
	}
}

// Ensure that named mappings, thresholds, explicit features, exclusion, no id
// column and a custom unlabelled value work.
func TestAnalyze_Options(t *testing.T) {
	const in = "g,y,a,b,c\nm,yes,1,2,3\nf,no,4,5,6\n?,unk,7,8,9\n"
	spec := Spec{
		Sensitive: SensitiveSpec{Column: "g", Named: map[string]int8{"m": 0, "f": 1, "?": -1}},
		Label:     LabelSpec{Column: "y", Named: map[string]int8{"yes": 1, "no": 0, "unk": -1}},
		Features:  []string{"c", "a"},
	}
	tab, rows, err := readAll(t, in, spec)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Endpoints() != EndpointsRow || rows[2].ID != 2 || rows[1].Sensitive != 1 || rows[2].Label != Unlabelled {
		t.Errorf("rows %+v", rows)
	}
	if got := rows[1].Features; got[0] != 6 || got[1] != 4 {
		t.Errorf("unscaled features %v, want [6 4]", got)
	}
	if r, ok := tab.Resolve(2); !ok || r != 2 {
		t.Errorf("Resolve row 2 = %d %v", r, ok)
	}

	const num = "s,y,a\n0.5,9,1\n2,0,1\n-3,1,1\n0,5,1\n"
	spec = Spec{
		Sensitive: SensitiveSpec{Column: "s", Threshold: 1},
		Label:     LabelSpec{Column: "y", Unlabelled: "9"},
		Exclude:   []string{"a"},
	}
	tab, rows, err = readAll(t, num, spec)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Features() != 0 {
		t.Errorf("features %v", tab.FeatureNames)
	}
	gotS := []int8{rows[0].Sensitive, rows[1].Sensitive, rows[2].Sensitive, rows[3].Sensitive}
	gotY := []int8{rows[0].Label, rows[1].Label, rows[2].Label, rows[3].Label}
	if gotS != nil && (gotS[0] != 0 || gotS[1] != 1 || gotS[2] != Unknown || gotS[3] != 0) {
		t.Errorf("sensitive %v", gotS)
	}
	if gotY[0] != Unlabelled || gotY[1] != 0 || gotY[2] != 1 || gotY[3] != 1 {
		t.Errorf("labels %v", gotY)
	}
}

// Ensure that each bad-input class gives its error class and a message with
// file, line and column.
func TestAnalyze_BadInput(t *testing.T) {
	const head = "user_id,AGE,country,SALARY\n"
	cases := []struct {
		name string
		in   string
		spec *Spec
		kind error
		msg  string
	}{
		{"field count", head + "1,20,0,1\n2,21,0\n", nil, ErrFieldCount,
			`t.csv:3: wrong field count: got 3 fields, want 4`},
		{"not a number", head + "1,20,0,1\n2,abc,0,1\n", nil, ErrNotNumber,
			`t.csv:3: column "AGE": not a number: "abc"`},
		{"empty cell", head + "1,,0,1\n", nil, ErrNotNumber,
			`t.csv:2: column "AGE": not a number: ""`},
		{"nan", head + "1,NaN,0,1\n", nil, ErrNonFinite,
			`t.csv:2: column "AGE": not finite: "NaN"`},
		{"inf", head + "1,-Inf,0,1\n", nil, ErrNonFinite,
			`t.csv:2: column "AGE": not finite: "-Inf"`},
		{"overflow", head + "1,1e999,0,1\n", nil, ErrNonFinite,
			`t.csv:2: column "AGE": not finite: "1e999"`},
		{"duplicate id", head + "1,20,0,1\n2,20,0,1\n1,20,0,1\n", nil, ErrDuplicateID,
			`t.csv:4: column "user_id": duplicate node id: 1 (first in data row 1)`},
		{"bad id", head + "1.5,20,0,1\n", nil, ErrBadID,
			`t.csv:2: column "user_id": bad node id: not integral: "1.5"`},
		{"unmapped sensitive", head + "1,20,x,1\n", &Spec{IDColumn: "user_id",
			Sensitive: SensitiveSpec{Column: "country", Named: map[string]int8{"a": 0, "b": 1}},
			Label:     LabelSpec{Column: "SALARY"}}, ErrUnmappedSensitive,
			`t.csv:2: column "country": unmapped sensitive value: "x"`},
		{"sensitive not a number", head + "1,20,x,1\n", nil, ErrNotNumber,
			`t.csv:2: column "country": not a number: "x"`},
		{"bad label", head + "1,20,0,-2\n", nil, ErrUnmappedLabel,
			`t.csv:2: column "SALARY": unmapped label value: "-2"`},
		{"fractional label", head + "1,20,0,0.5\n", nil, ErrUnmappedLabel,
			`t.csv:2: column "SALARY": unmapped label value: "0.5"`},
		{"missing column", "user_id,AGE,SALARY\n", nil, ErrHeader,
			`t.csv:1: bad header: no sensitive column "country"`},
		{"empty file", "", nil, ErrHeader, `t.csv:1: bad header: empty file`},
		{"csv syntax", head + "1,\"20\"x,0,1\n", nil, ErrSyntax,
			`t.csv:2: csv syntax: byte 6: extraneous or missing " in quoted-field`},
		{"unclosed quote", head + "1,\"20,0,1\n2,20,0,1\n3,20,0,1\n", nil, ErrSyntax,
			`t.csv:2: csv syntax: byte 3: quote opened here is never closed (the field runs to the end of the file)`},
		{"long cell", head + "1," + strings.Repeat("9", 70) + "x,0,1\n", nil, ErrNotNumber,
			`t.csv:2: column "AGE": not a number: "` + strings.Repeat("9", 64) + `"… (71 bytes)`},
		{"long id", head + strings.Repeat("7", 100) + ",20,0,1\n", nil, ErrBadID,
			`t.csv:2: column "user_id": bad node id: out of int64 range: "` + strings.Repeat("7", 64) + `"… (100 bytes)`},
		{"long label", head + "1,20,0," + strings.Repeat("é", 40) + "\n", nil, ErrNotNumber,
			`t.csv:2: column "SALARY": not a number: "` + strings.Repeat("é", 32) + `"… (80 bytes)`},
		{"unscaled float32 overflow", head + "1,1e300,0,1\n", &Spec{IDColumn: "user_id",
			Sensitive: SensitiveSpec{Column: "country"}, Label: LabelSpec{Column: "SALARY"}}, ErrNonFinite,
			`t.csv:2: column "AGE": not finite: out of float32 range: "1e300"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := testSpec
			if c.spec != nil {
				spec = *c.spec
			}
			_, err := Analyze(context.Background(), strings.NewReader(c.in), "t.csv", spec)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("error %v is not %v", err, c.kind)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("error %T is not *Error", err)
			}
			if err.Error() != c.msg {
				t.Errorf("message\n got %s\nwant %s", err, c.msg)
			}
		})
	}
}

// Ensure that an invalid spec reports every problem.
func TestSpec_Validate(t *testing.T) {
	s := Spec{Features: []string{"a", "a"}, Exclude: []string{"b"}, Endpoints: EndpointsID,
		Label: LabelSpec{Unlabelled: "x"}}
	err := s.Validate()
	if !errors.Is(err, ErrSpec) {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{"no sensitive column", "no label column", "listed twice",
		"both Features and Exclude", "no id column", `unlabelled value "x"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q missing from %v", want, err)
		}
	}
	for _, name := range PresetNames() {
		p, err := LookupPreset(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Spec.Validate(); err != nil || !p.Spec.Scale {
			t.Errorf("preset %s: %v (scale %v)", name, err, p.Spec.Scale)
		}
	}
	if _, err := LookupPreset("nope"); !errors.Is(err, ErrUnknownPreset) {
		t.Errorf("LookupPreset(nope) = %v", err)
	}
}

// Ensure that ParseNamedMap accepts NAME=VALUE lists and refuses the rest.
func TestParseNamedMap(t *testing.T) {
	m, err := ParseNamedMap("male=0, female = 1,?=-1")
	if err != nil || len(m) != 3 || m["male"] != 0 || m["female"] != 1 || m["?"] != -1 {
		t.Errorf("got %v, %v", m, err)
	}
	for _, bad := range []string{"a", "a=2", "a=x", "a=0,a=1", ""} {
		if _, err := ParseNamedMap(bad); !errors.Is(err, ErrSpec) {
			t.Errorf("ParseNamedMap(%q) = %v", bad, err)
		}
	}
}

// Ensure that pass 2 detects content that differs from pass 1.
func TestRowReader_Changed(t *testing.T) {
	const a = "user_id,AGE,country,SALARY\n1,20,0,1\n2,30,1,0\n"
	cases := map[string]string{
		"value":      "user_id,AGE,country,SALARY\n1,21,0,1\n2,30,1,0\n",
		"out range":  "user_id,AGE,country,SALARY\n1,40,0,1\n2,30,1,0\n",
		"fewer rows": "user_id,AGE,country,SALARY\n1,20,0,1\n",
		"more rows":  a + "3,25,1,1\n",
		"header":     "user_id,AGE2,country,SALARY\n1,20,0,1\n2,30,1,0\n",
		"bad row":    "user_id,AGE,country,SALARY\n1,x,0,1\n2,30,1,0\n",
	}
	tab, err := Analyze(context.Background(), strings.NewReader(a), "t.csv", testSpec)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range cases {
		rr := tab.NewRowReader(strings.NewReader(b))
		for rr.Next() {
		}
		if !errors.Is(rr.Err(), ErrChanged) {
			t.Errorf("%s: got %v", name, rr.Err())
		}
	}
	rr := tab.NewRowReader(strings.NewReader(a))
	n := 0
	for rr.Next() {
		n++
	}
	if rr.Err() != nil || n != 2 {
		t.Errorf("same content: %d rows, %v", n, rr.Err())
	}
}

// Ensure that a cancelled context stops pass 1.
func TestAnalyze_Cancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Analyze(ctx, strings.NewReader("user_id,AGE,country,SALARY\n1,2,0,1\n"), "t.csv", testSpec)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
}

// Ensure that gzip is detected by magic bytes whatever the file name, and
// that plain files named .gz are read as plain.
func TestOpen_Gzip(t *testing.T) {
	dir := t.TempDir()
	const content = "user_id,AGE,country,SALARY\n1,20,0,1\n2,30,1,0\n"
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte(content))
	zw.Close()
	files := map[string][]byte{"plain.csv": []byte(content), "zipped.csv": zb.Bytes(),
		"zipped2.csv.gz": zb.Bytes(), "plain.gz": []byte(content)}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		tab, err := AnalyzeFile(context.Background(), p, testSpec)
		if err != nil || tab.Rows != 2 {
			t.Fatalf("%s: %v", name, err)
		}
		rr, err := tab.OpenRows(p)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rr.Next() {
			n++
		}
		done, total := rr.Progress()
		if rr.Err() != nil || n != 2 || done != total || total != int64(len(b)) {
			t.Errorf("%s: %d rows, %v, progress %d/%d", name, n, rr.Err(), done, total)
		}
		if err := rr.Close(); err != nil {
			t.Error(err)
		}
		if err := rr.Close(); err != nil {
			t.Error("second close:", err)
		}
	}
	bad := filepath.Join(dir, "bad.gz")
	os.WriteFile(bad, append(zb.Bytes()[:20:20], 0, 0, 0), 0o644)
	_, err := AnalyzeFile(context.Background(), bad, testSpec)
	if !errors.Is(err, ErrRead) {
		t.Errorf("truncated gzip: %v", err)
	}
	if p, err := FindFile(dir, "zipped2.csv"); err != nil || filepath.Base(p) != "zipped2.csv.gz" {
		t.Errorf("FindFile = %q, %v", p, err)
	}
	if _, err := FindFile(dir, "none.csv"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("FindFile(none) = %v", err)
	}
}
