package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fasd-db/fasd/index/split"
	"github.com/fasd-db/fasd/storage"
)

// backends are the engines tests run against.
var backends = []storage.Backend{storage.Pebble, storage.Badger}

// openMem opens an in-memory store of backend b, closed at cleanup.
func openMem(t testing.TB, b storage.Backend) storage.Store {
	t.Helper()
	s, err := storage.Open("", &storage.Options{Backend: b, InMemory: true, NoSync: true})
	if err != nil {
		t.Fatalf("open %s: %v", b, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// writeFile writes content to dir/name and returns the path.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkGraph runs View.Check on the store's graph.
func checkGraph(t testing.TB, g *Graph) {
	t.Helper()
	v, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.Check(context.Background()); err != nil {
		t.Fatalf("check: %v", err)
	}
}

var _ = bytes.Equal

func split5050() split.Fractions { return split.Fractions{Train: 0.5, Val: 0.25} }
