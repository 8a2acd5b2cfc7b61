// The write phase of a load: batches of node records, adjacency and id
// map, then the final batch of node sets, split, schema and report.

package index

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/storage"
)

func (l *loader) set(k, v []byte) error {
	if err := l.batch.Set(k, v); err != nil {
		return fmt.Errorf("index: load: write: %w", err)
	}
	return nil
}

func (l *loader) del(k []byte) error {
	if err := l.batch.Delete(k); err != nil {
		return fmt.Errorf("index: load: delete: %w", err)
	}
	return nil
}

// flush commits the current batch if it is over the bounds (or if force)
// and starts a new one.
func (l *loader) flush(force bool) error {
	if !force && l.batch.Len() < l.batchBytes && l.batch.Count() < l.batchOps {
		return nil
	}
	if err := l.commit(l.batch); err != nil {
		return err
	}
	l.batch = l.store.NewBatch()
	return nil
}

// commit commits b (unless ctx is done) and counts it.
func (l *loader) commit(b storage.Batch) error {
	if err := l.ctx.Err(); err != nil {
		return err
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("index: load: commit batch %d: %w", l.nb+1, err)
	}
	l.nb++
	if l.opts.AfterCommit != nil {
		l.opts.AfterCommit(l.nb)
	}
	return nil
}

func (l *loader) write() (err error) {
	counter, err := readVersionCounter(l.store)
	if err != nil {
		return err
	}
	if st, err := readState(l.store); err == nil {
		counter = max(counter, st.Version)
	}
	if l.opts.Replace {
		// What depends on the old graph goes first.
		if err := l.dropDependents(); err != nil {
			return err
		}
	}
	l.batch = l.store.NewBatch()
	defer func() { l.batch.Close() }()
	marker, err := json.Marshal(loadMarker{Started: time.Now().UTC().Format(time.RFC3339), Source: l.describe()})
	if err != nil {
		return err
	}
	if err := l.set(keyLoading, marker); err != nil {
		return err
	}
	if err := l.flush(true); err != nil {
		return err
	}
	if l.opts.Replace {
		if err := l.deleteOld(); err != nil {
			return err
		}
	}
	sets, labelled, err := l.writeNodes()
	if err != nil {
		return err
	}
	return l.finish(counter, sets, labelled)
}

func (l *loader) describe() string {
	if l.opts.Source != "" {
		return fmt.Sprintf("%s (%s, %s)", l.opts.Source, filepath.Base(l.opts.Nodes), filepath.Base(l.opts.Edges))
	}
	return fmt.Sprintf("%s, %s", filepath.Base(l.opts.Nodes), filepath.Base(l.opts.Edges))
}

// nodeSets are the node bitmaps the loader builds in memory.
type nodeSets struct {
	sens  [3]*roaring.Bitmap // by value + 1
	label [3]*roaring.Bitmap
}

// full is a batch ready to commit; keys is how many keys it sets.
type full struct {
	b    storage.Batch
	keys int
}

// writeNodes is pass 2: it reads the node rows back from the spill and
// writes each node's record, id-map entry and adjacency bitmap. A producer
// goroutine fills batches while this goroutine commits the previous one,
// so encoding and the store's work overlap; at most three batches exist at
// a time. AfterCommit and Progress are called from this goroutine.
func (l *loader) writeNodes() (*nodeSets, []uint32, error) {
	sr, err := l.spill.Reader()
	if err != nil {
		return nil, nil, err
	}
	rr := l.table.NewSpillReader(sr)
	if l.batch.Count() > 0 { // deletions left over from deleteOld
		if err := l.commit(l.batch); err != nil {
			return nil, nil, err
		}
	}
	l.batch.Close()
	l.batch = nil
	ctx, cancel := context.WithCancel(l.ctx)
	defer cancel()
	ch := make(chan full, 1)
	sets := &nodeSets{}
	var labelled []uint32
	var perr error
	go func() {
		defer close(ch)
		perr = l.fillBatches(ctx, rr, sets, &labelled, ch)
	}()
	// Keys to write: a record and an id-map entry per node, and an adjacency
	// bitmap per node with neighbours.
	total := 2 * l.table.Rows
	for v := range l.table.Rows {
		if l.off[v+1] > l.off[v] {
			total++
		}
	}
	done := 0
	for f := range ch {
		if err != nil {
			f.b.Close() // draining after a failure
			continue
		}
		err = l.commit(f.b)
		f.b.Close()
		if err != nil {
			cancel()
			continue
		}
		done += f.keys
		if l.opts.Progress != nil {
			l.opts.Progress("write", int64(done), int64(total))
		}
	}
	l.batch = l.store.NewBatch()
	if err != nil {
		return nil, nil, err
	}
	if perr != nil {
		return nil, nil, perr
	}
	return sets, labelled, nil
}

// fillBatches fills batches and sends them on ch: first the node records
// (read from rr), then the adjacency bitmaps, then the external-id map, each
// in ascending key order so that the store appends to a sorted run instead
// of inserting at random places. It runs on its own goroutine; sets and
// labelled are handed over when ch is closed.
func (l *loader) fillBatches(ctx context.Context, rr *dump.RowReader, sets *nodeSets, labelled *[]uint32, ch chan<- full) error {
	for i := range 3 {
		sets.sens[i], sets.label[i] = roaring.New(), roaring.New()
	}
	b := l.store.NewBatch()
	defer func() { b.Close() }()
	keys := 0
	send := func() error {
		select {
		case ch <- full{b, keys}:
			b, keys = l.store.NewBatch(), 0
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	set := func(k, v []byte) error {
		if err := b.Set(k, v); err != nil {
			return fmt.Errorf("index: load: write: %w", err)
		}
		keys++
		if b.Len() >= l.batchBytes || b.Count() >= l.batchOps {
			return send()
		}
		return nil
	}
	// Node records, in row order.
	n := l.table.Rows
	ext := make([]int64, n)
	var rec []byte
	node := Node{}
	for rr.Next() {
		row := rr.Row()
		v := uint32(row.Index)
		node.ExternalID, node.Sensitive, node.Label, node.Features = row.ID, row.Sensitive, row.Label, row.Features
		ext[v] = row.ID
		sets.sens[row.Sensitive+1].Add(v)
		sets.label[row.Label+1].Add(v)
		if row.Label >= 0 {
			*labelled = append(*labelled, v)
		}
		rec = appendNodeRecord(rec[:0], &node)
		if err := set(nodeKey(v), rec); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil {
		return err
	}
	// Adjacency, in node order.
	bm := roaring.New()
	for v := range uint32(n) {
		list := l.adj[l.off[v]:l.off[v+1]]
		if len(list) == 0 {
			continue
		}
		bm.Clear()
		bm.AddMany(list)
		enc, err := encodeBitmap(bm)
		if err != nil {
			return fmt.Errorf("index: load: encode adjacency: %w", err)
		}
		if err := set(adjKey(v), enc); err != nil {
			return err
		}
	}
	// External ids, in the order of their keys (by value).
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return cmp.Compare(ext[a], ext[b]) })
	var val [4]byte
	for _, v := range order {
		binary.BigEndian.PutUint32(val[:], v)
		if err := set(extKey(ext[v]), val[:]); err != nil {
			return err
		}
	}
	if b.Count() > 0 {
		return send()
	}
	return nil
}

// finish writes the node sets, the split, the schema, the counts and the
// report, and clears the marker, in the final batch.
func (l *loader) finish(counter uint64, sets *nodeSets, labelled []uint32) error {
	sp, err := l.computeSplit(sets, labelled)
	if err != nil {
		return fmt.Errorf("index: load: split: %w", err)
	}
	if err := l.flush(true); err != nil {
		return err
	}
	put := func(k []byte, bm *roaring.Bitmap) error {
		enc, err := encodeBitmap(bm)
		if err != nil {
			return fmt.Errorf("index: load: encode node set: %w", err)
		}
		return l.set(k, enc)
	}
	for i := range 3 {
		if err := put(sensKey(int8(i-1)), sets.sens[i]); err != nil {
			return err
		}
		if err := put(labelKey(int8(i-1)), sets.label[i]); err != nil {
			return err
		}
	}
	if err := put(labelledKey(), roaring.BitmapOf(labelled...)); err != nil {
		return err
	}
	parts := [][]uint32{sp.Train, sp.Val, sp.Test}
	for i, s := range Splits {
		if err := put(splitKey(s), roaring.BitmapOf(parts[i]...)); err != nil {
			return err
		}
	}
	schema := Schema{Format: FormatVersion, Features: append([]string{}, l.table.FeatureNames...)}
	sb, err := json.Marshal(&schema)
	if err != nil {
		return err
	}
	st := state{Version: counter + 1, Nodes: uint32(l.table.Rows), Edges: uint64(l.report.Edges.Kept)}
	rep := l.report
	rep.Nodes, rep.Features = l.table.Rows, l.table.Features()
	rep.Groups = GroupCounts{G0: l.table.Groups[0], G1: l.table.Groups[1], Unknown: l.table.UnknownSensitive}
	rep.Labels = LabelCounts{Y0: l.table.Labels[0], Y1: l.table.Labels[1], Unlabelled: l.table.NumUnlabelled}
	rep.Splits = SplitCounts{Train: len(sp.Train), Val: len(sp.Val), Test: len(sp.Test)}
	rep.SplitMethod = l.opts.Split.describe()
	rep.Version = st.Version
	rep.Batches = l.nb + 1
	rep.Finished = time.Now().UTC().Format(time.RFC3339)
	rb, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	scb, err := json.Marshal(&Scaling{Scaled: l.table.Spec().Scale, Min: l.table.Min, Max: l.table.Max})
	if err != nil {
		return fmt.Errorf("index: load: encode scaling: %w", err)
	}
	for _, kv := range [][2][]byte{{keySchema, sb}, {keyState, st.encode()}, {keyVersion, encodeU64(st.Version)}, {keyLoad, rb}, {keyScaling, scb}} {
		if err := l.set(kv[0], kv[1]); err != nil {
			return err
		}
	}
	if err := l.del(keyLoading); err != nil {
		return err
	}
	return l.flush(true)
}
