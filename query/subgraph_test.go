package query

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// Ensure that Subgraph returns, for every root, the debiased subgraph the
// views were computed from: classifying it reproduces the root's stored
// contributions exactly. Also: cache hits while the root is clean, a new
// subgraph once an update dirties it, and the errors for non-roots.
func TestSubgraphIsTheOneTheViewsUse(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 90, 3, 4, 31)
	m := newTestModel(featureNames(3), 5, true)
	e := openEngine(t, s, m)
	if _, err := e.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	v, _ := g.View()
	roots, err := rootSet(v)
	v.Close()
	if err != nil {
		t.Fatal(err)
	}

	checked := 0
	for it := roots.Iterator(); it.HasNext() && checked < 25; checked++ {
		r := it.Next()
		d, rec := subgraphAndRecord(t, e, s, r)
		n := len(d.Nodes)
		if d.Root != r || d.Nodes[0] != r || !slices.Equal(d.Nodes, rec.Members) || len(d.X) != n*d.D || len(d.A) != n*n || d.GraphVersion != rec.Version {
			t.Fatalf("root %d: subgraph %+v does not match record (members %v, version %d)", r, d, rec.Members, rec.Version)
		}
		if got := m.Classify(d.X, d.A, n, d.D, nil); !slices.Equal(got, rec.Probs[0]) {
			t.Fatalf("root %d: classifying the returned subgraph gives %v, the views used %v", r, got, rec.Probs[0])
		}
		if d.IDs[0] != int64(1000+r) || d.RootID != d.IDs[0] {
			t.Fatalf("root %d: external ids %v", r, d.IDs)
		}
		again, err := e.Subgraph(ctx, r)
		if err != nil || again != d {
			t.Fatalf("root %d: second call %p (%v), want the cached %p", r, again, err, d)
		}
	}
	// An edge at a root dirties it: the next call samples the current
	// graph, at the new version.
	r := uint32(roots.Minimum())
	before, _ := e.Subgraph(ctx, r)
	var other uint32
	for other = 0; other == r || slices.Contains(before.Nodes, other); other++ {
	}
	rep, err := e.AddEdges(ctx, [][2]uint32{{r, other}})
	if err != nil {
		t.Fatal(err)
	}
	after, err := e.Subgraph(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if after == before || after.GraphVersion != rep.GraphVersion || after.GraphVersion == before.GraphVersion {
		t.Fatalf("after the update: version %d (update %d), before %d", after.GraphVersion, rep.GraphVersion, before.GraphVersion)
	}
	if _, err := e.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	rec, err := getRootRecord(s, r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Subgraph(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if got != after || !slices.Equal(m.Classify(got.X, got.A, len(got.Nodes), got.D, nil), rec.Probs[0]) {
		t.Fatalf("after refresh: cached %v, classification matches record: %v", got == after,
			slices.Equal(m.Classify(got.X, got.A, len(got.Nodes), got.D, nil), rec.Probs[0]))
	}
	// Errors.
	v, _ = g.View()
	n := v.NumNodes()
	v.Close()
	if _, err := e.Subgraph(ctx, uint32(n)); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("out of range: %v", err)
	}
	for u := range uint32(n) {
		if !roots.Contains(u) {
			if _, err := e.Subgraph(ctx, u); !errors.Is(err, ErrNotRoot) {
				t.Errorf("non-root %d: %v", u, err)
			}
			break
		}
	}
	if _, err := e.SubgraphExternal(ctx, 999999); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("unknown external id: %v", err)
	}
}

func TestSubgraphCacheBounded(t *testing.T) {
	mk := func(n int) *DebiasedSubgraph {
		return &DebiasedSubgraph{Nodes: make([]uint32, n), X: make([]float32, n*4), A: make([]float32, n*n)}
	}
	unit := mk(10).bytes()
	cases := []struct {
		name    string
		max     int64
		puts    int
		entries int
	}{
		{"off", -1, 5, 0},
		{"three fit", 3 * unit, 5, 3},
		{"all fit", 10 * unit, 5, 5},
		{"none fit", unit - 1, 5, 0},
	}
	for _, c := range cases {
		cache := newSubgraphCache(c.max)
		for i := range c.puts {
			cache.put(uint32(i), 1, mk(10))
		}
		n, b := cache.size()
		if n != c.entries || b > max(c.max, 0) {
			t.Errorf("%s: %d entries, %d bytes (max %d), want %d entries", c.name, n, b, c.max, c.entries)
		}
		if c.entries > 0 {
			// The most recent ones survive; a get refreshes recency.
			if cache.get(uint32(c.puts-1), 1) == nil || cache.get(uint32(c.puts-1), 2) != nil {
				t.Errorf("%s: lookup by root and version failed", c.name)
			}
			if c.entries < c.puts && cache.get(0, 1) != nil {
				t.Errorf("%s: the oldest entry was kept", c.name)
			}
		}
	}
	// LRU order: touching the oldest keeps it over the next oldest.
	cache := newSubgraphCache(3 * unit)
	for i := range 3 {
		cache.put(uint32(i), 1, mk(10))
	}
	cache.get(0, 1)
	cache.put(3, 1, mk(10))
	if cache.get(0, 1) == nil || cache.get(1, 1) != nil {
		t.Error("least recently used entry not evicted first")
	}
}

// The same with real networks (random weights): f on the subgraph that
// Subgraph returns gives the stored contributions of its root.
func TestSubgraphTrainedModel(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 60, 4, 3, 7)
	tm := randomNetsModel(t, featureNames(4), 2, 3, 2)
	e := openEngine(t, s, tm)
	if _, err := e.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	v, _ := g.View()
	roots, err := rootSet(v)
	v.Close()
	if err != nil {
		t.Fatal(err)
	}
	pe, err := tm.Models().NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	for i, it := 0, roots.Iterator(); it.HasNext() && i < 10; i++ {
		r := it.Next()
		d, rec := subgraphAndRecord(t, e, s, r)
		n := len(d.Nodes)
		got := make([]float32, 2*n)
		if err := pe.Probs(d.X, d.A, n, got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, rec.Probs[0]) {
			t.Fatalf("root %d: f on the returned subgraph %v, stored %v", r, got, rec.Probs[0])
		}
		for j := range n {
			if d.A[j*n+j] != 0 {
				t.Fatalf("root %d: non-zero diagonal", r)
			}
			for k := range n {
				if d.A[j*n+k] != d.A[k*n+j] {
					t.Fatalf("root %d: asymmetric Ã", r)
				}
			}
		}
	}
}

// subgraphAndRecord returns root r's debiased subgraph and its stored
// record.
func subgraphAndRecord(t *testing.T, e *Engine, s storage.Reader, r uint32) (*DebiasedSubgraph, *rootRecord) {
	t.Helper()
	d, err := e.Subgraph(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := getRootRecord(s, r)
	if err != nil {
		t.Fatal(err)
	}
	return d, rec
}
