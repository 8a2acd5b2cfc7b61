package command

import (
	"path/filepath"
	"strings"
	"testing"
)

// Ensure that fasd stats prints the text summary of a loaded graph and
// that a store without a graph is a store-state error.
func TestStats_Text(t *testing.T) {
	dir := t.TempDir()
	if _, err, _ := run(t, "gen", "--out", dir, "--nodes", "150", "--features", "3"); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "db")
	if _, err, _ := run(t, "load", "--db", db, "--preset", "synth", "--dir", dir); err != nil {
		t.Fatal(err)
	}
	out, err, _ := run(t, "stats", "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"nodes      150\n", "features   3\n", "homophily  "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err, code := run(t, "stats"); code != ExitUsage {
		t.Errorf("stats without --db: exit %d (%v)", code, err)
	}
}
