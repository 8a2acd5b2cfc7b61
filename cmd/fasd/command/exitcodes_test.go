package command

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/index/synth"
)

// Ensure that each error class the help documents ends with its exit
// code, run end to end through the commands: unknown or deleted nodes in
// an update are bad input (3) with file:line, a damaged store, a
// directory that is not a store (a regular file, an empty directory, a
// missing one) and a store without a graph are store state (4), and that a
// read command given an empty directory leaves it empty.
func TestExitCodes_Documented(t *testing.T) {
	views := fixtureStore(t, "views")
	deleted := fixtureStore(t, "views")
	if _, err, code := run(t, "update", "--db", deleted, "--delete", writeFile(t, "del.txt", extID(8)+"\n")); err != nil {
		t.Fatalf("delete: %v (exit %d)", err, code)
	}
	base := t.TempDir()
	dump := filepath.Join(base, "dump")
	if _, err, code := run(t, "gen", "--out", dump, "--nodes", "60", "--features", "3"); err != nil {
		t.Fatalf("gen: %v (exit %d)", err, code)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, []byte("not a store\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(base, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(base, "missing")
	damaged := fixtureStore(t, "graph")
	manifests, _ := filepath.Glob(filepath.Join(damaged, "MANIFEST-*"))
	if len(manifests) == 0 {
		t.Fatal("the fixture store has no MANIFEST")
	}
	for _, m := range manifests {
		if err := os.Remove(m); err != nil {
			t.Fatal(err)
		}
	}
	badMarker := fixtureStore(t, "graph")
	if err := os.WriteFile(filepath.Join(badMarker, "FASD-STORE"), []byte("junk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unknownEdge := writeFile(t, "edges.txt", fmt.Sprintf("# u v\n%s %s\n%s 424242\n", extID(1), extID(2), extID(3)))
	deletedEdge := writeFile(t, "edges.txt", fmt.Sprintf("%s %s\n\n%s %s\n", extID(1), extID(2), extID(3), extID(8)))
	deleteTwice := writeFile(t, "ids.txt", fmt.Sprintf("# again\n%s\n", extID(8)))
	removeUnknown := writeFile(t, "rm.txt", "424242 "+extID(1)+"\n")

	cases := []errCase{
		{"unknown flag", []string{"stats", "--db", views, "--bogus"}, ExitUsage, "unknown flag"},
		{"missing dump", []string{"load", "--db", filepath.Join(base, "new"), "--dataset", "synth", "--dir", missing}, ExitBadInput, ""},
		{"unknown node in --add-edges", []string{"update", "--db", views, "--add-edges", unknownEdge}, ExitBadInput, "edges.txt:3: field 2: index: unknown edge endpoint: node 424242 is not in the graph"},
		{"deleted node in --add-edges", []string{"update", "--db", deleted, "--add-edges", deletedEdge}, ExitBadInput, fmt.Sprintf("edges.txt:3: field 2: index: unknown edge endpoint: node %d is not in the graph (never loaded, or deleted)", synth.NodeID(8))},
		{"unknown node in --remove-edges", []string{"update", "--db", views, "--remove-edges", removeUnknown}, ExitBadInput, "rm.txt:1: field 1:"},
		{"deleted node in --delete", []string{"update", "--db", deleted, "--delete", deleteTwice}, ExitBadInput, fmt.Sprintf("ids.txt:2: bad node id: node %d is not in the graph (never loaded, or deleted)", synth.NodeID(8))},
		{"edge to a node deleted by the same update", []string{"update", "--db", views, "--add-edges", deletedEdge, "--delete", writeFile(t, "d.txt", extID(8)+"\n")}, ExitBadInput, "deleted by this update"},
		{"damaged store: check", []string{"check", "--db", damaged}, ExitStoreState, "store damaged"},
		{"damaged store: predict", []string{"predict", "--db", damaged, "--all"}, ExitStoreState, "store damaged"},
		{"bad marker", []string{"check", "--db", badMarker}, ExitStoreState, "not a fasd store"},
		{"no graph", []string{"check", "--db", emptyStore(t)}, ExitStoreState, ""},
		{"no models", []string{"predict", "--db", fixtureStore(t, "graph"), "--all"}, ExitStoreState, ""},
		{"missing --db", []string{"stats", "--db", missing}, ExitStoreState, "no store"},
	}
	for _, cmd := range [][]string{{"stats"}, {"check"}, {"audit"}, {"predict", "--all"}, {"materialize"}, {"refresh"},
		{"update", "--add-edges", unknownEdge}, {"train", "--profile", "synth"}, {"load", "--dataset", "synth", "--dir", dump}} {
		args := append([]string{cmd[0], "--db", file}, cmd[1:]...)
		cases = append(cases, errCase{"--db regular file: " + cmd[0], args, ExitStoreState, "not a fasd store"})
		if cmd[0] != "load" {
			args := append([]string{cmd[0], "--db", empty}, cmd[1:]...)
			cases = append(cases, errCase{"--db empty directory: " + cmd[0], args, ExitStoreState, "empty directory"})
		}
	}
	checkErrCases(t, cases)
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("commands wrote %d files into an empty directory", len(entries))
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a command created %s", missing)
	}
	// The help documents these codes.
	out, _, _ := run(t, "--help")
	for _, want := range []string{"3  bad input", "unknown or deleted node", "4  store state", "damaged", "not a store"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
