package command

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// predictionJSON is the shape of fasd predict --json (query.Prediction).
type predictionJSON struct {
	Node         uint32                `json:"node"`
	ID           int64                 `json:"id"`
	Class        int                   `json:"class"`
	Probs        [2]float64            `json:"probs"`
	Subgraphs    int                   `json:"subgraphs"`
	Variants     map[string][2]float64 `json:"variants"`
	Model        string                `json:"model"`
	ViewVersion  uint64                `json:"view_version"`
	GraphVersion uint64                `json:"graph_version"`
	Stale        bool                  `json:"stale"`
	Source       string                `json:"source"`
}

// base returns the no_diffusion variant's probabilities, nil without one.
func (p predictionJSON) base() *[2]float64 {
	v, ok := p.Variants["no_diffusion"]
	if !ok {
		return nil
	}
	return &v
}

// predictAll returns the predict --all --json lines of db.
func predictAll(t *testing.T, db string) []predictionJSON {
	t.Helper()
	out, err, _ := run(t, "predict", "--db", db, "--all", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var ps []predictionJSON
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var p predictionJSON
		decodeStrict(t, line, &p)
		ps = append(ps, p)
	}
	return ps
}

// Ensure that fasd predict prints views (text, --json, --all as JSON
// lines with external ids), that a node queried before materialize is
// computed cold to exactly its materialized value, and that bad flags,
// unknown nodes and missing stores fail with the documented exit codes.
func TestPredictCommand(t *testing.T) {
	db := fixtureStore(t, "views")
	all := predictAll(t, db)
	if len(all) < fixtureNodes/2 {
		t.Fatalf("%d views", len(all))
	}
	for i, p := range all {
		if p.ID == 0 || p.Source != "view" || p.Stale || p.Subgraphs < 1 || p.base() == nil {
			t.Fatalf("--all line %d: %+v", i, p)
		}
		if s := p.Probs[0] + p.Probs[1]; s < 0.999 || s > 1.001 || (p.Class == 1) != (p.Probs[1] > 0.5) {
			t.Fatalf("--all line %d: probabilities %v, class %d", i, p.Probs, p.Class)
		}
		if i > 0 && p.Node <= all[i-1].Node {
			t.Fatalf("--all not in node order at line %d", i)
		}
	}
	first, last := all[0], all[len(all)-1]
	out, err, code := run(t, "predict", "--db", db, "--node", fmt.Sprint(first.ID), "--json")
	if err != nil || code != ExitOK {
		t.Fatalf("predict: %v (exit %d)", err, code)
	}
	var p predictionJSON
	decodeStrict(t, out, &p)
	if p.ID != first.ID || p.Node != first.Node || p.Probs != first.Probs || p.base() == nil || *p.base() != *first.base() ||
		p.Source != "view" || p.Subgraphs != first.Subgraphs || p.Model == "" || p.Model != first.Model {
		t.Errorf("predict --node %d = %+v, --all has %+v", first.ID, p, first)
	}
	// Text form, two nodes in one comma-separated flag.
	out, err, _ = run(t, "predict", "--db", db, "--node", fmt.Sprintf("%d,%d", first.ID, last.ID))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("text output:\n%s", out)
	}
	for i, q := range []predictionJSON{first, last} {
		want := fmt.Sprintf("node %d: class %d  P(1)=%.4f  subgraphs %d  source view  no_diffusion P(1)=%.4f",
			q.ID, q.Class, q.Probs[1], q.Subgraphs, q.base()[1])
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %q, want prefix %q", lines[i], want)
		}
	}
	out, err, _ = run(t, "predict", "--db", db, "--all")
	if err != nil || strings.Count(out, "\n") != len(all) || !strings.HasPrefix(out, fmt.Sprintf("node %d (#%d): class", first.ID, first.Node)) {
		t.Errorf("--all text (%v):\n%.300s", err, out)
	}

	// Before materialize, the same node is computed on the spot (cold)
	// and equals its materialized view exactly.
	fresh := fixtureStore(t, "trained")
	out, err, _ = run(t, "predict", "--db", fresh, "--node", fmt.Sprint(last.ID), "--json")
	if err != nil {
		t.Fatal(err)
	}
	decodeStrict(t, out, &p)
	if p.Source != "cold" || p.Probs != last.Probs || p.Subgraphs != last.Subgraphs || *p.base() != *last.base() {
		t.Errorf("cold prediction %+v, view %+v", p, last)
	}

	// --subgraph: the debiased subgraph of a root (some viewed nodes root
	// none: they fail with a clear message).
	roots, nonRoots := 0, 0
	for _, q := range all[:min(len(all), 40)] {
		out, err, code := run(t, "predict", "--db", db, "--node", fmt.Sprint(q.ID), "--subgraph", "--json")
		if err != nil {
			if code != ExitFailure || !strings.Contains(err.Error(), "roots no subgraph") {
				t.Fatalf("--subgraph %d: %v (exit %d)", q.ID, err, code)
			}
			nonRoots++
			continue
		}
		var d struct {
			RootID int64     `json:"root_id"`
			IDs    []int64   `json:"ids"`
			D      int       `json:"d"`
			X      []float32 `json:"x"`
			A      []float32 `json:"a"`
			Model  string    `json:"model"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("--subgraph %d: %v in %.300s", q.ID, err, out)
		}
		n := len(d.IDs)
		if d.RootID != q.ID || n == 0 || d.IDs[0] != q.ID || len(d.X) != n*d.D || len(d.A) != n*n || d.Model != q.Model {
			t.Fatalf("--subgraph %d: %.300s", q.ID, out)
		}
		if roots == 0 {
			text, err, _ := run(t, "predict", "--db", db, "--node", fmt.Sprint(q.ID), "--subgraph")
			if err != nil || !strings.HasPrefix(text, fmt.Sprintf("subgraph of node %d: %d nodes, %d features", q.ID, n, d.D)) {
				t.Fatalf("--subgraph text (%v): %q", err, text)
			}
		}
		roots++
	}
	if roots == 0 {
		t.Fatalf("no root among the first viewed nodes (%d non-roots)", nonRoots)
	}

	checkErrCases(t, []errCase{
		{"no node", []string{"predict", "--db", db}, ExitUsage, "--node ID"},
		{"subgraph all", []string{"predict", "--db", db, "--all", "--subgraph"}, ExitUsage, "--subgraph needs --node"},
		{"bad id", []string{"predict", "--db", db, "--node", "abc"}, ExitUsage, "invalid argument"},
		{"no db", []string{"predict", "--node", "1"}, ExitUsage, "--db DIR is required"},
		{"unknown node", []string{"predict", "--db", db, "--node", "12345"}, ExitFailure, "unknown node: external id 12345"},
		{"no store", []string{"predict", "--db", filepath.Join(t.TempDir(), "absent"), "--all"}, ExitStoreState, "no store"},
		{"no graph", []string{"predict", "--db", emptyStore(t), "--all"}, ExitStoreState, "no graph"},
		{"no model", []string{"predict", "--db", fixtureStore(t, "graph"), "--node", extID(0)}, ExitStoreState, "no trained models"},
	})
}
