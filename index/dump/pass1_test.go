package dump

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
)

// pass1Result is everything pass 1 produces that must not depend on how it
// ran.
type pass1Result struct {
	table string // statistics and ids, rendered
	spill []byte
	err   string
}

// runPass1 runs AnalyzeSpill over in with the given number of workers and
// block size, and checks that pass 2 over the CSV accepts the table's
// content hash.
func runPass1(t *testing.T, in string, spec Spec, workers, blockSize int) pass1Result {
	t.Helper()
	oldW, oldB := pass1Workers, pass1Block
	pass1Workers = func() int { return workers }
	pass1Block = blockSize
	defer func() { pass1Workers, pass1Block = oldW, oldB }()
	var spill bytes.Buffer
	tab, err := AnalyzeSpill(context.Background(), strings.NewReader(in), "t.csv", spec, &spill)
	if err != nil {
		return pass1Result{err: err.Error()}
	}
	if _, err := rowsOf(tab.NewRowReader(strings.NewReader(in))); err != nil {
		t.Fatalf("workers %d block %d: pass 2 over the same CSV: %v", workers, blockSize, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rows %d groups %v/%d labels %v/%d joint %v\n", tab.Rows, tab.Groups, tab.UnknownSensitive,
		tab.Labels, tab.NumUnlabelled, tab.Joint)
	for j := range tab.Min {
		fmt.Fprintf(&b, "%x %x ", math.Float64bits(tab.Min[j]), math.Float64bits(tab.Max[j]))
	}
	if tab.ids != nil {
		fmt.Fprintf(&b, "\nids %d:", len(tab.ids))
		for id, row := range tab.ids {
			if r, ok := tab.Resolve(id); !ok || r != int(row) {
				t.Fatalf("Resolve(%d) = %d %v, want %d", id, r, ok, row)
			}
		}
	}
	return pass1Result{table: b.String(), spill: spill.Bytes()}
}

// checkPass1Modes compares parallel runs with tiny blocks against the
// sequential run.
func checkPass1Modes(t *testing.T, in string, spec Spec) {
	t.Helper()
	want := runPass1(t, in, spec, 1, 1<<20)
	for _, workers := range []int{2, 3} {
		for _, bs := range []int{1, 7, 40, 300} {
			got := runPass1(t, in, spec, workers, bs)
			if got.err != want.err || got.table != want.table || !bytes.Equal(got.spill, want.spill) {
				t.Fatalf("workers %d block %d on %q:\n got %+v\nwant %+v", workers, bs, in, got, want)
			}
		}
	}
}

// Ensure that parallel pass 1 gives the table, the spill and the first error
// of sequential pass 1: blank lines, CRLF, no final newline, quotes late in
// the file (the rest is then read sequentially), a header after blank
// lines, bad rows and duplicate ids in later blocks, lines longer than a
// block.
func TestAnalyze_ParallelSameAsSequential(t *testing.T) {
	const head = "user_id,a,b,country,SALARY\n"
	var rows strings.Builder
	for i := range 60 {
		fmt.Fprintf(&rows, "%d,%d,%g,%d,%d\n", 100+i, i%2, float64(i)/7, i%3-1, i%4-1)
	}
	body := rows.String()
	noID := Spec{Sensitive: testSpec.Sensitive, Label: testSpec.Label, Exclude: []string{"user_id"}, Scale: true}
	long := strings.Repeat("1", 500)
	cases := map[string]string{
		"plain":           head + body,
		"crlf":            strings.ReplaceAll(head+body, "\n", "\r\n"),
		"blank lines":     "\n\r\n" + head + "\n" + strings.ReplaceAll(body, "\n", "\n\n"),
		"no final eol":    head + strings.TrimSuffix(body, "\n"),
		"final cr":        head + strings.TrimSuffix(body, "\n") + "\r",
		"quote late":      head + body + "\"200\",1,2,0,1\n" + "201,0,\"3\n\",1,1\n202,1,1,1,1\n",
		"quote in header": "\"user_id\",a,b,country,SALARY\n" + body,
		"bad row late":    head + body + "300,x,1,1,1\n301,1,1,1,1\n",
		"dup id late":     head + body + "100,1,1,1,1\n",
		"dup before bad":  head + body + "100,1,1,1,1\n300,x,1,1,1\n",
		"field count":     head + body + "1,2\n",
		"long line":       head + body + "400," + long + ",1,1,1\n" + body[:40],
		"header only":     head,
		"empty":           "",
		"syntax late":     head + body + "500,1,2,0,\"1\n",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			checkPass1Modes(t, in, testSpec)
			checkPass1Modes(t, in, noID)
		})
	}
}

// FuzzAnalyzeParallel checks parallel pass 1 against sequential pass 1 on
// arbitrary rows.
func FuzzAnalyzeParallel(f *testing.F) {
	f.Add("1,0,0,1\n2,1,1,0\n", "3,0.5,1,1\n\n4,2,0,-1")
	f.Add("1,0,0,1\r\n2,1,1,0\r\n", "\"3\",1,1,1\n")
	f.Add("1,0,0,1\n1,1,1,0\n", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		in := "id,x,s,y\n" + a + "\n" + b
		checkPass1Modes(t, in, Spec{IDColumn: "id", Sensitive: SensitiveSpec{Column: "s"}, Label: LabelSpec{Column: "y"}, Scale: true})
	})
}
