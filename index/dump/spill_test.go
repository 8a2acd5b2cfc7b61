package dump

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// rowsOf drains rr into copies of its rows.
func rowsOf(rr *RowReader) ([]Row, error) {
	var rows []Row
	for rr.Next() {
		r := *rr.Row()
		r.Features = append([]float32(nil), r.Features...)
		rows = append(rows, r)
	}
	return rows, rr.Err()
}

// spillBoth runs pass 1 with a spill over in and returns the rows of pass 2
// read from the CSV and from the spill, and the spill bytes.
func spillBoth(t *testing.T, in string, spec Spec) (fromCSV, fromSpill []Row, spill []byte) {
	t.Helper()
	var buf bytes.Buffer
	tab, err := AnalyzeSpill(context.Background(), strings.NewReader(in), "t.csv", spec, &buf)
	if err != nil {
		t.Fatal(err)
	}
	fromCSV, err = rowsOf(tab.NewRowReader(strings.NewReader(in)))
	if err != nil {
		t.Fatal(err)
	}
	fromSpill, err = rowsOf(tab.NewSpillReader(bytes.NewReader(buf.Bytes())))
	if err != nil {
		t.Fatal(err)
	}
	return fromCSV, fromSpill, buf.Bytes()
}

// sameRows reports the first difference between two row lists, bit for bit.
func sameRows(a, b []Row) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d rows, want %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Index != y.Index || x.Line != y.Line || x.ID != y.ID || x.Sensitive != y.Sensitive || x.Label != y.Label ||
			len(x.Features) != len(y.Features) {
			return fmt.Sprintf("row %d: %+v, want %+v", i, x, y)
		}
		for j := range x.Features {
			if math.Float32bits(x.Features[j]) != math.Float32bits(y.Features[j]) {
				return fmt.Sprintf("row %d feature %d: %v, want %v", i, j, x.Features[j], y.Features[j])
			}
		}
	}
	return ""
}

// Ensure that pass 2 from the spill gives bit-for-bit the rows of pass 2
// from the CSV, scaled and unscaled, for every value encoding (small
// integers, float32-exact values, other float64s, -0, subnormals, huge
// values) and for quoted multi-line records.
func TestNewSpillReader_SameAsCSV(t *testing.T) {
	const in = "user_id,a,b,c,country,SALARY,note\n" +
		"10,0,1,0.1,0,1,x\n" +
		"-11,250,251,-0,1,-1,\n" +
		"\"12\",\"3.5\",-1,1e-320,-1,3,\"a,\"\"b\"\"\"\n" +
		"9223372036854775807,0.25,1e30,-7,0,0,\n" +
		"13,\" 1\",2.5e+2,123456789.123,1,1,\"two\nlines\"\n"
	for _, scale := range []bool{true, false} {
		spec := testSpec
		spec.Scale = scale
		spec.Exclude = []string{"note"}
		csvRows, spillRows, spill := spillBoth(t, in, spec)
		if d := sameRows(spillRows, csvRows); d != "" {
			t.Errorf("scale=%v: %s", scale, d)
		}
		if len(csvRows) != 5 || csvRows[4].Line != 6 {
			t.Errorf("scale=%v: rows %+v", scale, csvRows)
		}
		if len(spill) >= len(in) {
			t.Errorf("spill of %d bytes for %d bytes of CSV", len(spill), len(in))
		}
	}
}

// Ensure that a spill that is truncated, too long or garbled stops pass 2
// with an ErrRead *Error instead of yielding wrong rows.
func TestNewSpillReader_Corrupt(t *testing.T) {
	const in = "user_id,a,b,country,SALARY\n1,0,0.5,0,1\n2,1,0.25,1,0\n3,0,7,1,1\n"
	var buf bytes.Buffer
	tab, err := AnalyzeSpill(context.Background(), strings.NewReader(in), "t.csv", testSpec, &buf)
	if err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	flip := func(i int, x byte) []byte {
		b := bytes.Clone(good)
		b[i] ^= x
		return b
	}
	cases := map[string][]byte{
		"empty":          nil,
		"truncated row":  good[:len(good)-3],
		"missing row":    good[:2*len(good)/3],
		"extra row":      append(bytes.Clone(good), good[:len(good)/3]...),
		"bad length":     flip(0, 0x40),
		"bad value code": flip(int(good[0])-4, 0x01),
	}
	for name, b := range cases {
		rows, err := rowsOf(tab.NewSpillReader(bytes.NewReader(b)))
		if !errors.Is(err, ErrRead) {
			t.Errorf("%s: %d rows, err %v", name, len(rows), err)
		}
	}
	if _, err := AnalyzeSpill(context.Background(), strings.NewReader(in), "t.csv", testSpec, nil); !errors.Is(err, ErrSpec) {
		t.Errorf("nil spill: %v", err)
	}
}

// Ensure that pass 1 reports the error of a bad row also when spilling.
func TestAnalyzeSpill_BadInput(t *testing.T) {
	var buf bytes.Buffer
	_, err := AnalyzeSpill(context.Background(), strings.NewReader("user_id,AGE,country,SALARY\n1,20,0,1\n2,x,0,1\n"), "t.csv", testSpec, &buf)
	if !errors.Is(err, ErrNotNumber) || err.Error() != `t.csv:3: column "AGE": not a number: "x"` {
		t.Errorf("got %v", err)
	}
}

// Ensure that a pass 1 with a spill does not allocate per row: without an
// id column (whose map grows with the rows) twice the rows cost no more
// allocations.
func TestAnalyzeSpill_Allocs(t *testing.T) {
	input := func(rows int) string {
		var b strings.Builder
		b.WriteString("user_id,a,b,c,country,SALARY\n")
		for i := range rows {
			fmt.Fprintf(&b, "%d,%d,0.%d,1.5e3,%d,%d\n", i, i%2, i, i%2, i%3-1)
		}
		return b.String()
	}
	spec := Spec{Sensitive: testSpec.Sensitive, Label: testSpec.Label, Exclude: []string{"user_id"}, Scale: true}
	var spill bytes.Buffer
	spill.Grow(1 << 20)
	allocs := func(in string) float64 {
		return testing.AllocsPerRun(3, func() {
			spill.Reset()
			if _, err := AnalyzeSpill(context.Background(), strings.NewReader(in), "t.csv", spec, &spill); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(input(2000)), allocs(input(4000))
	if large > small+2 {
		t.Errorf("%v allocations for 2000 rows, %v for 4000", small, large)
	}
}
