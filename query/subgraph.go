package query

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/query/model"
)

// ErrNotRoot is returned by Engine.Subgraph for a node that roots no
// subgraph (it is not a train, validation or test node, nor a labelled
// node with a known sensitive value).
var ErrNotRoot = errors.New("query: node roots no subgraph")

// DebiasedSubgraph is a root's subgraph after debiasing. The engine does
// not store debiased subgraphs (see the package doc): Subgraph regenerates
// one from its recipe (root, run seed, the graph the root's record was
// computed on) and keeps recent ones in a bounded in-memory cache. The
// value is shared with the cache: callers must not modify it.
type DebiasedSubgraph struct {
	Root   uint32 `json:"root"`
	RootID int64  `json:"root_id"`
	// Nodes and IDs are the members in local order (Nodes[0] is the root),
	// internal and external ids.
	Nodes []uint32 `json:"nodes"`
	IDs   []int64  `json:"ids"`
	D     int      `json:"d"`
	// X are the debiased features (len(Nodes)×D, row-major) and A the
	// debiased weighted adjacency (len(Nodes)², symmetric, zero diagonal,
	// entries below the pruning threshold removed).
	X []float32 `json:"x"`
	A []float32 `json:"a"`
	// Model is the models' version; GraphVersion the graph version the
	// subgraph was determined at (the root's record version while the root
	// is clean).
	Model        string `json:"model"`
	GraphVersion uint64 `json:"graph_version"`
}

// bytes is the memory the subgraph holds, as the cache counts it.
func (d *DebiasedSubgraph) bytes() int64 {
	return int64(4*(len(d.X)+len(d.A)) + 12*len(d.Nodes) + 128)
}

// Subgraph returns root's debiased subgraph, as the views use it: the
// sample of the graph version at which root's stored record was computed
// (or of the current graph, if root is dirty or has no record yet),
// debiased with root's own seed. Results are cached (Options.
// SubgraphCacheBytes) keyed by root and that graph version, so a cached
// subgraph is returned only while it is still exact.
func (e *Engine) Subgraph(ctx context.Context, root uint32) (*DebiasedSubgraph, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	v, err := e.g.View()
	if err != nil {
		return nil, err
	}
	defer v.Close()
	if int64(root) >= int64(v.NumNodes()) {
		return nil, fmt.Errorf("%w: %d (graph has %d nodes)", ErrUnknownNode, root, v.NumNodes())
	}
	rs, err := rootSet(v)
	if err != nil {
		return nil, err
	}
	if !rs.Contains(root) {
		return nil, fmt.Errorf("%w: %d", ErrNotRoot, root)
	}
	// The version that determines root's subgraph: its record's while the
	// root is clean (nothing it read changed since), else the view's. A
	// record newer than the view (a refresh after the view was taken) is
	// not used.
	ver := v.Version()
	m := e.models()
	dirty, err := getBitmap(e.store, keyDirty)
	if err != nil {
		return nil, err
	}
	if !dirty.Contains(root) {
		rec, err := getRootRecord(e.store, root)
		switch {
		case err != nil:
			return nil, err
		case rec == nil: // no record (getRootRecord: nil, nil)
		case rec.Model == m.tag && rec.Version <= ver:
			ver = rec.Version
		}
	}
	if d := e.subs.get(root, ver); d != nil && d.Model == m.info.Version {
		e.stats.subgraphHits.Add(1)
		return d, nil
	}
	w, err := e.modelWorker(v, m)
	if err != nil {
		return nil, err
	}
	defer w.release()
	if _, err := w.members(root); err != nil {
		return nil, err
	}
	if err := fasd.BuildSubgraph(&w.sample, v.NumFeatures(), &w.src, &w.sg); err != nil {
		return nil, err
	}
	s, err := m.scorer()
	if err != nil {
		return nil, fmt.Errorf("query: new scorer: %w", err)
	}
	w.scorer = s
	deb, ok := s.(model.SubgraphDebiaser)
	if !ok {
		return nil, fmt.Errorf("%w: the models cannot return debiased subgraphs", ErrInvalid)
	}
	n, dim := w.sg.N(), w.sg.D
	d := &DebiasedSubgraph{Root: root, Nodes: append([]uint32(nil), w.sample.Nodes...), D: dim,
		X: make([]float32, n*dim), A: make([]float32, n*n), Model: m.info.Version, GraphVersion: ver}
	rng := fasd.NewRand(fasd.RootSeed(m.info.Seed, fasd.PurposeDebias, root))
	if err := deb.DebiasSubgraph(ctx, &w.sg, rng, d.X, d.A); err != nil {
		return nil, fmt.Errorf("query: debias subgraph of %d: %w", root, err)
	}
	d.IDs = make([]int64, n)
	for i, u := range d.Nodes {
		if d.IDs[i], err = v.ExternalID(u); err != nil {
			return nil, err
		}
	}
	d.RootID = d.IDs[0]
	e.stats.subgraphMisses.Add(1)
	e.subs.put(root, ver, d)
	return d, nil
}

// SubgraphExternal is Subgraph for an external node id.
func (e *Engine) SubgraphExternal(ctx context.Context, id int64) (*DebiasedSubgraph, error) {
	u, err := e.internalID(id)
	if err != nil {
		return nil, err
	}
	return e.Subgraph(ctx, u)
}

// subgraphCache is a least-recently-used cache of debiased subgraphs
// bounded by their bytes; a nil cache holds nothing.
type subgraphCache struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	ll    *list.List // front: most recently used; values *subgraphEntry
	items map[subgraphKey]*list.Element
}

type subgraphKey struct {
	root    uint32
	version uint64
}

type subgraphEntry struct {
	key subgraphKey
	d   *DebiasedSubgraph
}

func newSubgraphCache(max int64) *subgraphCache {
	if max <= 0 {
		return nil
	}
	return &subgraphCache{max: max, ll: list.New(), items: map[subgraphKey]*list.Element{}}
}

func (c *subgraphCache) get(root uint32, version uint64) *DebiasedSubgraph {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[subgraphKey{root, version}]
	if !ok {
		return nil
	}
	c.ll.MoveToFront(el)
	return el.Value.(*subgraphEntry).d
}

func (c *subgraphCache) put(root uint32, version uint64, d *DebiasedSubgraph) {
	if c == nil || d.bytes() > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := subgraphKey{root, version}
	if el, ok := c.items[k]; ok {
		c.ll.MoveToFront(el)
		return
	}
	c.items[k] = c.ll.PushFront(&subgraphEntry{key: k, d: d})
	c.bytes += d.bytes()
	for c.bytes > c.max {
		el := c.ll.Back()
		ent := el.Value.(*subgraphEntry)
		c.ll.Remove(el)
		delete(c.items, ent.key)
		c.bytes -= ent.d.bytes()
	}
}

// size returns the number of cached subgraphs and their bytes.
func (c *subgraphCache) size() (int, int64) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items), c.bytes
}
