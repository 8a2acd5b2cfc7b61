package dump

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Ensure the one BOM rule for every dump file: a UTF-8 BOM at the very
// start of a node file, an edge file or an id file, plain or gzip, is
// dropped; anywhere else it is content (and so an error in an edge line).
func TestBOM_OneRule(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	dir := t.TempDir()
	write := func(name, content string, gz bool) string {
		t.Helper()
		p := filepath.Join(dir, name)
		data := []byte(content)
		if gz {
			var b bytes.Buffer
			w := gzip.NewWriter(&b)
			w.Write(data)
			w.Close()
			data = b.Bytes()
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, gz := range []bool{false, true} {
		edges := write("e.txt", bom+"1 2\n3 4\n", gz)
		er, err := OpenEdges(edges)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for er.Next() {
			n++
		}
		if er.Err() != nil || n != 2 {
			t.Errorf("gzip %v: edge file with a leading BOM: %d edges, %v", gz, n, er.Err())
		}
		er.Close()

		mid := write("m.txt", "1 2\n"+bom+"3 4\n", gz)
		er, err = OpenEdges(mid)
		if err != nil {
			t.Fatal(err)
		}
		for er.Next() {
		}
		var de *Error
		if !errors.As(er.Err(), &de) || de.Line != 2 {
			t.Errorf("gzip %v: a BOM inside an edge file: %v, want an error on line 2", gz, er.Err())
		}
		er.Close()

		nodes := write("n.csv", bom+"user_id,AGE,country,SALARY\n1,20,0,1\n2,30,1,0\n", gz)
		f, err := Open(nodes)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := Analyze(t.Context(), f, "n.csv", testSpec)
		f.Close()
		if err != nil || tab == nil {
			t.Errorf("gzip %v: node file with a leading BOM: %v", gz, err)
		}
	}
}

// Ensure that numeric cells are CSV numbers, not Go literals: digit
// separators and hexadecimal floats are refused as features and as ids,
// plain decimals and exponents are not.
func TestNumbers_CSVOnly(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"1000", true}, {"-1.5", true}, {"2.5e3", true}, {"1E-2", true}, {"+7", true},
		{"1_000", false}, {"1_0.5", false}, {"1e1_0", false}, {"0x1p4", false}, {"0X1P-2", false}, {"0x10", false},
	} {
		_, err := parseNumber(c.in)
		if (err == nil) != c.ok {
			t.Errorf("parseNumber(%q): %v, want ok=%v", c.in, err, c.ok)
		}
	}
	for _, c := range []struct {
		in string
		ok bool
	}{{"1000", true}, {"8.38e2", true}, {"1_000", false}, {"0x1p4", false}, {"1_000.0", false}} {
		_, _, ok := parseInteger(c.in)
		if ok != c.ok {
			t.Errorf("parseInteger(%q): ok=%v, want %v", c.in, ok, c.ok)
		}
	}
	_, _, err := readAll(t, "user_id,AGE,country,SALARY\n1,1_000,0,1\n", testSpec)
	if !errors.Is(err, ErrNotNumber) || !strings.Contains(err.Error(), `t.csv:2: column "AGE"`) {
		t.Errorf("1_000 as a feature: %v", err)
	}
	if _, _, _, err := ParseEdgeLine([]byte("0x1p4 2")); err == nil {
		t.Error("edge line with a hex float id accepted")
	}
}

// Ensure that a control character (a terminal escape, a tab, DEL, a C1
// control) in a column name is refused with file, line and field, and
// that the message shows it escaped, never raw.
func TestHeader_ControlCharacters(t *testing.T) {
	for _, name := range []string{"AGE\x1b[31m", "A\tGE", "AGE\x7f", "AGE\u0085", "AGE\x00"} {
		csv := "user_id," + name + ",country,SALARY\n1,20,0,1\n"
		_, _, err := readAll(t, csv, testSpec)
		var de *Error
		if !errors.As(err, &de) || !errors.Is(err, ErrHeader) || de.Line != 1 || de.Index != 1 {
			t.Errorf("%q: %v, want a header error at t.csv:1 field 2", name, err)
			continue
		}
		msg := err.Error()
		for _, r := range msg {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Errorf("%q: the message holds a raw control character: %q", name, msg)
				break
			}
		}
	}
	if _, _, err := readAll(t, "user_id,Größe,country,SALARY\n1,20,0,1\n", testSpec); err != nil {
		t.Errorf("a non-ASCII column name: %v", err)
	}
}
