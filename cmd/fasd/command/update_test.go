package command

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/index/synth"
	"github.com/fasd-db/fasd/query"
)

// updateJSON is the shape of fasd update --json.
type updateJSON struct {
	Update struct {
		GraphVersion uint64   `json:"graph_version"`
		EdgesAdded   int      `json:"edges_added"`
		EdgesRemoved int      `json:"edges_removed"`
		NodesAdded   []uint32 `json:"nodes_added"`
		Touched      int      `json:"touched"`
		Dirty        int      `json:"dirty"`
		DirtyTotal   int      `json:"dirty_total"`
		Stale        int      `json:"stale"`
	} `json:"update"`
	Refresh *refreshJSON `json:"refresh"`
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// updateFiles writes an edge file (edges among the first fixture nodes,
// with a comment and a blank line) and a nodes file adding one labelled
// test node linked to three of them.
func updateFiles(t *testing.T) (edges, nodes string) {
	t.Helper()
	edges = writeFile(t, "edges.txt", fmt.Sprintf("# u v\n%s %s\n\n%s,%s  # comma-separated\n%s\t%s\n",
		extID(1), extID(57), extID(2), extID(88), extID(3), extID(150)))
	feat := make([]float64, 6)
	for i := range feat {
		feat[i] = float64(i)/6 - 0.4
	}
	b, err := json.Marshal(map[string][]query.NewNode{"nodes": {{
		ID: 777, Features: feat, Sensitive: 1, Label: 1, Split: index.SplitTest,
		Edges: []int64{synth.NodeID(0), synth.NodeID(1), synth.NodeID(2)},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return edges, writeFile(t, "nodes.json", string(b))
}

// Ensure that fasd update applies edges and nodes as one update (text and
// --json), that re-adding present edges changes nothing, that a failing
// update leaves the graph untouched, that --refresh leaves no stale view,
// and that bad files and flags fail with the documented exit codes.
func TestUpdateCommand(t *testing.T) {
	db := fixtureStore(t, "views")
	edges, nodes := updateFiles(t)
	out, err, code := run(t, "update", "--db", db, "--add-edges", edges, "--nodes", nodes, "--json")
	if err != nil || code != ExitOK {
		t.Fatalf("update: %v (exit %d)", err, code)
	}
	var up updateJSON
	decodeStrict(t, out, &up)
	u := up.Update
	// The new node and its three edges, plus the three listed edges
	// unless one was present already.
	if len(u.NodesAdded) != 1 || u.NodesAdded[0] != fixtureNodes || u.EdgesAdded < 3 || u.EdgesAdded > 6 || u.EdgesRemoved != 0 {
		t.Fatalf("update report %+v", u)
	}
	// A new labelled test node is a root: at least its own subgraph is
	// dirty, and it is stale.
	if u.Dirty < 1 || u.DirtyTotal != u.Dirty || u.Stale < 1 || u.Touched < 4 || up.Refresh != nil {
		t.Errorf("update report %+v, refresh %v", u, up.Refresh)
	}
	version := u.GraphVersion

	// The same edges again: nothing changes.
	out, err, _ = run(t, "update", "--db", db, "--add-edges", edges, "--json")
	if err != nil {
		t.Fatal(err)
	}
	decodeStrict(t, out, &up)
	if up.Update.EdgesAdded != 0 || up.Update.Dirty != 0 || up.Update.GraphVersion != version {
		t.Errorf("re-adding present edges: %+v", up.Update)
	}

	// One valid edge and one to an unknown node: the update fails as a
	// whole and the graph version stays.
	partial := writeFile(t, "partial.txt", fmt.Sprintf("%s %s\n%s 424242\n", extID(10), extID(11), extID(12)))
	if _, err, code := run(t, "update", "--db", db, "--add-edges", partial); code != ExitBadInput || !strings.Contains(err.Error(), "partial.txt:2: field 2: index: unknown edge endpoint: node 424242 is not in the graph") {
		t.Fatalf("unknown node: exit %d (%v)", code, err)
	}

	// Remove the listed edges (all present now) and refresh at once: no
	// view stays stale.
	out, err, _ = run(t, "update", "--db", db, "--remove-edges", edges, "--refresh")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("graph version %d: +0/−0 nodes, +0/−3 edges, 6 nodes touched;", version+1)
	if !strings.HasPrefix(out, want) || !strings.Contains(out, "\nrefreshed ") || !strings.Contains(out, "complete true)") {
		t.Errorf("output lacks %q or the refresh line:\n%s", want, out)
	}
	for _, p := range predictAll(t, db) {
		if p.Stale {
			t.Fatalf("node %d stale after update --refresh", p.ID)
		}
	}
	out, err, _ = run(t, "predict", "--db", db, "--node", "777", "--json")
	var p predictionJSON
	if err == nil {
		decodeStrict(t, out, &p)
	}
	if err != nil || p.Source != "view" || p.Subgraphs < 1 || p.ViewVersion != version+1 {
		t.Errorf("new node after refresh: %+v (%v)", p, err)
	}

	badFeat := writeFile(t, "bad.json", `{"nodes":[{"id":5,"features":[1,2]}]}`)
	checkErrCases(t, []errCase{
		{"nothing", []string{"update", "--db", db}, ExitUsage, "give --nodes, --edit, --delete, --add-edges or --remove-edges"},
		{"no db", []string{"update", "--add-edges", edges}, ExitUsage, "--db DIR is required"},
		{"three ids", []string{"update", "--db", db, "--add-edges", writeFile(t, "e3.txt", "# x\n1 2 3 # c\n")}, ExitBadInput,
			`e3.txt:2: malformed edge line: more than two fields: "1 2 3 # c"`},
		{"not an id", []string{"update", "--db", db, "--remove-edges", writeFile(t, "ex.txt", "1 x\n")}, ExitBadInput,
			`ex.txt:1: field 2: malformed edge line: not an integer: "x"`},
		{"commas", []string{"update", "--db", db, "--remove-edges", writeFile(t, "ec.txt", "1,,2\n")}, ExitBadInput,
			`ec.txt:1: malformed edge line: stray comma: "1,,2"`},
		{"self-loop", []string{"update", "--db", db, "--add-edges", writeFile(t, "el.txt", "#\n4 4\n")}, ExitBadInput,
			"el.txt:2: malformed edge line: self-loop on 4"},
		{"missing edge file", []string{"update", "--db", db, "--add-edges", filepath.Join(t.TempDir(), "none.txt")}, ExitBadInput, "no such file"},
		{"missing nodes file", []string{"update", "--db", db, "--nodes", filepath.Join(t.TempDir(), "none.json")}, ExitBadInput, "no such file"},
		{"wrong features", []string{"update", "--db", db, "--nodes", badFeat}, ExitBadInput, "2 features, the graph has 6"},
		{"bad json", []string{"update", "--db", db, "--nodes", writeFile(t, "b.json", `{"nodes":[`)}, ExitUsage, "invalid JSON"},
		{"unknown flag", []string{"update", "--db", db, "--edges", edges}, ExitUsage, "unknown flag"},
		{"no store", []string{"update", "--db", filepath.Join(t.TempDir(), "absent"), "--add-edges", edges}, ExitStoreState, "no store"},
		{"no model", []string{"update", "--db", fixtureStore(t, "graph"), "--add-edges", edges}, ExitStoreState, "no trained models"},
	})
	// None of the failed updates changed the graph.
	out, err, _ = run(t, "stats", "--db", db, "--json")
	var st struct {
		Version uint64 `json:"version"`
		Nodes   int    `json:"nodes"`
	}
	if err != nil || json.Unmarshal([]byte(out), &st) != nil || st.Version != version+1 || st.Nodes != fixtureNodes+1 {
		t.Errorf("graph after failed updates: %+v (%v)", st, err)
	}
}
