package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/index/synth"
	"github.com/fasd-db/fasd/query"
)

// Ensure that fasd demo runs every step of the chain in order on a small
// graph with tiny training settings, ends with the new node served from a
// refreshed view and the audit printed before and after the update, and
// leaves a usable store behind.
func TestDemoCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model (a few seconds)")
	}
	dir := filepath.Join(t.TempDir(), "demo")
	args := []string{"demo", "--dir", dir, "--nodes", "300", "--seeds", "2"}
	for i := 0; i < len(tinyTrain); i++ {
		if tinyTrain[i] == "--set" {
			args = append(args, "--set", tinyTrain[i+1])
		}
	}
	// The demo trains with the default (budgeted) preset: a tiny budget.
	args = append(args, "--set", "score.budget=128", "--set", "score.evals=2")
	out, err, code := run(t, args...)
	if err != nil || code != ExitOK {
		t.Fatalf("demo: %v (exit %d)\n%s", err, code, out)
	}
	rest := out
	for _, want := range []string{
		"== generate a graph with removable bias  (fasd gen)", "nodes     300 ",
		"== load it into an embedded Pebble store  (fasd load)",
		"== graph statistics  (fasd stats)", "nodes      300\n",
		"== compare FASD with the w/o-Diffusion baseline and the plain GCN (paired over seeds)  (fasd eval)",
		"paired differences vs no_diffusion", "verdict, fasd vs no_diffusion over 2 seeds", "→ ",
		"== train and store FASD and the w/o-Diffusion baseline  (fasd train)", "run 1 (seed",
		"== materialize the fair-prediction views  (fasd materialize)", "materialized ",
		"== fairness audit of the views", "w/o Diffusion (before)", "FASD (after)",
		"== query some nodes  (fasd predict)", "node " + extID(0) + ": class ",
		"== apply an update (edges and a new labelled node)  (fasd update)", "graph version 2: +1/−0 nodes, +",
		"== query the same nodes", "node " + extID(4) + ": class ",
		"== refresh the remaining dirty subgraphs  (fasd refresh)", "refreshed ",
		"== query the new node  (fasd predict)", "node 999000001: class ", "source view",
		"== fairness audit after the update  (fasd audit)", "FASD (after)",
		"demo finished in ", "try: fasd serve --db " + filepath.Join(dir, "store"),
	} {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("output lacks %q (in order); output:\n%s", want, out)
		}
		rest = rest[i+len(want):]
	}
	for _, f := range []string{"update-edges.txt", "update-nodes.json", filepath.Join("dump", "synth.csv")} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The store is left in a usable state.
	if out, err, _ := run(t, "predict", "--db", filepath.Join(dir, "store"), "--node", "999000001"); err != nil || !strings.Contains(out, "source view") {
		t.Errorf("predict on the demo store: %v\n%s", err, out)
	}
	checkErrCases(t, []errCase{
		{"empty dir", []string{"demo", "--dir", ""}, ExitUsage, "--dir must not be empty"},
		{"small graph", []string{"demo", "--dir", dir, "--nodes", "50"}, ExitUsage, "at least 200"},
		{"positional", []string{"demo", "now"}, ExitUsage, "unexpected argument"},
		{"one seed", []string{"demo", "--dir", dir, "--seeds", "1"}, ExitUsage, "at least 2"},
		{"bad override", []string{"demo", "--dir", filepath.Join(t.TempDir(), "d2"), "--nodes", "200", "--set", "score.nope=1"}, ExitUsage, "score.nope"},
	})
}

// Ensure that the demo's update files decode as the update command reads
// them: a pair of distinct synth ids per edge line, and one valid labelled
// test node with the removable preset's feature count.
func TestDemoUpdateFiles(t *testing.T) {
	dir := t.TempDir()
	edges, nodes, err := demoUpdateFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	list, _, err := readEdgeFile(edges)
	if err != nil || len(list) == 0 {
		t.Fatalf("edges: %v (%d)", err, len(list))
	}
	first200 := map[int64]bool{}
	for i := range demoMinNodes {
		first200[synth.NodeID(i)] = true
	}
	for _, e := range list {
		if !first200[e[0]] || !first200[e[1]] {
			t.Errorf("edge %v leaves the first %d nodes", e, demoMinNodes)
		}
	}
	f, err := os.Open(nodes)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := query.DecodeNodes(f)
	if err != nil || len(got) != 1 || got[0].ID != 999000001 || got[0].Split != index.SplitTest || got[0].Label != 0 || got[0].Sensitive != 1 {
		t.Fatalf("nodes file: %v %+v", err, got)
	}
	u := query.ExternalUpdate{Nodes: got}
	if err := u.Validate(synth.Removable().Features); err != nil {
		t.Fatalf("nodes file: %v", err)
	}
}
