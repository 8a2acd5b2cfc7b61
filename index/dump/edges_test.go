package dump

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Ensure that ParseEdgeLine accepts ids, float notation and blanks, and
// refuses everything else with a precise message.
func TestParseEdgeLine(t *testing.T) {
	cases := []struct {
		in    string
		u, v  int64
		blank bool
		msg   string // "" when valid
	}{
		{"1\t2\n", 1, 2, false, ""},
		{"  17   42  \r\n", 17, 42, false, ""},
		{"8.380e+02\t1.0E1", 838, 10, false, ""},
		{"-5 +6", -5, 6, false, ""},
		{"1171330003629273088\t16812787", 1171330003629273088, 16812787, false, ""},
		{"9223372036854775807 0", 9223372036854775807, 0, false, ""},
		{"", 0, 0, true, ""},
		{" \t\r\n", 0, 0, true, ""},
		{"1", 0, 0, false, `malformed edge line: one field, want two: "1"`},
		{"1 2 3", 0, 0, false, `malformed edge line: more than two fields: "1 2 3"`},
		{"1 x", 0, 0, false, `field 2: malformed edge line: not an integer: "x"`},
		{"1.5 2", 0, 0, false, `field 1: malformed edge line: not integral: "1.5"`},
		{"1,2", 1, 2, false, ""},
		{" 3 ,\t4 \r\n", 3, 4, false, ""},
		{"5, 6 # c, d", 5, 6, false, ""},
		{"1,,2", 0, 0, false, `malformed edge line: stray comma: "1,,2"`},
		{",1 2", 0, 0, false, `malformed edge line: stray comma: ",1 2"`},
		{"1 2,", 0, 0, false, `malformed edge line: stray comma: "1 2,"`},
		{",", 0, 0, false, `malformed edge line: stray comma: ","`},
		{"1,", 0, 0, false, `malformed edge line: one field, want two: "1,"`},
		{"1,2,3", 0, 0, false, `malformed edge line: more than two fields: "1,2,3"`},
		{"nan 2", 0, 0, false, `field 1: malformed edge line: not an integer: "nan"`},
		{"1e300 2", 0, 0, false, `field 1: malformed edge line: float notation beyond 2^53 is not exact: "1e300"`},
		{"9223372036854775808 1", 0, 0, false, `field 1: malformed edge line: out of int64 range: "9223372036854775808"`},
		// Comments, the one rule of every edge file: '#' to the end of the line.
		{"# source target\n", 0, 0, true, ""},
		{"  #\r\n", 0, 0, true, ""},
		{"1 2 # added by hand", 1, 2, false, ""},
		{"3\t4#x y z\n", 3, 4, false, ""},
		{"5 # 6", 0, 0, false, `malformed edge line: one field, want two: "5 # 6"`},
		{"1 2 3 # three", 0, 0, false, `malformed edge line: more than two fields: "1 2 3 # three"`},
		// An offending value is echoed in a bounded prefix.
		{"1 " + strings.Repeat("x", 200), 0, 0, false,
			`field 2: malformed edge line: not an integer: "` + strings.Repeat("x", 64) + `"… (200 bytes)`},
		{strings.Repeat("1 ", 100), 0, 0, false,
			`malformed edge line: more than two fields: "` + strings.Repeat("1 ", 32) + `"… (200 bytes)`},
	}
	for _, c := range cases {
		u, v, blank, err := ParseEdgeLine([]byte(c.in))
		if c.msg == "" {
			if err != nil || u != c.u || v != c.v || blank != c.blank {
				t.Errorf("%q: got %d %d %v %v", c.in, u, v, blank, err)
			}
			continue
		}
		if err == nil || err.Error() != c.msg || !errors.Is(err, ErrBadEdge) {
			t.Errorf("%q: got error %v, want %s", c.in, err, c.msg)
		}
	}
}

// Ensure that EdgeReader skips blank lines, counts lines, accepts a last line
// without newline and reports file:line on a malformed line.
func TestEdgeReader(t *testing.T) {
	er := NewEdgeReader(strings.NewReader("1\t2\n\n3 4\r\n  \n5.0e0\t6"), "e.txt")
	var got []int64
	var lines []int
	for er.Next() {
		u, v := er.Edge()
		got = append(got, u, v)
		lines = append(lines, er.Line())
	}
	if er.Err() != nil || len(got) != 6 || got[4] != 5 || got[5] != 6 || er.Edges() != 3 {
		t.Errorf("got %v, err %v", got, er.Err())
	}
	if lines[0] != 1 || lines[1] != 3 || lines[2] != 5 {
		t.Errorf("lines %v", lines)
	}

	er = NewEdgeReader(strings.NewReader("# u v\n1 2 # first\n\n#3 4\n5 6\n"), "e.txt")
	got, lines = got[:0], lines[:0]
	for er.Next() {
		u, v := er.Edge()
		got = append(got, u, v)
		lines = append(lines, er.Line())
	}
	if er.Err() != nil || fmt.Sprint(got) != "[1 2 5 6]" || fmt.Sprint(lines) != "[2 5]" || er.Edges() != 2 {
		t.Errorf("with comments: edges %v at lines %v, err %v", got, lines, er.Err())
	}

	er = NewEdgeReader(strings.NewReader("1 2\n3 4\n5 six\n7 8\n"), "e.txt")
	n := 0
	for er.Next() {
		n++
	}
	const want = `e.txt:3: field 2: malformed edge line: not an integer: "six"`
	if n != 2 || er.Err() == nil || er.Err().Error() != want || !errors.Is(er.Err(), ErrBadEdge) {
		t.Errorf("after %d edges: %v, want %s", n, er.Err(), want)
	}
	if er.Next() {
		t.Error("Next after error")
	}

	er = NewEdgeReader(strings.NewReader("1 "+strings.Repeat("2", maxEdgeLine)+"\n"), "e.txt")
	if er.Next() || !errors.Is(er.Err(), ErrBadEdge) || !strings.HasPrefix(er.Err().Error(), "e.txt:1: ") {
		t.Errorf("long line: %v", er.Err())
	}
}

// Ensure that row-index endpoints, also in float notation, resolve to rows,
// with or without an id column.
func TestResolve_Rows(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,s,y,x\n")
	for i := range 900 {
		fmt.Fprintf(&b, "%d,0,1,%d\n", 5000+i, i%7)
	}
	for _, spec := range []Spec{
		{Sensitive: SensitiveSpec{Column: "s"}, Label: LabelSpec{Column: "y"}},
		{IDColumn: "id", Sensitive: SensitiveSpec{Column: "s"}, Label: LabelSpec{Column: "y"}, Endpoints: EndpointsRow},
	} {
		tab, err := Analyze(context.Background(), strings.NewReader(b.String()), "n.csv", spec)
		if err != nil {
			t.Fatal(err)
		}
		if tab.Endpoints() != EndpointsRow {
			t.Errorf("endpoints %v", tab.Endpoints())
		}
		er := NewEdgeReader(strings.NewReader("8.380e+02\t0\n899 900\n-1 5\n"), "e.txt")
		var got []int
		for er.Next() {
			u, v := er.Edge()
			ru, ok1 := tab.Resolve(u)
			rv, ok2 := tab.Resolve(v)
			got = append(got, ru, rv, boolInt(ok1), boolInt(ok2))
		}
		want := []int{838, 0, 1, 1, 899, -1, 1, 0, -1, 5, 0, 1}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("spec %+v: got %v, want %v", spec, got, want)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
