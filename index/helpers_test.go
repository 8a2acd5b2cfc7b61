package index

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// dumpStore renders every key/value pair of the store, in key order.
func dumpStore(t testing.TB, s storage.Store) string {
	t.Helper()
	it, err := s.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var b strings.Builder
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.Value()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%x=%x\n", it.Key(), v)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
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
