package dump

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseEdgeLine checks that the edge-line parser never panics, that a
// parsed edge prints back to a line with the same endpoints, that a blank
// result means the line has no visible characters before its comment, and
// that every failure is an *Error of class ErrBadEdge with a bounded
// message.
func FuzzParseEdgeLine(f *testing.F) {
	for _, s := range []string{"1\t2", "1 2\n", "8.380e+02\t7", "", "  \r\n", "1", "1 2 3",
		"x y", "1.5 2", "-1 +2", "9223372036854775807 1", "1e300 1", "0x10 1", "1_0 2", "Inf 1",
		"# u v", "1 2 # c", "1 # 2"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		u, v, blank, err := ParseEdgeLine(line)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrBadEdge) {
				t.Fatalf("error %v (%T) is not an ErrBadEdge *Error", err, err)
			}
			if len(err.Error()) > 4*maxEcho+100 {
				t.Fatalf("%d-byte message for a %d-byte line", len(err.Error()), len(line))
			}
			return
		}
		data, _, _ := bytes.Cut(line, []byte{'#'})
		if blank {
			if len(bytes.TrimLeft(data, " \t\r\n")) != 0 {
				t.Fatalf("%q reported blank", line)
			}
			return
		}
		u2, v2, blank2, err := ParseEdgeLine([]byte(fmt.Sprintf("%d\t%d\n", u, v)))
		if err != nil || blank2 || u2 != u || v2 != v {
			t.Fatalf("%q → %d %d does not round-trip: %d %d %v", line, u, v, u2, v2, err)
		}
	})
}

// FuzzNodeRow checks the node-row parser through both passes: no panics;
// every failure is an *Error of a known class; on success pass 2 agrees with
// pass 1, attributes are in {-1, 0, 1}, scaled features are finite and in
// [-1, 1], pass 2 from the spill gives bit-for-bit the rows of pass 2 from
// the CSV; and the rows written back with NodeWriter parse to the same
// unscaled values. named selects named sensitive and label mappings instead
// of numeric ones; its rows start from a row valid under that spec, so that
// the seeds reach the mapping lookups rather than stop at the first row.
func FuzzNodeRow(f *testing.F) {
	for _, s := range [][2]string{
		{"2,0.5,1,0", "3,7,0,1"},
		{"2,abc,1,0", "3,1,0,1"},
		{"2,NaN,1,0", "3,1,0,1"},
		{"2,1,1", "3,1,0,1"},
		{"2,1e308,1,0", "3,-1e308,0,4"},
		{"1,1,1,1", "2,2,2,2"},
		{`"2",1,1,-1`, "3,8.5e1,-1,1\n4,1,0,0"},
		{"9223372036854775807,0,0,0", "-9223372036854775808,0,0,0"},
	} {
		f.Add(s[0], s[1], false)
	}
	for _, s := range [][2]string{
		{"2,0.5,f,yes", "3,7, m ,no"},
		{"2,1,?,", `3,1,"f",yes`},
		{"2,1,x,yes", "3,1,m,no"},
		{"2,1,m,maybe", "3,1,m,no"},
		{"2,1,1,0", "3,1,m,no"},
	} {
		f.Add(s[0], s[1], true)
	}
	kinds := []error{ErrFieldCount, ErrNotNumber, ErrNonFinite, ErrBadID, ErrDuplicateID,
		ErrUnmappedSensitive, ErrUnmappedLabel, ErrSyntax, ErrHeader}
	numeric := Spec{IDColumn: "id", Sensitive: SensitiveSpec{Column: "s"}, Label: LabelSpec{Column: "y"}, Scale: true}
	named := numeric
	named.Sensitive.Named = map[string]int8{"m": 0, "f": 1, "?": Unknown}
	named.Label.Named = map[string]int8{"no": 0, "yes": 1, "": Unlabelled}
	f.Fuzz(func(t *testing.T, a, b string, useNamed bool) {
		spec, in := numeric, "id,x,s,y\n1,0,0,1\n"+a+"\n"+b+"\n"
		if useNamed {
			spec, in = named, "id,x,s,y\n1,0,m,yes\n"+a+"\n"+b+"\n"
		}
		var spill bytes.Buffer
		tab, err := AnalyzeSpill(context.Background(), strings.NewReader(in), "f.csv", spec, &spill)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not *Error", err, err)
			}
			for _, k := range kinds {
				if errors.Is(err, k) {
					return
				}
			}
			t.Fatalf("error %v has no known class", err)
		}
		rr := tab.NewRowReader(strings.NewReader(in))
		var ids []int64
		var ss, ys []int8
		var raw []float32
		for rr.Next() {
			r := rr.Row()
			x := r.Features[0]
			if math.IsNaN(float64(x)) || x < -1 || x > 1 {
				t.Fatalf("row %d: scaled feature %v", r.Index, x)
			}
			if r.Sensitive < -1 || r.Sensitive > 1 || r.Label < -1 || r.Label > 1 {
				t.Fatalf("row %d: s=%d y=%d", r.Index, r.Sensitive, r.Label)
			}
			ids, ss, ys = append(ids, r.ID), append(ss, r.Sensitive), append(ys, r.Label)
		}
		if rr.Err() != nil || len(ids) != tab.Rows {
			t.Fatalf("pass 2: %d of %d rows, %v", len(ids), tab.Rows, rr.Err())
		}
		csvRows, err := rowsOf(tab.NewRowReader(strings.NewReader(in)))
		if err != nil {
			t.Fatal(err)
		}
		spillRows, err := rowsOf(tab.NewSpillReader(&spill))
		if err != nil {
			t.Fatalf("pass 2 from the spill: %v", err)
		}
		if d := sameRows(spillRows, csvRows); d != "" {
			t.Fatalf("spill differs from CSV: %s", d)
		}
		// Unscaled values, then the round trip through the writer.
		unscaled := spec
		unscaled.Scale = false
		tab2, err := Analyze(context.Background(), strings.NewReader(in), "f.csv", unscaled)
		if err != nil {
			return // a value beyond float32 is fine scaled but refused unscaled
		}
		rr = tab2.NewRowReader(strings.NewReader(in))
		for rr.Next() {
			raw = append(raw, rr.Row().Features[0])
		}
		var buf bytes.Buffer
		h := Header{ID: "id", Sensitive: "s", Label: "y", Features: []string{"x"}}
		nw, err := NewNodeWriter(&buf, h)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ids {
			if err := nw.WriteRow(ids[i], ss[i], ys[i], raw[i:i+1]); err != nil {
				t.Fatal(err)
			}
		}
		nw.Flush()
		tab3, err := Analyze(context.Background(), bytes.NewReader(buf.Bytes()), "w.csv", h.Spec(false))
		if err != nil {
			t.Fatalf("written dump does not parse: %v\n%s", err, buf.String())
		}
		rr = tab3.NewRowReader(bytes.NewReader(buf.Bytes()))
		i := 0
		for rr.Next() {
			r := rr.Row()
			if r.ID != ids[i] || r.Sensitive != ss[i] || r.Label != ys[i] || r.Features[0] != raw[i] {
				t.Fatalf("row %d: %+v, want id %d s %d y %d x %v", i, r, ids[i], ss[i], ys[i], raw[i])
			}
			i++
		}
		if rr.Err() != nil || i != len(ids) {
			t.Fatalf("round trip: %d rows, %v", i, rr.Err())
		}
	})
}

// refParseNumber is the plain strconv version of parseNumber, the oracle of
// FuzzParseNumber: strconv.ParseFloat without the Go-only spellings (digit
// separators, hexadecimal floats), which are not CSV numbers.
func refParseNumber(s string) (float64, error) {
	if strings.ContainsAny(s, "_xXpP") {
		return 0, ErrNotNumber
	}
	v, err := strconv.ParseFloat(trimSpace(s), 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange) && math.IsInf(v, 0):
		return 0, ErrNonFinite
	case err != nil && errors.Is(err, strconv.ErrRange):
		return v, nil
	case err != nil:
		return 0, ErrNotNumber
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, ErrNonFinite
	}
	return v, nil
}

// FuzzParseNumber checks that parseNumber, with its integer and plain-decimal
// fast paths, gives bit for bit the value (or the error class) of
// strconv.ParseFloat restricted to CSV numbers (refParseNumber), for
// strings and for byte slices.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"0", "-0", "1", "1.0546417", "-0.0", ".5", "5.", ".", "-", "+1.25",
		"123456789012345", "1234567890123456", "0.000000000000001", "9007199254740993", "1e5",
		"0x1p-2", "1_0", " 2.5\r", "NaN", "-Inf", "1e400", "4.9e-325", "00000000000000001.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, werr := refParseNumber(s)
		v1, err1 := parseNumber(s)
		v2, err2 := parseNumber([]byte(s))
		for _, got := range []struct {
			v   float64
			err error
		}{{v1, err1}, {v2, err2}} {
			if got.err != werr || math.Float64bits(got.v) != math.Float64bits(want) {
				t.Fatalf("parseNumber(%q) = %v (%x), %v; strconv gives %v (%x), %v",
					s, got.v, math.Float64bits(got.v), got.err, want, math.Float64bits(want), werr)
			}
		}
	})
}

// FuzzValueMap checks the value maps of --sens-values and --label-values
// against a simple oracle: a cell maps to the value of the key equal to it
// after trimming, else to the value of a key with the same numeric value;
// ParseNamedMap either fails with ErrSpec or gives keys that are trimmed.
func FuzzValueMap(f *testing.F) {
	for _, s := range [][2]string{
		{"1=1,-1=0", "-1"}, {"1=1,-1=0", "-1.0"}, {"1=1,-1=0", " 1e0 "}, {"1=1,-1=0", "2"},
		{"Female=1,Male=0", "Male"}, {"Female=1,Male=0", "male"}, {"a=0,b=1,?=-1", "?"},
		{"0=0,-0=1", "0"}, {"1=1,1.0=1", "1.00"}, {"x", "x"}, {"1=2", "1"}, {"NaN=1", "NaN"}, {"Inf=1", "+Inf"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, mapping, cell string) {
		m, err := ParseNamedMap(mapping)
		if err != nil {
			if !errors.Is(err, ErrSpec) {
				t.Fatalf("ParseNamedMap(%q): %v is not ErrSpec", mapping, err)
			}
			return
		}
		for k := range m {
			if k != trimSpace(k) {
				t.Fatalf("key %q not trimmed", k)
			}
		}
		num, err := numericKeys(m)
		if err != nil {
			if !strings.Contains(err.Error(), "same number") {
				t.Fatalf("numericKeys: %v", err)
			}
			return
		}
		got, ok := lookupValue(m, num, []byte(cell))
		want, wantOK := m[trimSpace(cell)]
		if !wantOK {
			if x, err := parseNumber(trimSpace(cell)); err == nil {
				for k, v := range m {
					if y, err := parseNumber(k); err == nil && y == x {
						want, wantOK = v, true
					}
				}
			}
		}
		if ok != wantOK || got != want {
			t.Fatalf("map %v, cell %q: got %d %v, want %d %v", m, cell, got, ok, want, wantOK)
		}
	})
}

// FuzzSensitiveFeature checks a node file with a named sensitive mapping
// kept as a feature and a label value map: no panics, every failure an
// *Error of a known class, and on success the kept feature equals the
// mapped sensitive value of its row (unscaled).
func FuzzSensitiveFeature(f *testing.F) {
	for _, s := range [][2]string{
		{"1,Female,3", "-1,Male,4"}, {"1,?,3", "-1.0,Male,4"}, {"2,Male,1", "1,Female,1"},
		{"1,Other,3", "1,Male,4"}, {"1,Male", "1,Male,4"}, {`1,"Female",3`, "1,Male,x"}, {"1e0, Male ,0", "-1,Female,0"},
	} {
		f.Add(s[0], s[1])
	}
	kinds := []error{ErrFieldCount, ErrNotNumber, ErrNonFinite, ErrUnmappedSensitive, ErrUnmappedLabel, ErrSyntax}
	spec := Spec{
		Sensitive:        SensitiveSpec{Column: "g", Named: map[string]int8{"Female": 1, "Male": 0, "?": -1}},
		Label:            LabelSpec{Column: "y", Named: map[string]int8{"1": 1, "-1": 0}},
		SensitiveFeature: true,
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		in := "y,g,x\r\n" + a + "\r\n" + b
		var spill bytes.Buffer
		tab, err := AnalyzeSpill(context.Background(), strings.NewReader(in), "f.csv", spec, &spill)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not *Error", err, err)
			}
			for _, k := range kinds {
				if errors.Is(err, k) {
					return
				}
			}
			t.Fatalf("error %v has no known class", err)
		}
		for _, rr := range []*RowReader{tab.NewRowReader(strings.NewReader(in)), tab.NewSpillReader(&spill)} {
			for rr.Next() {
				r := rr.Row()
				if r.Features[0] != float32(r.Sensitive) || r.Label < 0 {
					t.Fatalf("row %d: feature %v, sensitive %d, label %d", r.Index, r.Features[0], r.Sensitive, r.Label)
				}
			}
			if rr.Err() != nil {
				t.Fatal(rr.Err())
			}
		}
	})
}
