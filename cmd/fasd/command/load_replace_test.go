package command

import (
	"errors"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/storage"
)

// Ensure that fasd load --replace on a store with views and trained runs
// refuses without --drop-runs (before writing anything), deletes the
// views and the runs through their owners with it, and that --drop-runs
// needs --replace.
func TestLoad_ReplaceDependents(t *testing.T) {
	db := fixtureStore(t, "views")
	dir := t.TempDir()
	if _, err, _ := run(t, "gen", "--out", dir, "--nodes", "200", "--features", "4"); err != nil {
		t.Fatal(err)
	}
	load := []string{"load", "--db", db, "--preset", "synth", "--dir", dir, "--replace"}
	_, err, code := run(t, load...)
	if code != ExitStoreState || err == nil || !strings.Contains(err.Error(), "--drop-runs") || !errors.Is(err, index.ErrDependents) {
		t.Fatalf("replace with runs: %v (exit %d)", err, code)
	}
	if _, err, code := run(t, "predict", "--db", db, "--all"); err != nil || code != ExitOK {
		t.Fatalf("the refused replace broke the store: %v (exit %d)", err, code)
	}
	if _, err, code := run(t, "load", "--db", db, "--preset", "synth", "--dir", dir, "--drop-runs"); code != ExitUsage {
		t.Fatalf("--drop-runs without --replace: %v (exit %d)", err, code)
	}
	if _, err, code := run(t, append(load, "--drop-runs")...); err != nil || code != ExitOK {
		t.Fatalf("replace --drop-runs: %v (exit %d)", err, code)
	}
	s, err := storage.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range []byte{index.PrefixViews, index.PrefixRuns} {
		it, err := s.NewIter([]byte{p}, []byte{p + 1})
		if err != nil {
			t.Fatal(err)
		}
		if it.First() {
			t.Errorf("key %q survived the replace", it.Key())
		}
		it.Close()
	}
}
