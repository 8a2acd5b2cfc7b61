package command

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// Ensure that fasd check passes on a loaded graph and reports an empty
// store (no graph) with the store-state exit code.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	if _, err, _ := run(t, "gen", "--out", dir, "--nodes", "120", "--features", "2"); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "db")
	if _, err, _ := run(t, "load", "--db", db, "--preset", "synth", "--dir", dir); err != nil {
		t.Fatal(err)
	}
	out, err, code := run(t, "check", "--db", db)
	if err != nil || code != ExitOK || !strings.HasPrefix(out, "ok: version 1, 120 nodes") {
		t.Errorf("check: %q %v %d", out, err, code)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	s, err := storage.Open(empty, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err, code := run(t, "check", "--db", empty); code != ExitStoreState {
		t.Errorf("check of an empty store: exit %d (%v)", code, err)
	}
}
