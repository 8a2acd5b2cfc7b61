package command

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Ensure that fasd refresh recomputes exactly the dirty subgraphs (JSON
// and text), that the views it leaves equal a from-scratch materialize of
// the updated graph, and that bad flags and missing stores fail with the
// documented exit codes.
func TestRefreshCommand(t *testing.T) {
	db := fixtureStore(t, "views")
	edges, nodes := updateFiles(t)
	out, err, _ := run(t, "update", "--db", db, "--add-edges", edges, "--nodes", nodes, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var up updateJSON
	decodeStrict(t, out, &up)
	out, err, code := run(t, "refresh", "--db", db, "--json")
	if err != nil || code != ExitOK {
		t.Fatalf("refresh: %v (exit %d)", err, code)
	}
	var rep refreshJSON
	decodeStrict(t, out, &rep)
	if rep.Subgraphs != up.Update.DirtyTotal || rep.Nodes < up.Update.Stale || !rep.Complete ||
		rep.GraphVersion != int64(up.Update.GraphVersion) || rep.DurationNS <= 0 {
		t.Errorf("refresh %+v after update %+v", rep, up.Update)
	}
	out, err, _ = run(t, "refresh", "--db", db)
	tail := fmt.Sprintf(" (graph version %d, complete true)\n", up.Update.GraphVersion)
	if err != nil || !strings.HasPrefix(out, "refreshed 0 subgraphs, 0 node views in ") || !strings.HasSuffix(out, tail) {
		t.Errorf("second refresh: %q (%v)", out, err)
	}

	// The same update on a store without views, then a full materialize.
	rebuilt := fixtureStore(t, "trained")
	if _, err, _ := run(t, "update", "--db", rebuilt, "--add-edges", edges, "--nodes", nodes); err != nil {
		t.Fatal(err)
	}
	if _, err, _ := run(t, "materialize", "--db", rebuilt); err != nil {
		t.Fatal(err)
	}
	inc, full := predictAll(t, db), predictAll(t, rebuilt)
	if len(inc) != len(full) {
		t.Fatalf("%d views after refresh, %d after a rebuild", len(inc), len(full))
	}
	for i := range inc {
		a, b := inc[i], full[i]
		if a.ID != b.ID || a.Probs != b.Probs || *a.base() != *b.base() || a.Subgraphs != b.Subgraphs || a.Stale || b.Stale {
			t.Fatalf("node %d: refreshed %+v, rebuilt %+v", a.ID, a, b)
		}
	}

	checkErrCases(t, []errCase{
		{"no db", []string{"refresh"}, ExitUsage, "--db DIR is required"},
		{"positional", []string{"refresh", "--db", db, "all"}, ExitUsage, "unexpected argument"},
		{"bad flag", []string{"refresh", "--db", db, "--json=maybe"}, ExitUsage, "invalid argument"},
		{"no store", []string{"refresh", "--db", filepath.Join(t.TempDir(), "absent")}, ExitStoreState, "no store"},
		{"no graph", []string{"refresh", "--db", emptyStore(t)}, ExitStoreState, "no graph"},
		{"no model", []string{"refresh", "--db", fixtureStore(t, "graph")}, ExitStoreState, "no trained models"},
	})
}
