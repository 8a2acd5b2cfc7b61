package command

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/storage"
)

// germanDir is the shared German credit dump, relative to this package.
var germanDir = filepath.Join("..", "..", "..", "..", "shared", "datasets", "german")

// statsJSON runs fasd stats --json on db.
func statsJSON(t *testing.T, db string) index.Stats {
	t.Helper()
	out, err, _ := run(t, "stats", "--db", db, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var st index.Stats
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("%v in\n%s", err, out)
	}
	return st
}

// storeContent renders every key and value of the graph in the store at db,
// except the load report (which names the source and the time).
func storeContent(t *testing.T, db string) string {
	t.Helper()
	s, err := storage.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	it, err := s.NewIter([]byte{storage.ReservedPrefix + 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var b strings.Builder
	for ok := it.First(); ok; ok = it.Next() {
		if string(it.Key()) == "Mload" {
			continue
		}
		v, err := it.Value()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%x=%x\n", it.Key(), v)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Ensure that fasd load --preset german reproduces the published German
// credit figures (NIFTY's load_german: 27 features with Gender kept, labels
// 300/700 with -1 as class 0, split 100/250/250), that the same store
// results from explicit flags, and that without the label value map the
// load is refused with a message that points to it.
func TestLoad_GermanPreset(t *testing.T) {
	if _, err := os.Stat(germanDir); errors.Is(err, fs.ErrNotExist) {
		t.Skip("shared German credit dump not present at " + germanDir)
	}
	db := filepath.Join(t.TempDir(), "preset")
	out, err, code := run(t, "load", "--db", db, "--preset", "german", "--dir", germanDir)
	if err != nil || code != ExitOK {
		t.Fatalf("load: %v (exit %d)", err, code)
	}
	if !strings.Contains(out, "kept 21742 undirected") {
		t.Errorf("load output:\n%s", out)
	}
	st := statsJSON(t, db)
	if st.Nodes != 1000 || st.Edges != 21742 || st.Features != 27 {
		t.Errorf("nodes %d edges %d features %d, want 1000 21742 27", st.Nodes, st.Edges, st.Features)
	}
	if (st.Groups != index.GroupCounts{G0: 690, G1: 310}) || (st.Labels != index.LabelCounts{Y0: 300, Y1: 700}) {
		t.Errorf("groups %+v labels %+v", st.Groups, st.Labels)
	}
	if (st.Splits != index.SplitCounts{Train: 100, Val: 250, Test: 250}) {
		t.Errorf("splits %+v", st.Splits)
	}
	_, g, err := openGraph(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	names := g.Schema().Features
	g.Store().Close()
	if names[0] != "Gender" || slices.Contains(names, "PurposeOfLoan") || slices.Contains(names, "OtherLoansAtStore") || slices.Contains(names, "GoodCustomer") {
		t.Errorf("features %v", names)
	}

	nodes, edges := filepath.Join(germanDir, "german.csv.gz"), filepath.Join(germanDir, "german_edges.txt.gz")
	flags := []string{"load", "--nodes", nodes, "--edges", edges, "--no-id",
		"--sens-col", "Gender", "--sens-values", "Male=0,Female=1", "--sens-feature",
		"--label-col", "GoodCustomer", "--exclude", "OtherLoansAtStore,PurposeOfLoan"}
	explicit := filepath.Join(t.TempDir(), "flags")
	args := append(slices.Clone(flags), "--db", explicit, "--label-values", "1=1,-1=0", "--split", "nifty", "--label-number", "100")
	if _, err, code := run(t, args...); err != nil || code != ExitOK {
		t.Fatalf("load by flags: %v (exit %d)", err, code)
	}
	if a, b := storeContent(t, db), storeContent(t, explicit); a != b {
		t.Errorf("preset and flags give different stores (%d and %d bytes of dump)", len(a), len(b))
	}
	// Without the label value map, -1 reads as unlabelled: refused, with
	// the way out in the message.
	refused := filepath.Join(t.TempDir(), "refused")
	_, err, code = run(t, append(slices.Clone(flags), "--db", refused, "--split", "nifty", "--label-number", "100")...)
	if code != ExitBadInput || !errors.Is(err, index.ErrDegenerate) ||
		!strings.Contains(err.Error(), "class 1 (700 nodes, 300 unlabelled") || !strings.Contains(err.Error(), "--label-values 1=1,-1=0") {
		t.Errorf("without --label-values: exit %d, %v", code, err)
	}
}

// niftyFixture describes a generated node file in the form of a published
// NIFTY-format dataset: the preset's sensitive, label and dropped columns
// under their published names, among other numeric columns.
type niftyFixture struct {
	preset      string
	columns     []string // in file order
	sens, label string
	dropped     []string
	labelNumber int
	gz          bool
	edgeEOL     string // line end of the edge file ("\n" as numpy.savetxt writes, or "\r\n")
}

// write writes the fixture's files into dir with n nodes: the node file
// with CRLF line ends and no newline after the last row, the edge file as
// space-separated row indices written as floats (as numpy.savetxt writes
// them, with f.edgeEOL line ends), without a final newline. It returns the
// expected figures.
func (f niftyFixture) write(t *testing.T, dir string, n int, r *rand.Rand) index.Stats {
	t.Helper()
	var nb strings.Builder
	nb.WriteString(strings.Join(f.columns, ","))
	var st index.Stats
	st.Nodes = n
	st.Features = len(f.columns) - 1 - len(f.dropped)
	for i := range n {
		nb.WriteString("\r\n")
		cells := make([]string, len(f.columns))
		for j, c := range f.columns {
			switch c {
			case f.sens:
				s := r.IntN(2)
				cells[j] = fmt.Sprint(s)
				if s == 0 {
					st.Groups.G0++
				} else {
					st.Groups.G1++
				}
			case f.label:
				y := 0
				if r.IntN(10) < 3 || i == 0 {
					y = 1
				}
				cells[j] = fmt.Sprint(y)
				if y == 0 {
					st.Labels.Y0++
				} else {
					st.Labels.Y1++
				}
			default:
				if j%2 == 0 {
					cells[j] = fmt.Sprint(r.IntN(5))
				} else {
					cells[j] = fmt.Sprintf("%.3f", r.Float64()*1000)
				}
			}
		}
		nb.WriteString(strings.Join(cells, ","))
	}
	var eb strings.Builder
	seen := map[[2]int]bool{}
	for k := range 4 * n {
		a, b := r.IntN(n), r.IntN(n)
		if k > 0 {
			eb.WriteString(f.edgeEOL)
		}
		fmt.Fprintf(&eb, "%.18e %.18e", float64(a), float64(b))
		if a != b {
			seen[[2]int{min(a, b), max(a, b)}] = true
		}
	}
	st.Edges = int64(len(seen))
	// The NIFTY split: per class, train min(int(0.5 n), N/2), val up to
	// int(0.75 n), test the rest.
	for _, c := range []int{st.Labels.Y0, st.Labels.Y1} {
		a, b := int(0.5*float64(c)), int(0.75*float64(c))
		st.Splits.Train += min(a, f.labelNumber/2)
		st.Splits.Val += b - a
		st.Splits.Test += c - b
	}
	write := func(name, content string) {
		data := []byte(content)
		if f.gz {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			if _, err := zw.Write(data); err != nil {
				t.Fatal(err)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			name, data = name+".gz", buf.Bytes()
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(f.preset+".csv", nb.String())
	write(f.preset+"_edges.txt", eb.String())
	return st
}

// Ensure that the bail, credit and income presets load generated files in
// their published form (names, column names, value forms) with the NIFTY
// conventions: sensitive column kept, dropped columns gone, row-index edges
// written as floats, the per-class split with the preset's label number.
func TestLoad_NIFTYPresetsGenerated(t *testing.T) {
	fixtures := []niftyFixture{
		{preset: "bail", sens: "WHITE", label: "RECID", labelNumber: 100, edgeEOL: "\n",
			columns: []string{"WHITE", "ALCHY", "JUNKY", "SUPER", "MARRIED", "FELON", "WORKREL", "PROPTY", "PERSON", "MALE",
				"PRIORS", "SCHOOL", "RULE", "AGE", "TSERVD", "FOLLOW", "RECID", "TIME"}},
		{preset: "credit", sens: "Age", label: "NoDefaultNextMonth", dropped: []string{"Single"}, labelNumber: 6000, edgeEOL: "\r\n",
			columns: []string{"NoDefaultNextMonth", "Married", "Single", "Age", "EducationLevel", "MaxBillAmountOverLast6Months",
				"MaxPaymentAmountOverLast6Months", "MonthsWithZeroBalanceOverLast6Months", "MostRecentBillAmount",
				"MostRecentPaymentAmount", "TotalOverdueCounts", "TotalMonthsOverdue"}},
		{preset: "income", sens: "race", label: "income", labelNumber: 1000, gz: true, edgeEOL: "\n",
			columns: []string{"age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
				"relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income"}},
	}
	for i, f := range fixtures {
		t.Run(f.preset, func(t *testing.T) {
			dir := t.TempDir()
			want := f.write(t, dir, 400, rand.New(rand.NewPCG(uint64(i), 7)))
			db := filepath.Join(t.TempDir(), "db")
			if _, err, code := run(t, "load", "--db", db, "--preset", f.preset, "--dir", dir); err != nil || code != ExitOK {
				t.Fatalf("load: %v (exit %d)", err, code)
			}
			st := statsJSON(t, db)
			if st.Nodes != want.Nodes || st.Edges != want.Edges || st.Features != want.Features ||
				st.Groups != want.Groups || st.Labels != want.Labels || st.Splits != want.Splits {
				t.Errorf("got nodes %d edges %d features %d groups %+v labels %+v splits %+v\nwant nodes %d edges %d features %d groups %+v labels %+v splits %+v",
					st.Nodes, st.Edges, st.Features, st.Groups, st.Labels, st.Splits,
					want.Nodes, want.Edges, want.Features, want.Groups, want.Labels, want.Splits)
			}
			_, g, err := openGraph(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			names := g.Schema().Features
			g.Store().Close()
			if !slices.Contains(names, f.sens) || slices.Contains(names, f.label) {
				t.Errorf("features %v: want %s kept and %s gone", names, f.sens, f.label)
			}
			for _, d := range f.dropped {
				if slices.Contains(names, d) {
					t.Errorf("dropped column %s among the features", d)
				}
			}
		})
	}
}

// Ensure that each load guard maps to exit 3 with its cause and override
// flag, leaves a loaded store untouched even with --replace, and that the
// override flag loads the graph.
func TestLoad_Guards(t *testing.T) {
	dir := t.TempDir()
	if _, err, _ := run(t, "gen", "--out", dir, "--nodes", "200", "--features", "4"); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nodes := write("n.csv", "id,s,y,f\n1,0,1,2\n2,1,0,3\n3,0,1,4\n")
	edges := write("e.txt", "1 2\n2 3\n")
	custom := func(n, e string, extra ...string) []string {
		return append([]string{"load", "--nodes", n, "--edges", e, "--id-col", "id", "--sens-col", "s", "--label-col", "y", "--split", "none"}, extra...)
	}
	cases := []struct {
		name  string
		args  []string
		allow string // "" when no override exists
		msg   string
	}{
		{"header-only node file", custom(write("h.csv", "id,s,y,f\n"), edges), "", "has a header but no data rows"},
		{"one class", custom(write("c.csv", "id,s,y,f\n1,0,1,2\n2,1,1,3\n"), edges), "--allow-single-class", "every labelled node of c.csv has class 1"},
		{"one group", custom(write("g.csv", "id,s,y,f\n1,1,1,2\n2,1,0,3\n"), edges), "--allow-single-group", "is in group 1 (2 nodes"},
		{"empty edge file", custom(nodes, write("empty.txt", "")), "--allow-no-edges", "empty.txt holds no edge line"},
		{"edge ids as rows", custom(nodes, write("big.txt", "10 20\n20 30\n"), "--edge-ids", "row"), "--allow-no-edges",
			`all 2 edge lines of big.txt name an endpoint that is not a node of n.csv, reading endpoints as 0-based row indices`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "db")
			if _, err, code := run(t, "load", "--db", db, "--preset", "synth", "--dir", dir); err != nil || code != ExitOK {
				t.Fatalf("load: %v (exit %d)", err, code)
			}
			before := storeContent(t, db)
			args := append(slices.Clone(c.args), "--db", db, "--replace")
			_, err, code := run(t, args...)
			if code != ExitBadInput || !strings.Contains(fmt.Sprint(err), c.msg) {
				t.Fatalf("exit %d, %v; want %d and %q", code, err, ExitBadInput, c.msg)
			}
			if c.allow != "" && !strings.Contains(err.Error(), c.allow) {
				t.Errorf("message %q does not name %s", err, c.allow)
			}
			if storeContent(t, db) != before {
				t.Fatal("refused load changed the store")
			}
			if c.allow == "" {
				return
			}
			if _, err, code := run(t, append(args, c.allow)...); err != nil || code != ExitOK {
				t.Errorf("with %s: %v (exit %d)", c.allow, err, code)
			}
		})
	}
}

// Ensure that the split and value-map flags refuse contradictory use.
func TestLoad_SplitAndValueFlags(t *testing.T) {
	dir := t.TempDir()
	if _, err, _ := run(t, "gen", "--out", dir, "--nodes", "200", "--features", "4"); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "db")
	base := []string{"load", "--db", db, "--preset", "synth", "--dir", dir}
	cases := []struct {
		extra []string
		code  int
		msg   string
	}{
		{[]string{"--split", "nifty"}, ExitUsage, "--label-number"},
		{[]string{"--label-number", "10"}, ExitUsage, "nifty split only"},
		{[]string{"--split", "nifty", "--split-protocol", "nba", "--label-number", "10"}, ExitUsage, "dig split only"},
		{[]string{"--label-values", "1=1,0=0", "--all-labelled"}, ExitUsage, "--label-values excludes"},
		{[]string{"--label-values", "1=1,x"}, ExitUsage, "--label-values"},
		{[]string{"--label-values", "1=1,1.0=0"}, ExitUsage, "same number"},
		{[]string{"--split", "nifty", "--label-number", "20"}, ExitOK, ""},
	}
	for _, c := range cases {
		_, err, code := run(t, append(slices.Clone(base), c.extra...)...)
		if code != c.code || (c.msg != "" && !strings.Contains(fmt.Sprint(err), c.msg)) {
			t.Errorf("%v: exit %d, %v; want %d and %q", c.extra, code, err, c.code, c.msg)
		}
	}
	if st := statsJSON(t, db); st.Splits.Train != 20 {
		t.Errorf("nifty split with label number 20: %+v", st.Splits)
	}
}

// Ensure that the load report names the split with its parameters.
func TestLoad_ReportNamesSplit(t *testing.T) {
	dir := t.TempDir()
	if _, err, _ := run(t, "gen", "--out", dir, "--nodes", "200", "--features", "4"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		extra []string
		want  string
	}{
		{nil, "(dig: a 0.1, b 0.2, cap 50000, seed 20)"},
		{[]string{"--split-protocol", "nba", "--split-seed", "7"}, "(dig: a 0.2, b 0.55, cap 100, seed 7)"},
		{[]string{"--split", "nifty", "--label-number", "30"}, "(nifty: label number 30, seed 20)"},
		{[]string{"--split", "fractions", "--train", "0.6"}, "(fractions: train 0.6, val 0.25, seed 20)"},
		{[]string{"--split", "none"}, "train 0  val 0  test 0  (none)"},
	}
	for _, c := range cases {
		db := filepath.Join(t.TempDir(), "db")
		out, err, _ := run(t, append([]string{"load", "--db", db, "--preset", "synth", "--dir", dir}, c.extra...)...)
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("%v: %v, output lacks %q:\n%s", c.extra, err, c.want, out)
		}
	}
}

// Ensure that fasd load --list-presets prints every preset of the registry
// with its conventions, without needing --db.
func TestLoad_ListPresets(t *testing.T) {
	out, err, code := run(t, "load", "--list-presets")
	if err != nil || code != ExitOK {
		t.Fatalf("%v (exit %d)", err, code)
	}
	blocks := map[string]string{}
	for _, b := range strings.Split(strings.TrimSpace(out), "\n\n") {
		name, _, _ := strings.Cut(b, " ")
		blocks[name] = b
	}
	if len(blocks) != len(dump.PresetNames()) {
		t.Errorf("%d blocks for %d presets:\n%s", len(blocks), len(dump.PresetNames()), out)
	}
	for _, name := range dump.PresetNames() {
		p, _ := dump.LookupPreset(name)
		for _, want := range []string{p.NodeFile, p.EdgeFile, "sensitive " + p.Spec.Sensitive.Column, "label " + p.Spec.Label.Column, p.Origin} {
			if !strings.Contains(blocks[name], want) {
				t.Errorf("preset %s: %q missing from\n%s", name, want, blocks[name])
			}
		}
	}
	if !strings.Contains(out, "label GoodCustomer: -1=0, 1=1") || !strings.Contains(out, "split nifty: label number 6000") {
		t.Errorf("output:\n%s", out)
	}
}

// Ensure that the README's preset table lists every preset of the
// registry.
func TestREADME_PresetTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| `") {
			name := strings.TrimPrefix(line, "| `")
			rows = append(rows, name[:strings.Index(name, "`")])
		}
	}
	var presets []string
	for _, r := range rows {
		if _, err := dump.LookupPreset(r); err == nil {
			presets = append(presets, r)
		}
	}
	slices.Sort(presets)
	if !slices.Equal(presets, dump.PresetNames()) {
		t.Errorf("README preset table lists %v, the registry %v", presets, dump.PresetNames())
	}
}
