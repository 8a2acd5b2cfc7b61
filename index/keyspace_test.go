package index

import (
	"context"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// Ensure that the key registry is sorted, that no two owners share a
// prefix, that index's own prefixes are all registered to index, and
// that a loaded graph writes only keys under registered index or storage
// prefixes.
func TestKeyRegistry(t *testing.T) {
	seen := map[byte]string{}
	for i, p := range KeyPrefixes {
		if prev, dup := seen[p.Byte]; dup {
			t.Errorf("prefix %q owned by %s and %s", p.Byte, prev, p.Owner)
		}
		seen[p.Byte] = p.Owner
		if i > 0 && KeyPrefixes[i-1].Byte >= p.Byte {
			t.Errorf("registry not in byte order at %q", p.Byte)
		}
		if p.Owner == "" || p.What == "" {
			t.Errorf("prefix %q without owner or description", p.Byte)
		}
		if p.DependsOnGraph == (p.Owner == "index" || p.Owner == "storage") {
			t.Errorf("prefix %q of %s: DependsOnGraph %v", p.Byte, p.Owner, p.DependsOnGraph)
		}
	}
	for _, b := range []byte{prefixMeta, prefixNode, prefixExt, prefixAdj, prefixGroup} {
		if p, ok := LookupPrefix(b); !ok || p.Owner != "index" {
			t.Errorf("index prefix %q registered as %+v", b, p)
		}
	}
	if p, ok := LookupPrefix(storage.ReservedPrefix); !ok || p.Owner != "storage" {
		t.Errorf("storage's reserved prefix registered as %+v", p)
	}
	s := openMem(t, "")
	if _, err := Load(context.Background(), s, smallOptions(t, smallNodes, smallEdges)); err != nil {
		t.Fatal(err)
	}
	g, err := Open(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.AddEdges(context.Background(), [][2]uint32{{0, 2}}); err != nil {
		t.Fatal(err)
	}
	it, err := s.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		p, ok := LookupPrefix(it.Key()[0])
		if !ok || p.Owner != "index" && p.Owner != "storage" {
			t.Fatalf("a loaded graph wrote key %q under %+v", it.Key(), p)
		}
	}
}
