package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// Ensure that, in a program that links no engine (this test binary imports
// neither backend), Open fails with ErrNotLinked before it creates the
// directory or its marker.
func TestOpenWithoutEngine(t *testing.T) {
	if got := storage.Registered(); len(got) != 0 {
		t.Fatalf("engines linked: %v", got)
	}
	dir := filepath.Join(t.TempDir(), "db")
	for _, o := range []*storage.Options{nil, {Backend: storage.Badger}, {InMemory: true}} {
		if _, err := storage.Open(dir, o); !errors.Is(err, storage.ErrNotLinked) {
			t.Errorf("%+v: %v, want ErrNotLinked", o, err)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory left behind: %v", err)
	}
}
