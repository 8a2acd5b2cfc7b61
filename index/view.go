package index

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/fasd-db/fasd/storage"
)

// View is a consistent read-only view of the graph at one version, backed by
// a storage snapshot. Updates committed after the View was taken are not
// visible through it.
//
// A View is safe for concurrent use (its reads are serialised by a mutex;
// take one View per goroutine for parallel reads). Every returned slice and
// bitmap belongs to the caller. Close the View when done; methods called
// after Close return ErrClosed.
type View struct {
	mu     sync.Mutex
	snap   storage.Snapshot
	schema *Schema
	st     state
	closed bool

	// splitMu guards splits, the decoded split bitmaps (in Splits order),
	// read once per View: the snapshot cannot change them, and decoding
	// them for every SplitOf call made reading all n nodes cost
	// n × (decode + validate), quadratic in a run container's runs.
	splitMu sync.Mutex
	splits  []*roaring.Bitmap

	// ahead, when set, holds keys read ahead at this view's version
	// (see ReadAhead); reads consult it first.
	ahead *ReadAhead
}

// View takes a consistent read view of the current graph.
func (g *Graph) View() (*View, error) {
	snap, err := g.store.NewSnapshot()
	if err != nil {
		return nil, fmt.Errorf("index: snapshot: %w", err)
	}
	st, err := readState(snap)
	if err != nil {
		return nil, errors.Join(err, snap.Close())
	}
	return &View{snap: snap, schema: &g.schema, st: st}, nil
}

// Close releases the snapshot. A second call is harmless.
func (v *View) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil
	}
	v.closed = true
	return v.snap.Close()
}

// Version returns the graph version the view shows.
func (v *View) Version() uint64 { return v.st.Version }

// NumNodes returns the number of nodes; internal ids are 0..NumNodes()−1.
func (v *View) NumNodes() int { return int(v.st.Nodes) }

// NumEdges returns the number of undirected edges.
func (v *View) NumEdges() int64 { return int64(v.st.Edges) }

// NumFeatures returns the feature dimension.
func (v *View) NumFeatures() int { return v.schema.Dim() }

// FeatureNames returns the feature names (a copy).
func (v *View) FeatureNames() []string { return append([]string(nil), v.schema.Features...) }

// get reads a key under the lock; missing keys return (nil, nil).
func (v *View) get(key []byte) ([]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil, ErrClosed
	}
	if b, ok := v.ahead.lookup(key); ok {
		return b, nil
	}
	b, err := v.snap.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("index: read %x: %w", key, err)
	}
	return b, nil
}

// bitmap reads the bitmap under key (empty if absent). The bitmap is built
// over the fresh copy Get returned, so the caller owns it and may modify it.
func (v *View) bitmap(key []byte) (*roaring.Bitmap, error) {
	b, err := v.get(key)
	if err != nil {
		return nil, err
	}
	return DecodeBitmap(b)
}

// DecodeBitmap decodes a stored roaring bitmap strictly. FromBuffer only
// checks the framing; the length and Validate then check the rest (sorted,
// deduplicated, in-range containers), for a damaged container is otherwise
// accepted and gives wrong answers, or panics later inside roaring (an
// unsorted array container does, when a write re-encodes it).
// FuzzDecodeBitmap found that. Errors wrap ErrCorrupt. Packages above index
// that keep bitmaps of their own (the query engine's views) use it too.
func DecodeBitmap(b []byte) (*roaring.Bitmap, error) {
	bm := roaring.New()
	if len(b) == 0 {
		return bm, nil
	}
	n, err := bm.FromBuffer(b)
	if err == nil && n != int64(len(b)) {
		err = fmt.Errorf("%d trailing bytes", int64(len(b))-n)
	}
	if err == nil {
		err = bm.Validate()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: bitmap: %w", ErrCorrupt, err)
	}
	return bm, nil
}

func encodeBitmap(bm *roaring.Bitmap) ([]byte, error) {
	bm.RunOptimize()
	return bm.ToBytes()
}

// NeighborBitmap returns the neighbours of n as a bitmap the caller owns.
func (v *View) NeighborBitmap(n uint32) (*roaring.Bitmap, error) {
	if err := checkNode(n, v.st.Nodes); err != nil {
		return nil, err
	}
	return v.bitmap(adjKey(n))
}

// Neighbors appends the neighbours of n to dst in ascending order and
// returns the extended slice (fasd.NeighborLister).
func (v *View) Neighbors(n uint32, dst []uint32) ([]uint32, error) {
	bm, err := v.NeighborBitmap(n)
	if err != nil {
		return dst, err
	}
	card := int(bm.GetCardinality())
	start := len(dst)
	dst = slices.Grow(dst, card)[:start+card]
	bm.ManyIterator().NextMany(dst[start:])
	return dst, nil
}

// Degree returns the number of neighbours of n.
func (v *View) Degree(n uint32) (int, error) {
	bm, err := v.NeighborBitmap(n)
	if err != nil {
		return 0, err
	}
	return int(bm.GetCardinality()), nil
}

// HasEdge reports whether u and w are adjacent.
func (v *View) HasEdge(u, w uint32) (bool, error) {
	bm, err := v.NeighborBitmap(u)
	if err != nil {
		return false, err
	}
	return bm.Contains(w), nil
}

func (v *View) record(n uint32) ([]byte, error) {
	if err := checkNode(n, v.st.Nodes); err != nil {
		return nil, err
	}
	b, err := v.get(nodeKey(n))
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("%w: node %d has no record", ErrCorrupt, n)
	}
	return b, nil
}

// Node returns everything stored about n except its edges.
func (v *View) Node(n uint32) (Node, error) {
	b, err := v.record(n)
	if err != nil {
		return Node{}, err
	}
	ext, s, y, err := decodeNodeHeader(b, v.schema.Dim())
	if err != nil {
		return Node{}, fmt.Errorf("node %d: %w", n, err)
	}
	sp, err := v.SplitOf(n)
	if err != nil {
		return Node{}, err
	}
	return Node{ExternalID: ext, Sensitive: s, Label: y, Split: sp, Features: appendFeatures(make([]float32, 0, v.schema.Dim()), b)}, nil
}

// SplitOf returns the part of the split n is in (SplitNone if none). The
// first call reads and decodes the split bitmaps; later calls on the same
// View reuse them, so testing every node costs one decode, not one per node.
func (v *View) SplitOf(n uint32) (Split, error) {
	if err := checkNode(n, v.st.Nodes); err != nil {
		return SplitNone, err
	}
	bms, err := v.splitBitmaps()
	if err != nil {
		return SplitNone, err
	}
	for i, sp := range Splits {
		if bms[i].Contains(n) {
			return sp, nil
		}
	}
	return SplitNone, nil
}

// splitBitmaps returns the split bitmaps, decoding them on the first call.
// They are shared between calls and must only be read.
func (v *View) splitBitmaps() ([]*roaring.Bitmap, error) {
	v.mu.Lock()
	closed := v.closed
	v.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	v.splitMu.Lock()
	defer v.splitMu.Unlock()
	if v.splits != nil {
		return v.splits, nil
	}
	bms := make([]*roaring.Bitmap, len(Splits))
	for i, sp := range Splits {
		bm, err := v.bitmap(splitKey(sp))
		if err != nil {
			return nil, err
		}
		bms[i] = bm
	}
	v.splits = bms
	return bms, nil
}

// Features appends the feature vector of n to dst and returns the extended
// slice.
func (v *View) Features(n uint32, dst []float32) ([]float32, error) {
	b, err := v.record(n)
	if err != nil {
		return dst, err
	}
	if _, _, _, err := decodeNodeHeader(b, v.schema.Dim()); err != nil {
		return dst, fmt.Errorf("node %d: %w", n, err)
	}
	return appendFeatures(dst, b), nil
}

// Attributes appends the feature vector of n to dst and returns the
// extended slice with n's sensitive value and label: one read of the node's
// record, where Features, Sensitive and Label read it once each.
func (v *View) Attributes(n uint32, dst []float32) (_ []float32, s, y int8, err error) {
	b, err := v.record(n)
	if err != nil {
		return dst, 0, 0, err
	}
	_, s, y, err = decodeNodeHeader(b, v.schema.Dim())
	if err != nil {
		return dst, 0, 0, fmt.Errorf("node %d: %w", n, err)
	}
	return appendFeatures(dst, b), s, y, nil
}

// Sensitive returns the sensitive value of n: 0, 1 or Unknown.
func (v *View) Sensitive(n uint32) (int8, error) {
	b, err := v.record(n)
	if err != nil {
		return 0, err
	}
	_, s, _, err := decodeNodeHeader(b, v.schema.Dim())
	return s, err
}

// Label returns the label of n: 0, 1 or Unlabelled.
func (v *View) Label(n uint32) (int8, error) {
	b, err := v.record(n)
	if err != nil {
		return 0, err
	}
	_, _, y, err := decodeNodeHeader(b, v.schema.Dim())
	return y, err
}

// ExternalID returns the dump's id of n.
func (v *View) ExternalID(n uint32) (int64, error) {
	b, err := v.record(n)
	if err != nil {
		return 0, err
	}
	ext, _, _, err := decodeNodeHeader(b, v.schema.Dim())
	return ext, err
}

// InternalID returns the internal id of the node with external id ext, or
// an error wrapping ErrUnknownID.
func (v *View) InternalID(ext int64) (uint32, error) {
	b, err := v.get(extKey(ext))
	if err != nil {
		return 0, err
	}
	if b == nil {
		return 0, fmt.Errorf("%w: %d", ErrUnknownID, ext)
	}
	if len(b) != 4 {
		return 0, fmt.Errorf("%w: id map entry of %d has %d bytes", ErrCorrupt, ext, len(b))
	}
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]), nil
}

// Group returns the nodes whose sensitive value is s (0, 1 or Unknown).
func (v *View) Group(s int8) (*roaring.Bitmap, error) {
	if err := checkTri("sensitive value", s); err != nil {
		return nil, err
	}
	return v.bitmap(sensKey(s))
}

// LabelSet returns the nodes whose label is y (0, 1 or Unlabelled).
func (v *View) LabelSet(y int8) (*roaring.Bitmap, error) {
	if err := checkTri("label", y); err != nil {
		return nil, err
	}
	return v.bitmap(labelKey(y))
}

// Labelled returns the nodes with label 0 or 1.
func (v *View) Labelled() (*roaring.Bitmap, error) { return v.bitmap(labelledKey()) }

// Deleted returns the deleted nodes (Tx.DeleteNode). Their ids stay
// valid: reads see a tombstone (Unknown sensitive value, Unlabelled, zero
// features, no edges) that is in no other node set.
func (v *View) Deleted() (*roaring.Bitmap, error) { return v.bitmap(deletedKey()) }

// IsDeleted reports whether n was deleted.
func (v *View) IsDeleted(n uint32) (bool, error) {
	if err := checkNode(n, v.st.Nodes); err != nil {
		return false, err
	}
	bm, err := v.Deleted()
	if err != nil {
		return false, err
	}
	return bm.Contains(n), nil
}

// SplitSet returns the nodes of one part of the split (SplitTrain, SplitVal
// or SplitTest).
func (v *View) SplitSet(s Split) (*roaring.Bitmap, error) {
	if s == SplitNone || s > SplitTest {
		return nil, fmt.Errorf("%w: no node set for split %v", ErrInvalid, s)
	}
	return v.bitmap(splitKey(s))
}
