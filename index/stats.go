package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/fasd-db/fasd/storage"
)

// GroupCounts counts nodes by sensitive value.
type GroupCounts struct {
	G0      int `json:"0"`
	G1      int `json:"1"`
	Unknown int `json:"unknown"`
}

// LabelCounts counts nodes by label.
type LabelCounts struct {
	Y0         int `json:"0"`
	Y1         int `json:"1"`
	Unlabelled int `json:"unlabelled"`
}

// SplitCounts counts nodes per part of the split.
type SplitCounts struct {
	Train int `json:"train"`
	Val   int `json:"val"`
	Test  int `json:"test"`
}

// Homophily measures how often edges stay inside a sensitive group.
type Homophily struct {
	// Edge is SameGroup/KnownEdges: the fraction of edges between two nodes
	// of known sensitive value that join nodes of the same group (NaN-free:
	// 0 when KnownEdges is 0).
	Edge float64 `json:"edge"`
	// SameGroup counts undirected edges inside group 0 or inside group 1.
	SameGroup int64 `json:"same_group_edges"`
	// KnownEdges counts undirected edges whose endpoints both have a known
	// sensitive value.
	KnownEdges int64 `json:"known_edges"`
	// Baseline is the same-group fraction expected if edges ignored the
	// groups: (n0² + n1²)/(n0 + n1)² with n0, n1 the group sizes.
	Baseline float64 `json:"baseline"`
}

// Stats summarises a graph.
type Stats struct {
	Version uint64 `json:"version"`
	// Nodes counts the live nodes, Deleted the tombstones of deleted ones
	// (their ids stay taken).
	Nodes    int         `json:"nodes"`
	Deleted  int         `json:"deleted,omitempty"`
	Edges    int64       `json:"edges"`
	Features int         `json:"features"`
	Isolated int         `json:"isolated"`
	MaxDeg   int         `json:"max_degree"`
	Groups   GroupCounts `json:"groups"`
	Labels   LabelCounts `json:"labels"`
	// LabelsByGroup is the label distribution within each sensitive group.
	LabelsByGroup struct {
		G0      LabelCounts `json:"0"`
		G1      LabelCounts `json:"1"`
		Unknown LabelCounts `json:"unknown"`
	} `json:"labels_by_group"`
	Splits    SplitCounts `json:"splits"`
	Homophily Homophily   `json:"homophily"`
}

// Stats computes the summary of the graph the view shows. It reads every
// adjacency bitmap once (O(edges) work, O(nodes) memory); group and label
// figures are bitmap intersections.
func (v *View) Stats(ctx context.Context) (*Stats, error) {
	s := &Stats{Version: v.st.Version, Nodes: int(v.st.Nodes), Edges: int64(v.st.Edges), Features: v.schema.Dim()}
	var g [3]*roaring.Bitmap // by sensitive value + 1
	var y [3]*roaring.Bitmap // by label + 1
	for i := range 3 {
		var err error
		if g[i], err = v.Group(int8(i - 1)); err != nil {
			return nil, err
		}
		if y[i], err = v.LabelSet(int8(i - 1)); err != nil {
			return nil, err
		}
	}
	count := func(b *roaring.Bitmap) int { return int(b.GetCardinality()) }
	del, err := v.Deleted()
	if err != nil {
		return nil, err
	}
	s.Deleted = count(del)
	s.Nodes -= s.Deleted
	s.Groups = GroupCounts{G0: count(g[1]), G1: count(g[2]), Unknown: count(g[0])}
	s.Labels = LabelCounts{Y0: count(y[1]), Y1: count(y[2]), Unlabelled: count(y[0])}
	by := func(gb *roaring.Bitmap) LabelCounts {
		return LabelCounts{Y0: int(gb.AndCardinality(y[1])), Y1: int(gb.AndCardinality(y[2])), Unlabelled: int(gb.AndCardinality(y[0]))}
	}
	s.LabelsByGroup.G0, s.LabelsByGroup.G1, s.LabelsByGroup.Unknown = by(g[1]), by(g[2]), by(g[0])
	for _, sp := range Splits {
		b, err := v.SplitSet(sp)
		if err != nil {
			return nil, err
		}
		switch sp {
		case SplitTrain:
			s.Splits.Train = count(b)
		case SplitVal:
			s.Splits.Val = count(b)
		case SplitTest:
			s.Splits.Test = count(b)
		}
	}
	known := roaring.Or(g[1], g[2])
	var withEdges int
	var degSum, same, knownEdges uint64
	err = v.scan(ctx, []byte{prefixAdj}, func(key, val []byte) error {
		u, err := idFromKey(key)
		if err != nil {
			return err
		}
		nb, err := DecodeBitmap(val)
		if err != nil {
			return err
		}
		d := nb.GetCardinality()
		if d == 0 {
			return nil
		}
		withEdges++
		degSum += d
		s.MaxDeg = max(s.MaxDeg, int(d))
		switch {
		case g[1].Contains(u):
			same += nb.AndCardinality(g[1])
			knownEdges += nb.AndCardinality(known)
		case g[2].Contains(u):
			same += nb.AndCardinality(g[2])
			knownEdges += nb.AndCardinality(known)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if degSum != 2*v.st.Edges {
		return nil, fmt.Errorf("%w: degrees sum to %d, want twice the %d edges", ErrCorrupt, degSum, v.st.Edges)
	}
	s.Isolated = s.Nodes - withEdges
	s.Homophily.SameGroup = int64(same / 2)
	s.Homophily.KnownEdges = int64(knownEdges / 2)
	if knownEdges > 0 {
		s.Homophily.Edge = float64(same) / float64(knownEdges)
	}
	if n := s.Groups.G0 + s.Groups.G1; n > 0 {
		n0, n1, nn := float64(s.Groups.G0), float64(s.Groups.G1), float64(n)
		s.Homophily.Baseline = (n0*n0 + n1*n1) / (nn * nn)
	}
	return s, nil
}

// scan calls fn for every key with the given prefix, in key order, holding
// the view's lock. key and val are valid only during the call.
func (v *View) scan(ctx context.Context, prefix []byte, fn func(key, val []byte) error) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return ErrClosed
	}
	it, err := v.snap.NewIter(prefix, storage.PrefixEnd(prefix))
	if err != nil {
		return fmt.Errorf("index: iterate: %w", err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return errors.Join(err, it.Close())
			}
		}
		val, err := it.Value()
		if err != nil {
			return errors.Join(fmt.Errorf("index: iterate: %w", err), it.Close())
		}
		if err := fn(it.Key(), val); err != nil {
			return errors.Join(err, it.Close())
		}
	}
	if err := it.Err(); err != nil {
		return errors.Join(fmt.Errorf("index: iterate: %w", err), it.Close())
	}
	return it.Close()
}

// Check verifies every invariant of the stored graph and returns an error
// wrapping ErrCorrupt that lists the violations it found: adjacency
// symmetric, without self-loops and within the node range; the edge count
// equal to half the degree sum; one decodable record per node; the id map a
// bijection; every node set equal to the one the node records imply. It
// holds all adjacency in memory (O(edges)), so it is meant for tests and
// for the occasional fasd check, not for the hot path.
func (v *View) Check(ctx context.Context) error {
	n := v.st.Nodes
	dim := v.schema.Dim()
	var errs []error
	bad := func(format string, args ...any) {
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...))
		}
	}
	adj := make(map[uint32]*roaring.Bitmap)
	var degSum uint64
	err := v.scan(ctx, []byte{prefixAdj}, func(key, val []byte) error {
		u, err := idFromKey(key)
		if err != nil {
			return err
		}
		nb, err := DecodeBitmap(append([]byte(nil), val...))
		if err != nil {
			return err
		}
		if u >= n {
			bad("adjacency of node %d ≥ %d nodes", u, n)
		}
		if nb.IsEmpty() {
			bad("empty adjacency bitmap stored for node %d", u)
		}
		if nb.Contains(u) {
			bad("self-loop at node %d", u)
		}
		if mx := nb.Maximum(); !nb.IsEmpty() && mx >= n {
			bad("node %d has neighbour %d ≥ %d nodes", u, mx, n)
		}
		degSum += nb.GetCardinality()
		adj[u] = nb
		return nil
	})
	if err != nil {
		return err
	}
	for u, nb := range adj {
		for it := nb.Iterator(); it.HasNext(); {
			w := it.Next()
			if back, ok := adj[w]; !ok || !back.Contains(u) {
				bad("edge %d→%d has no reverse", u, w)
			}
		}
	}
	if degSum != 2*v.st.Edges {
		bad("degrees sum to %d, edge count is %d", degSum, v.st.Edges)
	}
	want := map[string]*roaring.Bitmap{}
	add := func(k []byte, u uint32) {
		bm, ok := want[string(k)]
		if !ok {
			bm = roaring.New()
			want[string(k)] = bm
		}
		bm.Add(u)
	}
	deleted, err := v.Deleted()
	if err != nil {
		return err
	}
	if !deleted.IsEmpty() && deleted.Maximum() >= n {
		bad("deleted set holds node %d ≥ %d nodes", deleted.Maximum(), n)
	}
	exts := make(map[int64]uint32, n)
	var records uint32
	err = v.scan(ctx, []byte{prefixNode}, func(key, val []byte) error {
		u, err := idFromKey(key)
		if err != nil {
			return err
		}
		ext, s, y, err := decodeNodeHeader(val, dim)
		if err != nil {
			bad("node %d: %v", u, err)
			return nil
		}
		if u != records {
			bad("node records not dense: found %d, want %d", u, records)
		}
		records++
		if s < -1 || s > 1 || y < -1 || y > 1 {
			bad("node %d: sensitive %d, label %d out of range", u, s, y)
			return nil
		}
		if deleted.Contains(u) {
			if _, ok := adj[u]; ok {
				bad("deleted node %d has edges", u)
			}
			if s != Unknown || y != Unlabelled || slices.ContainsFunc(appendFeatures(nil, val), func(f float32) bool { return f != 0 }) {
				bad("deleted node %d: record is not a tombstone", u)
			}
			return nil
		}
		exts[ext] = u
		add(sensKey(s), u)
		add(labelKey(y), u)
		if y >= 0 {
			add(labelledKey(), u)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if records != n {
		bad("%d node records, state says %d nodes", records, n)
	}
	var extKeys uint32
	err = v.scan(ctx, []byte{prefixExt}, func(key, val []byte) error {
		extKeys++
		if len(key) != 9 || len(val) != 4 {
			bad("id map entry %x → %x malformed", key, val)
			return nil
		}
		ext := int64(binary.BigEndian.Uint64(key[1:]) ^ (1 << 63))
		u := binary.BigEndian.Uint32(val)
		if got, ok := exts[ext]; !ok || got != u {
			bad("id map says %d → %d, node records disagree", ext, u)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if live := uint64(n) - deleted.GetCardinality(); uint64(extKeys) != live {
		bad("%d id map entries for %d live nodes", extKeys, live)
	}
	keys := [][]byte{labelledKey()}
	for i := int8(-1); i <= 1; i++ {
		keys = append(keys, sensKey(i), labelKey(i))
	}
	for _, k := range keys {
		got, err := v.bitmap(k)
		if err != nil {
			return err
		}
		w, ok := want[string(k)]
		if !ok {
			w = roaring.New()
		}
		if !got.Equals(w) {
			bad("node set %q holds %d nodes, records imply %d", k, got.GetCardinality(), w.GetCardinality())
		}
	}
	var parts [3]*roaring.Bitmap
	for i, sp := range Splits {
		if parts[i], err = v.bitmap(splitKey(sp)); err != nil {
			return err
		}
		if !parts[i].IsEmpty() && parts[i].Maximum() >= n {
			bad("split %v holds node %d ≥ %d nodes", sp, parts[i].Maximum(), n)
		}
	}
	for i, sp := range Splits {
		if roaring.And(parts[i], deleted).GetCardinality() != 0 {
			bad("split %v holds deleted nodes", sp)
		}
	}
	if roaring.And(parts[0], parts[1]).GetCardinality()+roaring.And(parts[0], parts[2]).GetCardinality()+roaring.And(parts[1], parts[2]).GetCardinality() != 0 {
		bad("split parts overlap")
	}
	return errors.Join(errs...)
}
