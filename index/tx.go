package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/fasd-db/fasd/storage"
)

// Change describes what one committed update changed. The query engine uses
// it to find stale views: a node in Adjacency has a different neighbour
// list, a node in Attributes different features, sensitive value, label or
// split, a node in Added is new (and is also in Attributes), a node in
// Deleted was deleted (and is also in Attributes, and in Adjacency if it
// had edges).
type Change struct {
	// Version is the graph version after the update (unchanged when the
	// update changed nothing and so committed nothing).
	Version    uint64
	Adjacency  *roaring.Bitmap
	Attributes *roaring.Bitmap
	Added      *roaring.Bitmap
	Deleted    *roaring.Bitmap
	// DeletedIDs are the external ids of the deleted nodes.
	DeletedIDs   []int64
	EdgesAdded   int
	EdgesRemoved int
}

// Empty reports whether the update changed nothing.
func (c *Change) Empty() bool {
	return c.Adjacency.IsEmpty() && c.Attributes.IsEmpty() && c.Added.IsEmpty() && c.Deleted.IsEmpty()
}

// Tx is an update in progress, handed to the function given to
// Graph.Update. Its reads see the graph as it was when the update started
// plus the update's own changes. Everything it changes is committed in one
// atomic batch, together with all the bitmaps that depend on it, the edge
// and node counts and a new version. A Tx must not be used after the
// function returns, nor from several goroutines.
type Tx struct {
	g      *Graph
	base   storage.Snapshot
	st     state
	adj    map[uint32]*roaring.Bitmap
	nodes  map[uint32]*Node
	newExt map[int64]uint32
	delExt map[int64]bool // external ids of deleted nodes
	sets   map[string]*roaring.Bitmap
	// deleted is the deleted-node set, read on first use and written back
	// only when DeleteNode changed it (every update reads it).
	deleted *roaring.Bitmap
	// scaling guards stored feature values (nil: no recorded scaling);
	// read on first use.
	scaling     *Scaling
	scalingRead bool
	change      Change
}

// Update runs fn in a new Tx and commits its changes as one atomic batch
// that bumps the graph version. If fn returns an error, or ctx is done
// before the commit, nothing is written. An update that changes nothing
// commits nothing and keeps the version. Updates are serialised.
//
// One batch must fit the engine's atomic-batch bound (a few MiB with
// Badger); a larger update fails with an error wrapping
// storage.ErrBatchTooLarge and must be split by the caller.
func (g *Graph) Update(ctx context.Context, fn func(tx *Tx) error) (Change, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	snap, err := g.store.NewSnapshot()
	if err != nil {
		return Change{}, fmt.Errorf("index: update: snapshot: %w", err)
	}
	defer snap.Close()
	if err := checkLoading(snap); err != nil {
		return Change{}, err
	}
	st, err := readState(snap)
	if err != nil {
		return Change{}, err
	}
	tx := &Tx{
		g: g, base: snap, st: st,
		adj:    map[uint32]*roaring.Bitmap{},
		nodes:  map[uint32]*Node{},
		newExt: map[int64]uint32{},
		delExt: map[int64]bool{},
		sets:   map[string]*roaring.Bitmap{},
		change: emptyChange(st.Version),
	}
	if err := fn(tx); err != nil {
		return emptyChange(st.Version), err
	}
	if tx.change.Empty() {
		return tx.change, nil
	}
	if err := ctx.Err(); err != nil {
		return Change{}, err
	}
	if err := tx.commit(); err != nil {
		return Change{}, err
	}
	return tx.change, nil
}

func emptyChange(version uint64) Change {
	return Change{Version: version, Adjacency: roaring.New(), Attributes: roaring.New(), Added: roaring.New(), Deleted: roaring.New()}
}

func (tx *Tx) commit() error {
	counter, err := readVersionCounter(tx.base)
	if err != nil {
		return err
	}
	tx.st.Version = max(counter, tx.st.Version) + 1
	b := tx.g.store.NewBatch()
	defer b.Close()
	set := func(k, v []byte) error {
		if err := b.Set(k, v); err != nil {
			return fmt.Errorf("index: update: %w", err)
		}
		return nil
	}
	// Only the records the update changed are written; the maps also hold
	// records that were merely read.
	for it := tx.change.Adjacency.Iterator(); it.HasNext(); {
		v := it.Next()
		bm := tx.adj[v]
		if bm.IsEmpty() {
			if err := b.Delete(adjKey(v)); err != nil {
				return fmt.Errorf("index: update: %w", err)
			}
			continue
		}
		enc, err := encodeBitmap(bm)
		if err != nil {
			return fmt.Errorf("index: encode adjacency: %w", err)
		}
		if err := set(adjKey(v), enc); err != nil {
			return err
		}
	}
	var rec []byte
	for it := tx.change.Attributes.Iterator(); it.HasNext(); {
		v := it.Next()
		rec = appendNodeRecord(rec[:0], tx.nodes[v])
		if err := set(nodeKey(v), rec); err != nil {
			return err
		}
	}
	for ext := range tx.delExt {
		if _, readded := tx.newExt[ext]; readded {
			continue
		}
		if err := b.Delete(extKey(ext)); err != nil {
			return fmt.Errorf("index: update: %w", err)
		}
	}
	for ext, v := range tx.newExt {
		if err := set(extKey(ext), binary.BigEndian.AppendUint32(nil, v)); err != nil {
			return err
		}
	}
	if !tx.change.Deleted.IsEmpty() {
		enc, err := encodeBitmap(tx.deleted)
		if err != nil {
			return fmt.Errorf("index: encode node set: %w", err)
		}
		if err := set(deletedKey(), enc); err != nil {
			return err
		}
	}
	for k, bm := range tx.sets {
		enc, err := encodeBitmap(bm)
		if err != nil {
			return fmt.Errorf("index: encode node set: %w", err)
		}
		if err := set([]byte(k), enc); err != nil {
			return err
		}
	}
	if err := set(keyState, tx.st.encode()); err != nil {
		return err
	}
	if err := set(keyVersion, encodeU64(tx.st.Version)); err != nil {
		return err
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("index: update: commit: %w", err)
	}
	tx.change.Version = tx.st.Version
	return nil
}

// NumNodes returns the node count including nodes added by this update.
func (tx *Tx) NumNodes() int { return int(tx.st.Nodes) }

// NumEdges returns the undirected edge count including this update's
// changes.
func (tx *Tx) NumEdges() int64 { return int64(tx.st.Edges) }

func (tx *Tx) neighbors(v uint32) (*roaring.Bitmap, error) {
	if bm, ok := tx.adj[v]; ok {
		return bm, nil
	}
	b, err := tx.base.Get(adjKey(v))
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("index: read adjacency of %d: %w", v, err)
	}
	bm, err := DecodeBitmap(b)
	if err != nil {
		return nil, err
	}
	tx.adj[v] = bm
	return bm, nil
}

func (tx *Tx) set(key []byte) (*roaring.Bitmap, error) {
	if bm, ok := tx.sets[string(key)]; ok {
		return bm, nil
	}
	b, err := tx.base.Get(key)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("index: read node set: %w", err)
	}
	bm, err := DecodeBitmap(b)
	if err != nil {
		return nil, err
	}
	tx.sets[string(key)] = bm
	return bm, nil
}

// deletedSet returns the deleted nodes as the update sees them.
func (tx *Tx) deletedSet() (*roaring.Bitmap, error) {
	if tx.deleted == nil {
		b, err := tx.base.Get(deletedKey())
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return nil, fmt.Errorf("index: read node set: %w", err)
		}
		bm, err := DecodeBitmap(b)
		if err != nil {
			return nil, err
		}
		tx.deleted = bm
	}
	return tx.deleted, nil
}

// checkLive fails for an id out of range (ErrNodeRange) or of a deleted
// node (ErrDeleted).
func (tx *Tx) checkLive(v uint32) error {
	if err := checkNode(v, tx.st.Nodes); err != nil {
		return err
	}
	del, err := tx.deletedSet()
	if err != nil {
		return err
	}
	if del.Contains(v) {
		return fmt.Errorf("%w: node %d", ErrDeleted, v)
	}
	return nil
}

// checkFeatures checks stored feature values against the schema (count,
// finite) and against the recorded scaling (Scaling.checkStored), naming
// the column.
func (tx *Tx) checkFeatures(f []float32) error {
	if err := tx.g.schema.checkFeatures(f); err != nil {
		return err
	}
	if !tx.scalingRead {
		sc, err := readScaling(tx.base, tx.g.schema.Dim())
		if err != nil && !errors.Is(err, ErrNoScaling) {
			return err
		}
		tx.scaling, tx.scalingRead = sc, true
	}
	if tx.scaling == nil {
		return nil
	}
	for j, x := range f {
		if err := tx.scaling.checkStored(j, x); err != nil {
			return fmt.Errorf("feature %q: %w", tx.g.schema.Features[j], err)
		}
	}
	return nil
}

// node returns the (mutable) record of v held by the update; a deleted
// node is an error wrapping ErrDeleted.
func (tx *Tx) node(v uint32) (*Node, error) {
	if err := tx.checkLive(v); err != nil {
		return nil, err
	}
	if n, ok := tx.nodes[v]; ok {
		return n, nil
	}
	b, err := tx.base.Get(nodeKey(v))
	if err != nil {
		return nil, fmt.Errorf("%w: node %d: %w", ErrCorrupt, v, err)
	}
	ext, s, y, err := decodeNodeHeader(b, tx.g.schema.Dim())
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", v, err)
	}
	sp := SplitNone
	for _, part := range Splits {
		bm, err := tx.set(splitKey(part))
		if err != nil {
			return nil, err
		}
		if bm.Contains(v) {
			sp = part
		}
	}
	n := &Node{ExternalID: ext, Sensitive: s, Label: y, Split: sp, Features: appendFeatures(nil, b)}
	tx.nodes[v] = n
	return n, nil
}

// Node returns a copy of the record of v as the update sees it.
func (tx *Tx) Node(v uint32) (Node, error) {
	n, err := tx.node(v)
	if err != nil {
		return Node{}, err
	}
	c := *n
	c.Features = append([]float32(nil), n.Features...)
	return c, nil
}

// HasEdge reports whether u and v are adjacent as the update sees it.
func (tx *Tx) HasEdge(u, v uint32) (bool, error) {
	if err := tx.checkLive(u); err != nil {
		return false, err
	}
	bm, err := tx.neighbors(u)
	if err != nil {
		return false, err
	}
	return bm.Contains(v), nil
}

// AddEdge adds the undirected edge {u, v} and reports whether it was new.
// A self-loop is an error wrapping ErrSelfLoop.
func (tx *Tx) AddEdge(u, v uint32) (bool, error) {
	if err := tx.checkPair(u, v); err != nil {
		return false, err
	}
	nu, err := tx.neighbors(u)
	if err != nil {
		return false, err
	}
	if nu.Contains(v) {
		return false, nil
	}
	nv, err := tx.neighbors(v)
	if err != nil {
		return false, err
	}
	nu.Add(v)
	nv.Add(u)
	tx.st.Edges++
	tx.change.EdgesAdded++
	tx.change.Adjacency.Add(u)
	tx.change.Adjacency.Add(v)
	return true, nil
}

// RemoveEdge removes the undirected edge {u, v} and reports whether it
// existed.
func (tx *Tx) RemoveEdge(u, v uint32) (bool, error) {
	if err := tx.checkPair(u, v); err != nil {
		return false, err
	}
	nu, err := tx.neighbors(u)
	if err != nil {
		return false, err
	}
	if !nu.Contains(v) {
		return false, nil
	}
	nv, err := tx.neighbors(v)
	if err != nil {
		return false, err
	}
	nu.Remove(v)
	nv.Remove(u)
	tx.st.Edges--
	tx.change.EdgesRemoved++
	tx.change.Adjacency.Add(u)
	tx.change.Adjacency.Add(v)
	return true, nil
}

func (tx *Tx) checkPair(u, v uint32) error {
	if err := tx.checkLive(u); err != nil {
		return err
	}
	if err := tx.checkLive(v); err != nil {
		return err
	}
	if u == v {
		return fmt.Errorf("%w: node %d", ErrSelfLoop, u)
	}
	return nil
}

// InternalID returns the internal id of external id ext: a node the
// update added, or one of the graph it started from (ErrUnknownID for
// neither).
func (tx *Tx) InternalID(ext int64) (uint32, error) {
	if id, ok := tx.newExt[ext]; ok {
		return id, nil
	}
	if tx.delExt[ext] {
		return 0, fmt.Errorf("%w: %d (deleted by this update)", ErrUnknownID, ext)
	}
	b, err := tx.base.Get(extKey(ext))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return 0, fmt.Errorf("%w: %d", ErrUnknownID, ext)
	case err != nil:
		return 0, fmt.Errorf("index: read id map: %w", err)
	case len(b) != 4:
		return 0, fmt.Errorf("%w: id map entry of %d has %d bytes", ErrCorrupt, ext, len(b))
	}
	return binary.BigEndian.Uint32(b), nil
}

// AddNode adds a node without edges and returns its internal id (the old
// node count). Its external id must be new (or that of a node deleted
// earlier); its record is validated against the schema and its features,
// stored values, against the recorded scaling (ErrOutOfRange beyond the
// values Scaling.Scale can produce).
func (tx *Tx) AddNode(n Node) (uint32, error) {
	if err := tx.checkFeatures(n.Features); err != nil {
		return 0, err
	}
	if err := errors.Join(checkTri("sensitive value", n.Sensitive), checkTri("label", n.Label), checkSplit(n.Split)); err != nil {
		return 0, err
	}
	if tx.st.Nodes == ^uint32(0) {
		return 0, fmt.Errorf("%w: the graph holds 2^32-1 nodes", ErrInvalid)
	}
	if _, dup := tx.newExt[n.ExternalID]; dup {
		return 0, fmt.Errorf("%w: %d", ErrDuplicateID, n.ExternalID)
	}
	switch _, err := tx.base.Get(extKey(n.ExternalID)); {
	case tx.delExt[n.ExternalID]:
	case err == nil:
		return 0, fmt.Errorf("%w: %d", ErrDuplicateID, n.ExternalID)
	case !errors.Is(err, storage.ErrNotFound):
		return 0, fmt.Errorf("index: read id map: %w", err)
	}
	id := tx.st.Nodes
	c := n
	c.Features = append([]float32(nil), n.Features...)
	// Apply the set memberships before publishing the node, so a failed read
	// leaves the Tx unchanged.
	keys := [][]byte{sensKey(n.Sensitive), labelKey(n.Label)}
	if n.Label >= 0 {
		keys = append(keys, labelledKey())
	}
	if n.Split != SplitNone {
		keys = append(keys, splitKey(n.Split))
	}
	bms := make([]*roaring.Bitmap, len(keys))
	for i, k := range keys {
		bm, err := tx.set(k)
		if err != nil {
			return 0, err
		}
		bms[i] = bm
	}
	for _, bm := range bms {
		bm.Add(id)
	}
	tx.st.Nodes++
	tx.nodes[id] = &c
	tx.newExt[n.ExternalID] = id
	tx.change.Added.Add(id)
	tx.change.Attributes.Add(id)
	return id, nil
}

// SetFeatures replaces the feature vector of v (stored values, checked
// like AddNode's).
func (tx *Tx) SetFeatures(v uint32, f []float32) error {
	if err := tx.checkFeatures(f); err != nil {
		return err
	}
	n, err := tx.node(v)
	if err != nil {
		return err
	}
	copy(n.Features, f)
	tx.change.Attributes.Add(v)
	return nil
}

// DeleteNode deletes v: its edges are removed, it leaves every node set
// (sensitive group, label, labelled, split) and the id map, and its record
// becomes a tombstone: external id kept, sensitive value Unknown,
// Unlabelled, all features 0, listed by View.Deleted. Internal ids stay
// dense: v is never reused, and the tombstone is an isolated unlabelled
// node that no sampling reaches and no training set holds. The external
// id becomes free for a new node. Deleting a deleted node, or changing or
// linking one, is an error wrapping ErrDeleted.
func (tx *Tx) DeleteNode(v uint32) error {
	n, err := tx.node(v)
	if err != nil {
		return err
	}
	nb, err := tx.neighbors(v)
	if err != nil {
		return err
	}
	for _, w := range nb.ToArray() {
		if _, err := tx.RemoveEdge(v, w); err != nil {
			return err
		}
	}
	if err := errors.Join(tx.SetSensitive(v, Unknown), tx.SetLabel(v, Unlabelled), tx.SetSplit(v, SplitNone)); err != nil {
		return err
	}
	// A tombstone is in no node set but the deleted one.
	del, err := tx.deletedSet()
	if err != nil {
		return err
	}
	unknown, err := tx.set(sensKey(Unknown))
	if err != nil {
		return err
	}
	unlabelled, err := tx.set(labelKey(Unlabelled))
	if err != nil {
		return err
	}
	unknown.Remove(v)
	unlabelled.Remove(v)
	clear(n.Features)
	del.Add(v)
	if id, ok := tx.newExt[n.ExternalID]; ok && id == v {
		delete(tx.newExt, n.ExternalID)
	} else {
		tx.delExt[n.ExternalID] = true
	}
	tx.change.Deleted.Add(v)
	tx.change.DeletedIDs = append(tx.change.DeletedIDs, n.ExternalID)
	tx.change.Attributes.Add(v)
	return nil
}

// IsDeleted reports whether v was deleted (before or by this update).
func (tx *Tx) IsDeleted(v uint32) (bool, error) {
	if err := checkNode(v, tx.st.Nodes); err != nil {
		return false, err
	}
	del, err := tx.deletedSet()
	if err != nil {
		return false, err
	}
	return del.Contains(v), nil
}

// move moves v from the set under from to the set under to.
func (tx *Tx) move(v uint32, from, to []byte) error {
	a, err := tx.set(from)
	if err != nil {
		return err
	}
	b, err := tx.set(to)
	if err != nil {
		return err
	}
	a.Remove(v)
	b.Add(v)
	return nil
}

// SetSensitive sets the sensitive value of v (0, 1 or Unknown) and moves it
// between the group bitmaps.
func (tx *Tx) SetSensitive(v uint32, s int8) error {
	if err := checkTri("sensitive value", s); err != nil {
		return err
	}
	n, err := tx.node(v)
	if err != nil {
		return err
	}
	if n.Sensitive == s {
		return nil
	}
	if err := tx.move(v, sensKey(n.Sensitive), sensKey(s)); err != nil {
		return err
	}
	n.Sensitive = s
	tx.change.Attributes.Add(v)
	return nil
}

// SetLabel sets the label of v (0, 1 or Unlabelled) and updates the label
// bitmaps and the labelled-node bitmap. The split is left as it is.
func (tx *Tx) SetLabel(v uint32, y int8) error {
	if err := checkTri("label", y); err != nil {
		return err
	}
	n, err := tx.node(v)
	if err != nil {
		return err
	}
	if n.Label == y {
		return nil
	}
	lab, err := tx.set(labelledKey())
	if err != nil {
		return err
	}
	if err := tx.move(v, labelKey(n.Label), labelKey(y)); err != nil {
		return err
	}
	if y >= 0 {
		lab.Add(v)
	} else {
		lab.Remove(v)
	}
	n.Label = y
	tx.change.Attributes.Add(v)
	return nil
}

// SetSplit moves v into split s (SplitNone removes it from the split).
func (tx *Tx) SetSplit(v uint32, s Split) error {
	if err := checkSplit(s); err != nil {
		return err
	}
	n, err := tx.node(v)
	if err != nil {
		return err
	}
	if n.Split == s {
		return nil
	}
	if n.Split != SplitNone {
		bm, err := tx.set(splitKey(n.Split))
		if err != nil {
			return err
		}
		bm.Remove(v)
	}
	if s != SplitNone {
		bm, err := tx.set(splitKey(s))
		if err != nil {
			return err
		}
		bm.Add(v)
	}
	n.Split = s
	tx.change.Attributes.Add(v)
	return nil
}

// AddEdges adds the undirected edges in one update; edges already present
// are ignored. A self-loop or an unknown node fails the whole update.
func (g *Graph) AddEdges(ctx context.Context, edges [][2]uint32) (Change, error) {
	return g.Update(ctx, func(tx *Tx) error {
		for _, e := range edges {
			if _, err := tx.AddEdge(e[0], e[1]); err != nil {
				return err
			}
		}
		return nil
	})
}

// RemoveEdges removes the undirected edges in one update; absent edges are
// ignored.
func (g *Graph) RemoveEdges(ctx context.Context, edges [][2]uint32) (Change, error) {
	return g.Update(ctx, func(tx *Tx) error {
		for _, e := range edges {
			if _, err := tx.RemoveEdge(e[0], e[1]); err != nil {
				return err
			}
		}
		return nil
	})
}

// AddNodes adds nodes (without edges) in one update and returns the change;
// the new internal ids are Change.Added, in the order given.
func (g *Graph) AddNodes(ctx context.Context, nodes []Node) (Change, error) {
	return g.Update(ctx, func(tx *Tx) error {
		for _, n := range nodes {
			if _, err := tx.AddNode(n); err != nil {
				return err
			}
		}
		return nil
	})
}

// SetFeatures replaces the features of v in one update.
func (g *Graph) SetFeatures(ctx context.Context, v uint32, f []float32) (Change, error) {
	return g.Update(ctx, func(tx *Tx) error { return tx.SetFeatures(v, f) })
}

// SetSensitive sets the sensitive value of v in one update.
func (g *Graph) SetSensitive(ctx context.Context, v uint32, s int8) (Change, error) {
	return g.Update(ctx, func(tx *Tx) error { return tx.SetSensitive(v, s) })
}

// SetLabel sets the label of v in one update.
func (g *Graph) SetLabel(ctx context.Context, v uint32, y int8) (Change, error) {
	return g.Update(ctx, func(tx *Tx) error { return tx.SetLabel(v, y) })
}
