package dump

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// csvOracle reads s with encoding/csv as the package used to and returns
// one line per record ("line: fields") and the first error.
func csvOracle(s string) ([]string, error) {
	cr := csv.NewReader(strings.NewReader(s))
	cr.FieldsPerRecord = -1
	var out []string
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		line, _ := cr.FieldPos(0)
		out = append(out, fmt.Sprintf("%d: %q", line, rec))
	}
}

// fastRecords reads r with recordReader, in the same form as csvOracle.
func fastRecords(r io.Reader) ([]string, error) {
	rr := newRecordReader(r)
	var out []string
	for {
		fields, err := rr.read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		rec := make([]string, len(fields))
		for i, f := range fields {
			rec[i] = string(f)
		}
		out = append(out, fmt.Sprintf("%d: %q", rr.line(), rec))
	}
}

// sameRecords reports how the two readings of s differ, or "".
func sameRecords(s string, r io.Reader) string {
	want, werr := csvOracle(s)
	got, gerr := fastRecords(r)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		return fmt.Sprintf("records\n got %q\nwant %q", got, want)
	}
	if (werr == nil) != (gerr == nil) {
		return fmt.Sprintf("error %v, want %v", gerr, werr)
	}
	if werr != nil {
		var wp, gp *csv.ParseError
		if !errors.As(werr, &wp) || !errors.As(gerr, &gp) {
			return fmt.Sprintf("error %#v, want %#v", gerr, werr)
		}
		if gp.Err == errUnclosedQuote {
			// encoding/csv reports an unclosed quote at the end of the
			// input; recordReader at the quote itself, which must open a
			// field of the same record.
			if wp.Err != csv.ErrQuote || wp.StartLine != gp.StartLine || gp.Line < gp.StartLine || gp.Line > wp.Line ||
				byteAt(s, gp.Line, gp.Column) != '"' {
				return fmt.Sprintf("unclosed quote at %d:%d (record from line %d), csv says %v", gp.Line, gp.Column, gp.StartLine, werr)
			}
		} else if wp.Error() != gp.Error() {
			return fmt.Sprintf("error %#v, want %#v", gerr, werr)
		}
	}
	return ""
}

// byteAt returns the byte of s at a 1-based line and byte column, or 0.
func byteAt(s string, line, col int) byte {
	lines := strings.SplitAfter(s, "\n")
	if line < 1 || line > len(lines) || col < 1 || col > len(lines[line-1]) {
		return 0
	}
	return lines[line-1][col-1]
}

// Ensure that a quoted field left open is reported at its opening quote,
// not at the end of the file, also when it opens on a later line of a
// multi-line record and when the input arrives one byte at a time.
func TestRecordReader_UnclosedQuote(t *testing.T) {
	tail := strings.Repeat("1,2\n", 1000)
	cases := []struct {
		in        string
		line, col int
	}{
		{"a,b\n1,\"x\n" + tail, 2, 3},
		{"a,b\n\"ok\nstill\",\"open\n" + tail, 3, 8},
		{"a,b\r\n1,\"x\r\n" + tail, 2, 3},
		{"\"", 1, 1},
		{"a,b\n\"\"\"\n" + tail, 2, 1},
	}
	for _, c := range cases {
		for _, r := range []io.Reader{strings.NewReader(c.in), iotest.OneByteReader(strings.NewReader(c.in))} {
			_, err := fastRecords(r)
			var pe *csv.ParseError
			if !errors.As(err, &pe) || pe.Err != errUnclosedQuote || pe.Line != c.line || pe.Column != c.col {
				t.Errorf("%.30q: %v, want an unclosed quote at %d:%d", c.in, err, c.line, c.col)
			}
		}
	}
}

var recordCases = []string{
	"",
	"a,b,c\n1,2,3\n",
	"a,b,c\r\n1,2,3\r\n",
	"a,b\n\n\n1,2",
	"a,b\n\r\n1,2\r",
	"a,b\n1,2\r\r",
	"a,b\n1,2\r\r\n",
	"\r",
	"\n\n",
	",\n,,\n",
	"a\rb,c\n",
	`"a","b"` + "\n1,2\n",
	`"a,b",c` + "\n" + `"x""y",z` + "\n",
	"\"multi\nline\",x\n1,2\n",
	"\"multi\r\nline\",x\r\n1,2\n",
	"\"open\n1,2\n",
	`a,b"c` + "\n1,2\n",
	`"a"b,c` + "\n",
	`"a"` + "\r" + `x,y` + "\n",
	`"a"` + "\r",
	`"a"` + "\r\n",
	`"",""` + "\n,\n",
	"x,\"\"\"\"\n",
	"1,2\n\"a\nb\n\nc\",d\n3,4\n",
	"a,\"b\"\n\"c\n",
}

// Ensure that recordReader gives the records, line numbers and syntax
// errors of encoding/csv on hand-picked corner cases, also when the input
// arrives one byte at a time and with lines longer than its buffer.
func TestRecordReader_MatchesCSV(t *testing.T) {
	long := strings.Repeat("x", recordBuffer+10)
	cases := append(recordCases,
		long+","+long+"\n1,2\n",
		"\""+long+"\n"+long+"\",z\n",
		"a,b\n"+long+"\"q\n")
	for i, s := range cases {
		if d := sameRecords(s, strings.NewReader(s)); d != "" {
			t.Errorf("case %d %.40q: %s", i, s, d)
		}
		if d := sameRecords(s, iotest.OneByteReader(strings.NewReader(s))); d != "" {
			t.Errorf("case %d %.40q one byte at a time: %s", i, s, d)
		}
	}
}

// Ensure that recordReader does not allocate on unquoted rows.
func TestRecordReader_NoAllocs(t *testing.T) {
	row := strings.Repeat("0,1,0.25,", 30) + "7\n"
	in := strings.Repeat(row, 200)
	rr := newRecordReader(strings.NewReader(in))
	if _, err := rr.read(); err != nil { // warm up the field slice
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := rr.read(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per unquoted row", allocs)
	}
}

// FuzzRecordReader checks recordReader against encoding/csv: the same
// records, record lines and syntax errors for any input.
func FuzzRecordReader(f *testing.F) {
	for _, s := range recordCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d := sameRecords(s, strings.NewReader(s)); d != "" {
			t.Fatal(d)
		}
	})
}

// FuzzSplitCommas checks the word-at-a-time splitter against bytes.Split.
func FuzzSplitCommas(f *testing.F) {
	for _, s := range []string{"", ",", "a,b", ",-1,0,1,", "0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1",
		"\xac,\x2d\x2c\x00,,,,,,,,,\x01,x", strings.Repeat("12345678,", 5)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, c []byte) {
		got := splitCommas(nil, c)
		want := bytes.Split(c, []byte{','})
		if len(got) != len(want) {
			t.Fatalf("%q: %d fields, want %d", c, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%q: field %d is %q, want %q", c, i, got[i], want[i])
			}
		}
	})
}
