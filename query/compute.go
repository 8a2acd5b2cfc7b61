package query

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query/model"
	"github.com/fasd-db/fasd/storage"
)

// viewNodes is a fasd.NodeSource over an index.View. The split bitmaps
// are read once per view (View.SplitOf would decode them per node), and the
// sensitive value and label read with a node's features are kept for the
// NodeAttrs call that follows (fasd.BuildSubgraph asks for both, in that
// order), so a member costs one read of its record, not three.
type viewNodes struct {
	v      *index.View
	splits []*roaring.Bitmap // train, val, test; nil until first use
	// last is the node whose s and y NodeFeatures read; ok says whether
	// they are set.
	last uint32
	s, y int8
	ok   bool
}

func (n *viewNodes) NodeFeatures(v uint32, dst []float32) error {
	n.ok = false
	f, s, y, err := n.v.Attributes(v, dst[:0])
	if err != nil {
		return err
	}
	if len(f) != len(dst) {
		return fmt.Errorf("%w: node %d has %d features, want %d", fasd.ErrShape, v, len(f), len(dst))
	}
	n.last, n.s, n.y, n.ok = v, s, y, true
	return nil
}

func (n *viewNodes) NodeAttrs(v uint32) (int8, int8, fasd.Split, error) {
	if n.splits == nil {
		for _, sp := range index.Splits {
			bm, err := n.v.SplitSet(sp)
			if err != nil {
				return 0, 0, 0, err
			}
			n.splits = append(n.splits, bm)
		}
	}
	s, y := n.s, n.y
	if !n.ok || n.last != v {
		var err error
		if _, s, y, err = n.v.Attributes(v, nil); err != nil {
			return 0, 0, 0, err
		}
	}
	split := fasd.SplitNone
	for i, bm := range n.splits {
		if bm.Contains(v) {
			split = index.Splits[i]
		}
	}
	return s, y, split, nil
}

// worker computes subgraphs on one goroutine: its own view, sampler and
// scorer.
type worker struct {
	e      *Engine
	m      *models
	view   *index.View
	smp    *fasd.Sampler
	sample fasd.Sample
	sg     fasd.Subgraph
	src    viewNodes
	scorer model.Scorer
	out    model.Contribution
	// reuse holds, for the chunk being computed, the stored work of the
	// roots that have some (model.Reuser); nil otherwise. Shared by the
	// chunk's workers, read only.
	reuse map[uint32][]byte
}

func (e *Engine) newWorker(view *index.View) (*worker, error) { return e.modelWorker(view, e.base) }

// modelWorker is a worker that computes with the models m (a replica's
// current ones).
func (e *Engine) modelWorker(view *index.View, m *models) (*worker, error) {
	smp, err := fasd.NewSampler(m.info.Sample)
	if err != nil {
		return nil, err
	}
	return &worker{e: e, m: m, view: view, smp: smp, src: viewNodes{v: view}}, nil
}

// newWorkers opens e.opts.Workers workers on views of one graph version;
// release closes them.
func (e *Engine) newWorkers() (workers []*worker, release func(), err error) {
	views := make([]*index.View, e.opts.Workers)
	workers = make([]*worker, e.opts.Workers)
	release = func() {
		for i := range views {
			if workers[i] != nil {
				workers[i].release()
			}
			if views[i] != nil {
				views[i].Close()
			}
		}
	}
	for i := range views {
		if views[i], err = e.g.View(); err == nil && views[i].Version() != views[0].Version() {
			err = fmt.Errorf("query: the graph changed while the workers opened their views (updates must go through the engine)")
		}
		if err == nil {
			workers[i], err = e.newWorker(views[i])
		}
		if err != nil {
			release()
			return nil, nil, err
		}
	}
	return workers, release, nil
}

// release returns the worker's scorer to the pool.
func (w *worker) release() {
	if w.scorer != nil {
		w.m.putScorer(w.scorer)
		w.scorer = nil
	}
}

// members samples root's subgraph and returns its members (valid until the
// next call).
func (w *worker) members(root uint32) ([]uint32, error) {
	rng := fasd.NewRand(fasd.RootSeed(w.m.info.Seed, fasd.PurposeSample, root))
	if err := w.smp.Sample(w.view, root, rng, &w.sample); err != nil {
		return nil, err
	}
	return w.sample.Nodes, nil
}

// errNotAhead is what a missSampler returns for a node whose adjacency the
// read-ahead does not hold.
var errNotAhead = errors.New("query: not read ahead")

// missSampler is the graph as far as a ReadAhead holds it: a draw from, or
// the neighbour list of, a node it does not hold records the node in
// missed and fails with errNotAhead.
type missSampler struct {
	v      *index.View
	ahead  *index.ReadAhead
	missed *[]uint32
}

func (m missSampler) SampleNeighbors(n uint32, k int, rng *rand.Rand, dst []uint32) ([]uint32, error) {
	if !m.ahead.Holds(n) {
		*m.missed = append(*m.missed, n)
		return dst, errNotAhead
	}
	return m.v.SampleNeighbors(n, k, rng, dst)
}

func (m missSampler) Neighbors(n uint32, dst []uint32) ([]uint32, error) {
	if !m.ahead.Holds(n) {
		*m.missed = append(*m.missed, n)
		return dst, errNotAhead
	}
	return m.v.Neighbors(n, dst)
}

// readAhead reads ahead, for the roots of chunk in the root set rs, every
// node record and adjacency list their samples and subgraphs will read,
// in a few requests for the whole chunk: it samples every root against
// what is held so far, collects the nodes the samplers stopped at (and,
// for finished samples, the members whose records are not held yet),
// reads all of them in one storage.GetMany and samples the unfinished
// roots again, until none is left. Sampling is deterministic per root and
// costs microseconds, so the repeats are cheap next to a round trip; a
// chunk costs about Depth+2 requests, whatever its size, where reading key
// by key costs one per key (about 34 per root on the generated graphs).
// The workers' views, given the result (View.SetReadAhead), then sample
// and build subgraphs from memory.
func (e *Engine) readAhead(v *index.View, smp *fasd.Sampler, rs *roaring.Bitmap, chunk []uint32) (*index.ReadAhead, error) {
	ra := index.NewReadAhead(v.Version())
	if err := v.SetReadAhead(ra); err != nil {
		return nil, err
	}
	var pending []uint32
	for _, r := range chunk {
		if rs.Contains(r) {
			pending = append(pending, r)
		}
	}
	fetch := append([]uint32(nil), pending...)
	var missed []uint32
	var sample fasd.Sample
	g := missSampler{v: v, ahead: ra, missed: &missed}
	for len(fetch) > 0 {
		held := ra.Len()
		if err := v.Prefetch(ra, fetch); err != nil {
			return nil, err
		}
		if ra.Len() == held {
			// Nothing new was read (ids out of range: a damaged graph):
			// the samplers will meet and report the problem themselves.
			break
		}
		fetch = fetch[:0]
		next := pending[:0]
		for _, r := range pending {
			missed = missed[:0]
			err := smp.Sample(g, r, fasd.NewRand(fasd.RootSeed(e.info.Seed, fasd.PurposeSample, r)), &sample)
			if errors.Is(err, errNotAhead) {
				fetch = append(fetch, missed...)
				next = append(next, r)
				continue
			}
			if err != nil {
				return nil, err
			}
			for _, m := range sample.Nodes {
				if !ra.Holds(m) {
					fetch = append(fetch, m)
				}
			}
		}
		pending = next
	}
	return ra, nil
}

// sampleRoots calls f with the members of each root of roots (ascending,
// all in the root set rs) as sampled by w on w.view. On a store with
// batched reads it reads ahead ChunkRoots roots at a time (readAhead), so
// that re-sampling many roots (the cold path, marking an update's dirty
// roots) costs a few requests per chunk; the members are valid during f.
func (e *Engine) sampleRoots(w *worker, rs *roaring.Bitmap, roots []uint32, f func(r uint32, members []uint32) error) error {
	batched := w.view.BatchedReads()
	if batched {
		defer w.view.SetReadAhead(nil)
	}
	for lo := 0; lo < len(roots); lo += e.opts.ChunkRoots {
		chunk := roots[lo:min(lo+e.opts.ChunkRoots, len(roots))]
		if batched {
			if _, err := e.readAhead(w.view, w.smp, rs, chunk); err != nil {
				return err
			}
		}
		for _, r := range chunk {
			m, err := w.members(r)
			if err != nil {
				return err
			}
			if err := f(r, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// contribute samples, builds, debiases and classifies the subgraph rooted
// at root, leaving the result in w.sample, w.sg and w.out.
func (w *worker) contribute(ctx context.Context, root uint32) error {
	if _, err := w.members(root); err != nil {
		return err
	}
	if err := fasd.BuildSubgraph(&w.sample, w.view.NumFeatures(), &w.src, &w.sg); err != nil {
		return err
	}
	if w.scorer == nil {
		s, err := w.m.scorer()
		if err != nil {
			return fmt.Errorf("query: new scorer: %w", err)
		}
		w.scorer = s
	}
	rng := fasd.NewRand(fasd.RootSeed(w.m.info.Seed, fasd.PurposeDebias, root))
	reused := false
	if stored := w.reuse[root]; stored != nil {
		rs, ok := w.scorer.(model.ReusingScorer)
		if !ok {
			return fmt.Errorf("%w: the models name stored work (model.Reuser) but their scorer cannot use it", ErrInvalid)
		}
		var err error
		if reused, err = rs.ContributeReusing(ctx, &w.sg, rng, stored, &w.out); err != nil {
			return fmt.Errorf("query: score subgraph of %d: %w", root, err)
		}
	} else if err := w.scorer.Contribute(ctx, &w.sg, rng, &w.out); err != nil {
		return fmt.Errorf("query: score subgraph of %d: %w", root, err)
	}
	n := w.sg.N()
	if len(w.out.Probs) != len(w.m.variants) {
		return fmt.Errorf("%w: scorer returned %d variants, the model info names %d", ErrInvalid, len(w.out.Probs), len(w.m.variants))
	}
	for k, p := range w.out.Probs {
		if len(p) != 2*n {
			return fmt.Errorf("%w: scorer returned %d probabilities of variant %s for %d nodes", fasd.ErrShape, len(p), w.m.variants[k], n)
		}
	}
	if reused {
		w.e.stats.rootsReused.Add(1)
	} else {
		w.e.stats.rootsComputed.Add(1)
	}
	return nil
}

// record computes root's record.
func (w *worker) record(ctx context.Context, root uint32) (*rootRecord, error) {
	if err := w.contribute(ctx, root); err != nil {
		return nil, err
	}
	if len(w.sample.Nodes) > 1<<16-1 {
		return nil, fmt.Errorf("%w: subgraph of %d has %d nodes (max 65535)", ErrInvalid, root, len(w.sample.Nodes))
	}
	rec := &rootRecord{
		Version: w.view.Version(), Model: w.m.tag,
		Members: append([]uint32(nil), w.sample.Nodes...),
		Probs:   make([][]float32, len(w.out.Probs)),
	}
	for k, p := range w.out.Probs {
		rec.Probs[k] = append([]float32(nil), p...)
	}
	rec.Expanded = make([]uint16, len(w.sample.Expanded))
	for i, l := range w.sample.Expanded {
		rec.Expanded[i] = uint16(l)
	}
	return rec, nil
}

// recomputeRoots recomputes the records of roots against the current
// graph: roots outside the root set lose their record. It commits one batch
// per chunk of roots (records, inverted indexes, the stored-root, dirty and
// affected sets), then recomputes the views of every affected node. The
// caller holds e.wmu. Interrupted, it leaves a consistent state: finished
// chunks are committed and the remaining roots stay dirty or missing.
//
// With only set, the views of just those nodes are recomputed; the other
// affected nodes keep their old views (they are stale, so never served as
// cached) until a full refresh. The cold path uses this so that no view
// ever mixes old and new subgraphs.
func (e *Engine) recomputeRoots(ctx context.Context, roots, only *roaring.Bitmap) error {
	workers, release, err := e.newWorkers()
	if err != nil {
		return err
	}
	defer release()
	view := workers[0].view
	rs, err := rootSet(view)
	if err != nil {
		return err
	}
	list := roots.ToArray()
	total := len(list)
	recs := make([]*rootRecord, e.opts.ChunkRoots)
	var d *distRun
	if e.opts.Distributed != nil {
		if d, err = e.startPlan(view.Version(), list); err != nil {
			return err
		}
	}
	t := e.times
	if t == nil {
		t = &RefreshTimes{}
	}
	done := newCommitted()
	for lo := 0; lo < total; lo += e.opts.ChunkRoots {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk := list[lo:min(lo+e.opts.ChunkRoots, total)]
		if d != nil {
			if err := d.await(ctx, workers, rs, uint32(lo/e.opts.ChunkRoots), recs[:len(chunk)], t); err != nil {
				return err
			}
		} else {
			start := time.Now()
			err := e.computePart(ctx, workers, rs, chunk, recs[:len(chunk)])
			t.Compute += time.Since(start)
			if err != nil {
				return err
			}
		}
		start := time.Now()
		if err := e.commitRoots(chunk, recs[:len(chunk)], done); err != nil {
			return err
		}
		t.Fold += time.Since(start)
		t.Parts++
		if e.opts.Progress != nil {
			e.opts.Progress("subgraphs", lo+len(chunk), total)
		}
	}
	if d != nil {
		if err := d.finish(); err != nil {
			return err
		}
	}
	start := time.Now()
	err = e.recomputeAffected(ctx, view.Version(), only)
	t.Nodes += time.Since(start)
	return err
}

// computePart computes the records of chunk with workers, reading the
// chunk's samples ahead first on a store with batched reads, and the
// work the models stored for its roots (reuseFor).
func (e *Engine) computePart(ctx context.Context, workers []*worker, rs *roaring.Bitmap, chunk []uint32, recs []*rootRecord) error {
	reuse, err := e.reuseFor(rs, chunk)
	if err != nil {
		return err
	}
	for _, w := range workers {
		w.reuse = reuse
	}
	defer func() {
		for _, w := range workers {
			w.reuse = nil
		}
	}()
	if workers[0].view.BatchedReads() {
		ra, err := e.readAhead(workers[0].view, workers[0].smp, rs, chunk)
		if err != nil {
			return err
		}
		for _, w := range workers {
			if err := w.view.SetReadAhead(ra); err != nil {
				return err
			}
		}
	}
	return e.computeChunk(ctx, workers, rs, chunk, recs)
}

// reuseFor reads, in one storage.GetMany, the work the models stored
// ahead of time (model.Reuser) for the roots of chunk in the root set rs,
// and returns it by root; nil when the models store none or
// Options.NoReuse is set. The scorer decides whether a value fits
// (model.ReusingScorer), so a stale or foreign value costs only its read.
func (e *Engine) reuseFor(rs *roaring.Bitmap, chunk []uint32) (map[uint32][]byte, error) {
	ru, ok := e.model.(model.Reuser)
	if !ok || e.opts.NoReuse {
		return nil, nil
	}
	var keys [][]byte
	var roots []uint32
	for _, r := range chunk {
		if !rs.Contains(r) {
			continue
		}
		if k := ru.ReuseKey(r); k != nil {
			keys, roots = append(keys, k), append(roots, r)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	vals, err := storage.GetMany(e.store, keys)
	if err != nil {
		return nil, fmt.Errorf("query: read the models' stored work: %w", err)
	}
	m := make(map[uint32][]byte, len(keys))
	for i, v := range vals {
		if v != nil {
			m[roots[i]] = v
		}
	}
	return m, nil
}

// computeChunk computes the records of chunk in parallel; recs[i] is nil
// for a root outside the root set rs.
func (e *Engine) computeChunk(ctx context.Context, workers []*worker, rs *roaring.Bitmap, chunk []uint32, recs []*rootRecord) error {
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(workers))
	for wi, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(chunk) || ctx.Err() != nil {
					return
				}
				r := chunk[i]
				recs[i] = nil
				if !rs.Contains(r) {
					continue
				}
				rec, err := w.record(ctx, r)
				if err != nil {
					errs[wi] = err
					return
				}
				recs[i] = rec
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

// bitmapCache loads per-node bitmaps lazily and writes the changed ones.
// With prev set, it decodes a bitmap from prev, the bytes an earlier part
// committed (empty: no bitmap), before reading the store.
type bitmapCache struct {
	r    storage.Reader
	key  func(uint32) []byte
	m    map[uint32]*roaring.Bitmap
	prev map[uint32][]byte
	out  map[uint32][]byte // what flush wrote
}

func (c *bitmapCache) get(v uint32) (*roaring.Bitmap, error) {
	if bm, ok := c.m[v]; ok {
		return bm, nil
	}
	var bm *roaring.Bitmap
	var err error
	if enc, ok := c.prev[v]; ok {
		if bm, err = index.DecodeBitmap(enc); err != nil {
			return nil, fmt.Errorf("query: %x: %w", c.key(v), err)
		}
	} else if bm, err = getBitmap(c.r, c.key(v)); err != nil {
		return nil, err
	}
	c.m[v] = bm
	return bm, nil
}

// keep records in prev the bytes this part committed, first emptying prev
// if it would hold more than committedMax.
func (c *bitmapCache) keep() {
	if len(c.prev)+len(c.out) > committedMax {
		clear(c.prev)
	}
	maps.Copy(c.prev, c.out)
}

// committedMax bounds the inverted-index bitmaps of each family that
// committed keeps, encoded: about 130 bytes each with the map's own for a
// node in a few dozen subgraphs, so at most about 130 MiB per family.
// (Kept decoded, about 1 KiB each, they raised materialize's peak on the
// 1M-node graph from 1.0 to 3.1 GiB.)
const committedMax = 1 << 20

// committed holds, during one recomputeRoots, what its earlier parts
// committed: the bytes of the inverted-index bitmaps they wrote (up to
// committedMax per family) and the root, dirty and affected sets, so that a
// part reads from the store only what no earlier part wrote. Only the
// holder of e.wmu writes these keys, so the copies stay exact. A part edits
// the sets in place and replaces the bytes after its commit; if the commit
// fails, recomputeRoots fails and drops them.
type committed struct {
	contain, expand map[uint32][]byte
	sets            []*roaring.Bitmap // stored, dirty, affected; nil before the first part
}

func newCommitted() *committed {
	return &committed{contain: map[uint32][]byte{}, expand: map[uint32][]byte{}}
}

func (c *bitmapCache) flush(b storage.Batch) error {
	c.out = make(map[uint32][]byte, len(c.m))
	for v, bm := range c.m {
		if bm.IsEmpty() {
			if err := b.Delete(c.key(v)); err != nil {
				return err
			}
			c.out[v] = []byte{}
			continue
		}
		enc, err := encodeBitmap(bm)
		if err != nil {
			return fmt.Errorf("query: encode bitmap: %w", err)
		}
		if err := b.Set(c.key(v), enc); err != nil {
			return err
		}
		c.out[v] = enc
	}
	return nil
}

// commitRoots writes the new records of chunk (nil: delete) in one batch,
// with the inverted indexes and the root, dirty and affected sets.
//
// It reads in two requests (readAhead): the old records of chunk with the
// root, dirty and affected sets, then the inverted indexes of every member
// of an old or new record; of the sets and indexes, only what no earlier
// part wrote (c).
func (e *Engine) commitRoots(chunk []uint32, recs []*rootRecord, c *committed) error {
	ra := newReadAhead(e.store)
	var keys [][]byte
	if c.sets == nil {
		keys = append(keys, keyRoots, keyDirty, keyAffected)
	}
	for _, r := range chunk {
		keys = append(keys, rootKey(r))
	}
	if err := ra.fetch(keys); err != nil {
		return err
	}
	olds := make([]*rootRecord, len(chunk))
	keys = keys[:0]
	for i, r := range chunk {
		old, err := getRootRecord(ra, r)
		if err != nil {
			return err
		}
		olds[i] = old
		for _, rec := range []*rootRecord{old, recs[i]} {
			if rec == nil {
				continue
			}
			for _, m := range rec.Members {
				if _, ok := c.contain[m]; !ok {
					keys = append(keys, containKey(m))
				}
			}
			for _, l := range rec.Expanded {
				if _, ok := c.expand[rec.Members[l]]; !ok {
					keys = append(keys, expandKey(rec.Members[l]))
				}
			}
		}
	}
	if err := ra.fetch(keys); err != nil {
		return err
	}
	contain := &bitmapCache{r: ra, key: containKey, m: map[uint32]*roaring.Bitmap{}, prev: c.contain}
	expand := &bitmapCache{r: ra, key: expandKey, m: map[uint32]*roaring.Bitmap{}, prev: c.expand}
	if c.sets == nil {
		sets, err := getBitmaps(ra, keyRoots, keyDirty, keyAffected)
		if err != nil {
			return err
		}
		c.sets = sets
	}
	stored, dirty, affected := c.sets[0], c.sets[1], c.sets[2]
	b := e.store.NewBatch()
	defer b.Close()
	edit := func(rec *rootRecord, r uint32, add bool) error {
		for _, m := range rec.Members {
			bm, err := contain.get(m)
			if err != nil {
				return err
			}
			if add {
				bm.Add(r)
			} else {
				bm.Remove(r)
			}
			affected.Add(m)
		}
		for _, l := range rec.Expanded {
			bm, err := expand.get(rec.Members[l])
			if err != nil {
				return err
			}
			if add {
				bm.Add(r)
			} else {
				bm.Remove(r)
			}
		}
		return nil
	}
	var enc []byte
	for i, r := range chunk {
		if old := olds[i]; old != nil {
			if err := edit(old, r, false); err != nil {
				return err
			}
		}
		dirty.Remove(r)
		if recs[i] == nil {
			stored.Remove(r)
			if err := b.Delete(rootKey(r)); err != nil {
				return err
			}
			continue
		}
		if err := edit(recs[i], r, true); err != nil {
			return err
		}
		stored.Add(r)
		enc = recs[i].encode(enc[:0])
		if err := b.Set(rootKey(r), enc); err != nil {
			return err
		}
	}
	if err := errors.Join(contain.flush(b), expand.flush(b), setBitmap(b, keyRoots, stored),
		setBitmap(b, keyDirty, dirty), setBitmap(b, keyAffected, affected)); err != nil {
		return fmt.Errorf("query: commit subgraphs: %w", err)
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("query: commit subgraphs: %w", err)
	}
	contain.keep()
	expand.keep()
	return nil
}

// recordCache keeps decoded root records during one pass over nodes.
type recordCache struct {
	r storage.Reader
	m map[uint32]*rootRecord
}

const recordCacheMax = 1 << 17

func (c *recordCache) get(root uint32) (*rootRecord, error) {
	if rec, ok := c.m[root]; ok {
		return rec, nil
	}
	rec, err := getRootRecord(c.r, root)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, fmt.Errorf("%w: inverted index names root %d, which has no record", ErrCorrupt, root)
	}
	if len(c.m) >= recordCacheMax {
		clear(c.m)
	}
	c.m[root] = rec
	return rec, nil
}

// readAheadNodes reads, in two requests, the inverted indexes of chunk,
// then the records of their roots that cache lacks (which it then holds).
func (e *Engine) readAheadNodes(chunk []uint32, cache *recordCache) (*readAhead, error) {
	ra := newReadAhead(e.store)
	keys := make([][]byte, len(chunk))
	for i, u := range chunk {
		keys[i] = containKey(u)
	}
	if err := ra.fetch(keys); err != nil {
		return nil, err
	}
	need := roaring.New()
	for _, u := range chunk {
		roots, err := getBitmap(ra, containKey(u))
		if err != nil {
			return nil, err
		}
		need.Or(roots)
	}
	keys = keys[:0]
	for it := need.Iterator(); it.HasNext(); {
		if r := it.Next(); cache.m[r] == nil {
			keys = append(keys, rootKey(r))
		}
	}
	if err := ra.fetch(keys); err != nil {
		return nil, err
	}
	cache.r = ra
	return ra, nil
}

// recomputeAffected recomputes the view of every node in the affected set
// from the stored contributions, in ascending root order (fasd.AverageNode),
// so that the result does not depend on the history of updates. A node in
// no subgraph loses its view.
func (e *Engine) recomputeAffected(ctx context.Context, version uint64, only *roaring.Bitmap) error {
	affected, err := getBitmap(e.store, keyAffected)
	if err != nil {
		return err
	}
	todo := affected
	if only != nil {
		todo = roaring.And(affected, only)
	}
	total := int(todo.GetCardinality())
	cache := &recordCache{r: e.store, m: map[uint32]*rootRecord{}}
	nodes := todo.ToArray()
	k := len(e.variants)
	contribs := make([][]fasd.NodeContribution, k)
	var enc []byte
	for lo := 0; lo < len(nodes); lo += e.opts.ChunkNodes {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk := nodes[lo:min(lo+e.opts.ChunkNodes, len(nodes))]
		ra, err := e.readAheadNodes(chunk, cache)
		if err != nil {
			return err
		}
		b := e.store.NewBatch()
		for _, u := range chunk {
			roots, err := getBitmap(ra, containKey(u))
			if err != nil {
				b.Close()
				return err
			}
			if roots.IsEmpty() {
				if err := b.Delete(nodeKey(u)); err != nil {
					b.Close()
					return err
				}
				continue
			}
			for v := range contribs {
				contribs[v] = contribs[v][:0]
			}
			for it := roots.Iterator(); it.HasNext(); {
				r := it.Next()
				rec, err := cache.get(r)
				if err != nil {
					b.Close()
					return err
				}
				l := rec.local(u)
				if l < 0 {
					b.Close()
					return fmt.Errorf("%w: root %d listed for node %d, which it does not contain", ErrCorrupt, r, u)
				}
				if len(rec.Probs) != k {
					b.Close()
					return fmt.Errorf("%w: root %d has %d variants, the views %d", ErrCorrupt, r, len(rec.Probs), k)
				}
				for v, p := range rec.Probs {
					contribs[v] = append(contribs[v], fasd.NodeContribution{Root: r, P: p[2*l : 2*l+2]})
				}
			}
			nv := nodeView{Count: uint32(len(contribs[0])), Version: version, Model: e.tag, Probs: make([][2]float64, k)}
			for v := range contribs {
				if err := fasd.AverageNode(contribs[v], nv.Probs[v][:]); err != nil {
					b.Close()
					return err
				}
			}
			enc = nv.encode(enc[:0])
			if err := b.Set(nodeKey(u), enc); err != nil {
				b.Close()
				return err
			}
		}
		for _, u := range chunk {
			affected.Remove(u)
		}
		if err := setBitmap(b, keyAffected, affected); err != nil {
			b.Close()
			return err
		}
		err = b.Commit()
		b.Close()
		if err != nil {
			return fmt.Errorf("query: commit node views: %w", err)
		}
		if e.opts.Progress != nil {
			e.opts.Progress("nodes", lo+len(chunk), total)
		}
	}
	return nil
}
