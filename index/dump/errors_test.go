package dump

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// Ensure that echo quotes short values whole and long ones as a bounded,
// valid UTF-8 prefix with the full length.
func TestEcho(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `""`},
		{"abc", `"abc"`},
		{"a\"b\n", `"a\"b\n"`},
		{strings.Repeat("x", 64), `"` + strings.Repeat("x", 64) + `"`},
		{strings.Repeat("x", 65), `"` + strings.Repeat("x", 64) + `"… (65 bytes)`},
		// 'é' is two bytes: 1 + 31×2 = 63 bytes, and the 32nd é would
		// straddle the 64-byte cut, so it is left out.
		{"a" + strings.Repeat("é", 40), `"a` + strings.Repeat("é", 31) + `"… (81 bytes)`},
		// '€' is three bytes: 21×3 = 63.
		{strings.Repeat("€", 30), `"` + strings.Repeat("€", 21) + `"… (90 bytes)`},
	}
	for _, c := range cases {
		if got := echo(c.in); got != c.want {
			t.Errorf("echo(%.20q…) = %s, want %s", c.in, got, c.want)
		}
		if got := echo([]byte(c.in)); got != c.want {
			t.Errorf("echo([]byte) differs: %s", got)
		}
	}
}

// Ensure that a 10 MB cell, in any column kind and in the id column, gives
// an error message of bounded size that still names file, line and column.
func TestAnalyze_HugeCellBounded(t *testing.T) {
	huge := strings.Repeat("z", 10<<20)
	const head = "user_id,AGE,country,SALARY\n1,20,0,1\n"
	cases := []struct{ name, row, prefix string }{
		{"feature", "2," + huge + ",0,1\n", `t.csv:3: column "AGE": not a number: "zzz`},
		{"sensitive", "2,20," + huge + ",1\n", `t.csv:3: column "country": not a number: "zzz`},
		{"label", "2,20,0," + huge + "\n", `t.csv:3: column "SALARY": not a number: "zzz`},
		{"id", huge + ",20,0,1\n", `t.csv:3: column "user_id": bad node id: not an integer: "zzz`},
		{"quoted", "2,\"" + huge + "\",0,1\n", `t.csv:3: column "AGE": not a number: "zzz`},
	}
	for _, c := range cases {
		_, err := Analyze(context.Background(), strings.NewReader(head+c.row), "t.csv", testSpec)
		if err == nil {
			t.Fatalf("%s: no error", c.name)
		}
		msg := err.Error()
		if len(msg) > 200 || !strings.HasPrefix(msg, c.prefix) || !strings.HasSuffix(msg, fmt.Sprintf("… (%d bytes)", len(huge))) {
			t.Errorf("%s: %d-byte message %.200q", c.name, len(msg), msg)
		}
	}
	er := NewEdgeReader(strings.NewReader("1 2\n3 "+strings.Repeat("9", maxEdgeLine-10)+"x\n"), "e.txt")
	for er.Next() {
	}
	if msg := er.Err().Error(); len(msg) > 200 || !strings.HasPrefix(msg, "e.txt:2: field 2: ") {
		t.Errorf("edge: %d-byte message %.200q", len(msg), msg)
	}
}

// failAfter yields the first n bytes of data, then fails with err.
type failAfter struct {
	data []byte
	n    int
	err  error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	k := copy(p, f.data[:min(f.n, len(f.data))])
	f.data, f.n = f.data[k:], f.n-k
	return k, nil
}

// Ensure that a read error in the middle of a node file names the file and
// the line where reading stopped (every earlier line read whole), in both
// passes and, for pass 1, sequentially and with parallel blocks.
func TestAnalyze_ReadErrorLine(t *testing.T) {
	var b strings.Builder
	b.WriteString("user_id,AGE,country,SALARY\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "%d,%d,%d,1\n", i, 20+i%50, i%2)
	}
	in := []byte(b.String())
	cause := errors.New("device on fire")
	oldW, oldB := pass1Workers, pass1Block
	defer func() { pass1Workers, pass1Block = oldW, oldB }()
	for _, cut := range []int{5, 27, 28, 40, 1000, 20000, len(in) - 3, len(in)} {
		want := bytes.Count(in[:cut], []byte{'\n'}) + 1
		for _, mode := range []struct{ workers, block int }{{1, 1 << 20}, {2, 64}, {3, 4096}} {
			pass1Workers = func() int { return mode.workers }
			pass1Block = mode.block
			_, err := Analyze(context.Background(), &failAfter{data: in, n: cut, err: cause}, "t.csv", testSpec)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrRead) || !errors.Is(err, cause) || e.File != "t.csv" || e.Line != want {
				t.Errorf("cut %d, %d workers, block %d: %v, want t.csv:%d: read", cut, mode.workers, mode.block, err, want)
			}
		}
	}
	// Pass 2 over the whole file read in pass 1.
	pass1Workers = oldW
	tab, err := Analyze(context.Background(), bytes.NewReader(in), "t.csv", testSpec)
	if err != nil {
		t.Fatal(err)
	}
	cut := 10000
	rr := tab.NewRowReader(&failAfter{data: in, n: cut, err: cause})
	for rr.Next() {
	}
	want := fmt.Sprintf("t.csv:%d: read: device on fire", bytes.Count(in[:cut], []byte{'\n'})+1)
	if rr.Err() == nil || rr.Err().Error() != want {
		t.Errorf("pass 2: %v, want %s", rr.Err(), want)
	}
}

// Ensure that a damaged gzip node file fails with its name, the line reached
// and "gzip" in the message: truncated, and with a bad checksum.
func TestAnalyzeFile_GzipErrorLine(t *testing.T) {
	var b strings.Builder
	b.WriteString("user_id,AGE,country,SALARY\n")
	for i := range 20000 {
		fmt.Fprintf(&b, "%d,%d,%d,1\n", i, (i*7919)%1000, i%2)
	}
	in := []byte(b.String())
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(in)
	zw.Close()
	z := zb.Bytes()
	dir := t.TempDir()
	badSum := append([]byte(nil), z...)
	badSum[len(badSum)-8] ^= 0xff // CRC-32 of the trailer
	for _, c := range []struct {
		name string
		data []byte
		want string // in the message after "file:line: read: "
		line func(int) bool
	}{
		{"truncated.csv.gz", z[:len(z)/2], "gzip: unexpected EOF (the compressed file is truncated)",
			func(l int) bool { return l > 1000 && l < 20001 }},
		{"checksum.csv.gz", badSum, "gzip: invalid checksum",
			func(l int) bool { return l == 20002 }},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := AnalyzeFile(context.Background(), p, testSpec)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrRead) || e.File != c.name || !c.line(e.Line) ||
			!strings.HasSuffix(err.Error(), ": read: "+c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
		if c.name == "truncated.csv.gz" && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: cause %v is not io.ErrUnexpectedEOF", c.name, err)
		}
	}
	if !utf8.ValidString(echo(strings.Repeat("é", 100))) {
		t.Error("echo cut a rune")
	}
}

// Ensure that a truncated gzip edge file fails with its name, the line
// reached and the gzip cause, after the edges before the damage.
func TestOpenEdges_GzipErrorLine(t *testing.T) {
	var b strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&b, "%d\t%d\n", i, (i*7919)%50000)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte(b.String()))
	zw.Close()
	p := filepath.Join(t.TempDir(), "e.txt.gz")
	if err := os.WriteFile(p, zb.Bytes()[:zb.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	er, err := OpenEdges(p)
	if err != nil {
		t.Fatal(err)
	}
	defer er.Close()
	n := 0
	for er.Next() {
		n++
	}
	var e *Error
	if !errors.As(er.Err(), &e) || !errors.Is(er.Err(), ErrRead) || e.File != "e.txt.gz" || e.Line != n+1 || n < 1000 ||
		!strings.HasSuffix(er.Err().Error(), "read: gzip: unexpected EOF (the compressed file is truncated)") {
		t.Errorf("after %d edges: %v", n, er.Err())
	}
}
