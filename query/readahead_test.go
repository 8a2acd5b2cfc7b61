package query

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// requestCounter counts the read requests (Get, GetMany) a store and its
// snapshots serve, and offers GetMany (over the inner store's, or a loop
// of Get), so that the engine reads as it does on a server.
type requestCounter struct {
	storage.Store
	gets, manys, keys atomic.Int64
}

func (c *requestCounter) Get(k []byte) ([]byte, error) {
	c.gets.Add(1)
	return c.Store.Get(k)
}

func (c *requestCounter) GetMany(keys [][]byte) ([][]byte, error) {
	c.manys.Add(1)
	c.keys.Add(int64(len(keys)))
	return storage.GetMany(c.Store, keys)
}

func (c *requestCounter) NewSnapshot() (storage.Snapshot, error) {
	s, err := c.Store.NewSnapshot()
	if err != nil {
		return nil, err
	}
	return &countedSnapshot{Snapshot: s, c: c}, nil
}

type countedSnapshot struct {
	storage.Snapshot
	c *requestCounter
}

func (s *countedSnapshot) Get(k []byte) ([]byte, error) {
	s.c.gets.Add(1)
	return s.Snapshot.Get(k)
}

func (s *countedSnapshot) GetMany(keys [][]byte) ([][]byte, error) {
	s.c.manys.Add(1)
	s.c.keys.Add(int64(len(keys)))
	return storage.GetMany(s.Snapshot, keys)
}

// Ensure that on a store that reads many keys per request, Materialize
// costs a few requests per chunk of roots, not one per key read: a
// subgraph-stage chunk reads its samples ahead in at most Depth+2 requests
// and commits after two more, a node-stage chunk reads in two; the views
// equal those of the same store read key by key.
func TestMaterializeBatchedReads(t *testing.T) {
	for _, tc := range []struct {
		name              string
		chunkRoots, nodes int
	}{
		{"default chunks", 0, 0},
		{"small chunks", 16, 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := newTestGraph(t, 600, 4, 5, 21)
			m := newTestModel(featureNames(4), 3, true)
			ctx := context.Background()
			plain := copyGraph(t, src)
			e, err := Open("", &Options{Store: plain, Model: m, Workers: 2, ChunkRoots: tc.chunkRoots, ChunkNodes: tc.nodes})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if _, err := e.Materialize(ctx); err != nil {
				t.Fatal(err)
			}
			c := &requestCounter{Store: copyGraph(t, src)}
			be, err := Open("", &Options{Store: c, Model: m, Workers: 2, ChunkRoots: tc.chunkRoots, ChunkNodes: tc.nodes})
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
			before := c.gets.Load() + c.manys.Load()
			rep, err := be.Materialize(ctx)
			if err != nil {
				t.Fatal(err)
			}
			requests := c.gets.Load() + c.manys.Load() - before
			o := be.opts
			rootChunks := (rep.Subgraphs + o.ChunkRoots - 1) / o.ChunkRoots
			nodeChunks := (rep.Nodes + o.ChunkNodes - 1) / o.ChunkNodes
			depth := be.info.Sample.Depth
			limit := int64(rootChunks*(depth+2+2) + nodeChunks*2 + 64)
			t.Logf("%d roots in %d chunks, %d nodes in %d chunks: %d requests (%d keys by GetMany), limit %d",
				rep.Subgraphs, rootChunks, rep.Nodes, nodeChunks, requests, c.keys.Load(), limit)
			if requests > limit {
				t.Errorf("%d read requests, want ≤ %d", requests, limit)
			}
			if c.keys.Load() < int64(rep.Subgraphs) {
				t.Errorf("only %d keys read by GetMany for %d roots: the read-ahead is not used", c.keys.Load(), rep.Subgraphs)
			}
			if got, want := dumpViews(t, c.Store), dumpViews(t, plain); got != want {
				t.Error("views read ahead differ from views read key by key")
			}
		})
	}
}
