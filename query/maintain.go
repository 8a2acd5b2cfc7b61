package query

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/fasd-db/fasd/index"
)

// RefreshReport says what Materialize or Refresh did.
type RefreshReport struct {
	// Subgraphs is the number of roots whose subgraph was recomputed or
	// dropped.
	Subgraphs int `json:"subgraphs"`
	// Reused is the number of those this engine classified with the
	// debiasing work the models held (model.Reuser: the training run's)
	// instead of debiasing them again; parts computed by other workers of
	// a distributed run are not counted.
	Reused int `json:"reused"`
	// Nodes is the number of node views recomputed.
	Nodes int `json:"nodes"`
	// GraphVersion is the graph version the views now reflect.
	GraphVersion uint64        `json:"graph_version"`
	Duration     time.Duration `json:"duration_ns"`
	// Complete reports whether every root of the root set has a view.
	Complete bool `json:"complete"`
	// Times splits Duration by what this process did.
	Times RefreshTimes `json:"times"`
}

// RefreshTimes splits the time of a Materialize or Refresh by stage. With
// Options.Distributed the writer is the coordinator: Fold is what it
// spends per part on top of the workers' computation, so Fold divided by
// the roots is its cost per root, and a worker's compute time per root
// (WorkReport) divided by it is the number of workers one coordinator can
// keep busy.
type RefreshTimes struct {
	// Compute is the time this process spent computing subgraphs
	// (reading samples ahead, sampling, debiasing, scoring), including the
	// free parts a coordinator computed while workers held earlier ones.
	Compute time.Duration `json:"compute_ns"`
	// Fold is the time spent reading the parts workers staged and
	// committing every chunk of records (one batch each, with the inverted
	// indexes and the root, dirty and affected sets).
	Fold time.Duration `json:"fold_ns"`
	// Wait is the time a coordinator waited for parts held by workers.
	Wait time.Duration `json:"wait_ns"`
	// Nodes is the time spent recomputing the affected node views.
	Nodes time.Duration `json:"nodes_ns"`
	// Parts is the number of chunks committed; Staged, of those, the
	// parts folded from a worker's stage (a coordinator's own computed
	// ahead included).
	Parts  int `json:"parts"`
	Staged int `json:"staged_parts"`
}

// Materialize builds every view: the subgraph record of every root of the
// root set and the view of every node they contain. It resumes where an
// interrupted run stopped (finished chunks are committed), and afterwards
// every Predict takes the cached path. It is Refresh plus the roots that
// never had a record.
func (e *Engine) Materialize(ctx context.Context) (*RefreshReport, error) {
	return e.sync(ctx, true)
}

// Refresh re-samples and re-debiases the dirty subgraphs (those an update
// may have changed) with the existing models, updates the views of the
// nodes they contained or now contain, and clears the stale marks. On
// materialized views it also computes the subgraphs of new roots and drops
// those of nodes that stopped being roots; before Materialize it only
// maintains what was computed. Full retraining stays fasd train.
func (e *Engine) Refresh(ctx context.Context) (*RefreshReport, error) {
	return e.sync(ctx, e.complete.Load())
}

func (e *Engine) sync(ctx context.Context, all bool) (*RefreshReport, error) {
	if err := e.checkWrite(); err != nil {
		return nil, err
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if err := e.check(); err != nil {
		return nil, err
	}
	start := time.Now()
	v, err := e.g.View()
	if err != nil {
		return nil, err
	}
	ver := v.Version()
	todo, err := getBitmap(e.store, keyDirty)
	if err != nil {
		v.Close()
		return nil, err
	}
	if all {
		rs, err := rootSet(v)
		if err != nil {
			v.Close()
			return nil, err
		}
		stored, err := getBitmap(e.store, keyRoots)
		if err != nil {
			v.Close()
			return nil, err
		}
		todo.Or(roaring.Xor(rs, stored))
	}
	v.Close()
	rep := &RefreshReport{Subgraphs: int(todo.GetCardinality()), GraphVersion: ver}
	nodesDone := 0
	progress := e.opts.Progress
	e.opts.Progress = func(stage string, done, total int) {
		if stage == "nodes" {
			nodesDone = total
		}
		if progress != nil {
			progress(stage, done, total)
		}
	}
	reused := e.stats.rootsReused.Load()
	e.times = &rep.Times
	err = e.recomputeRoots(ctx, todo, nil)
	e.times = nil
	e.opts.Progress = progress
	rep.Reused = int(e.stats.rootsReused.Load() - reused)
	if err != nil {
		return nil, err
	}
	rep.Nodes = nodesDone
	st, err := e.readState()
	if err != nil {
		return nil, err
	}
	dirty, err := getBitmap(e.store, keyDirty)
	if err != nil {
		return nil, err
	}
	b := e.store.NewBatch()
	defer b.Close()
	stale := e.stale.Load()
	if dirty.IsEmpty() {
		stale = roaring.New()
		st.Refreshed = ver
		if all {
			st.Complete = true
		}
	}
	if err := errors.Join(setBitmap(b, keyStale, stale), setJSON(b, keyState, &st)); err != nil {
		return nil, err
	}
	if err := b.Commit(); err != nil {
		return nil, fmt.Errorf("query: commit refresh: %w", err)
	}
	e.stale.Store(stale)
	e.complete.Store(st.Complete)
	e.refreshed.Store(st.Refreshed)
	e.stats.refreshes.Add(1)
	rep.Complete = st.Complete
	rep.Duration = time.Since(start)
	return rep, nil
}

// UpdateReport says what one Update changed.
type UpdateReport struct {
	GraphVersion uint64 `json:"graph_version"`
	EdgesAdded   int    `json:"edges_added"`
	EdgesRemoved int    `json:"edges_removed"`
	// NodesAdded are the internal ids of the new nodes, in order.
	NodesAdded []uint32 `json:"nodes_added,omitempty"`
	// NodesDeleted counts the deleted nodes.
	NodesDeleted int `json:"nodes_deleted,omitempty"`
	// Touched is the number of nodes whose adjacency or attributes changed.
	Touched int `json:"touched"`
	// Dirty is the number of subgraphs newly marked dirty; DirtyTotal all
	// dirty ones now; Stale the nodes whose view may now be out of date.
	Dirty      int `json:"dirty"`
	DirtyTotal int `json:"dirty_total"`
	Stale      int `json:"stale"`
}

// Update applies fn to the graph as one atomic update (index.Graph.Update)
// and marks dirty every stored subgraph whose sample or content can change:
//
//   - a node whose neighbour list changed dirties the roots that expanded
//     it (their sampling read that list; with induced edges every member
//     counts as expanded);
//   - a node whose features, sensitive value, label or split changed
//     dirties the roots whose subgraph contains it;
//   - a node that became or stopped being a root is dirty itself.
//
// The dirty subgraphs are re-sampled right away (sampling is cheap, the
// models do not run) so that the stale set, the old and new members of the
// dirty subgraphs, is exact. Predictions of stale nodes take the cold path
// until Refresh. The marks are committed after the graph update; if the
// process dies in between, the next Open notices the version gap and
// marks every subgraph dirty.
func (e *Engine) Update(ctx context.Context, fn func(tx *index.Tx) error) (*UpdateReport, error) {
	if err := e.checkWrite(); err != nil {
		return nil, err
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if err := e.check(); err != nil {
		return nil, err
	}
	ch, err := e.g.Update(ctx, fn)
	if err != nil {
		return nil, err
	}
	rep := &UpdateReport{GraphVersion: ch.Version, EdgesAdded: ch.EdgesAdded, EdgesRemoved: ch.EdgesRemoved,
		NodesAdded: ch.Added.ToArray(), NodesDeleted: int(ch.Deleted.GetCardinality()), Touched: int(roaring.Or(ch.Adjacency, ch.Attributes).GetCardinality())}
	if ch.Empty() {
		return rep, nil
	}
	e.stats.updates.Add(1)
	if len(ch.DeletedIDs) > 0 {
		e.forgetExternal(ch.DeletedIDs)
	}
	// Marking must not be cancelled half-way: the graph is committed.
	if err := e.markDirty(&ch, rep); err != nil {
		return rep, fmt.Errorf("query: graph updated to version %d but marking views failed (reopen to recover): %w", ch.Version, err)
	}
	return rep, nil
}

func (e *Engine) markDirty(ch *index.Change, rep *UpdateReport) error {
	v, err := e.g.View()
	if err != nil {
		return err
	}
	defer v.Close()
	newDirty := roaring.New()
	for it := ch.Adjacency.Iterator(); it.HasNext(); {
		bm, err := getBitmap(e.store, expandKey(it.Next()))
		if err != nil {
			return err
		}
		newDirty.Or(bm)
	}
	stored, err := getBitmap(e.store, keyRoots)
	if err != nil {
		return err
	}
	rs, err := rootSet(v)
	if err != nil {
		return err
	}
	for it := ch.Attributes.Iterator(); it.HasNext(); {
		u := it.Next()
		bm, err := getBitmap(e.store, containKey(u))
		if err != nil {
			return err
		}
		newDirty.Or(bm)
		if rs.Contains(u) != stored.Contains(u) {
			newDirty.Add(u)
		}
	}
	dirty, err := getBitmap(e.store, keyDirty)
	if err != nil {
		return err
	}
	newDirty.AndNot(dirty)
	stale := e.stale.Load().Clone()
	w, err := e.newWorker(v)
	if err != nil {
		return err
	}
	// The old members of newly dirty roots may lose their contribution.
	ra := newReadAhead(e.store)
	keys := make([][]byte, 0, newDirty.GetCardinality())
	for it := newDirty.Iterator(); it.HasNext(); {
		keys = append(keys, rootKey(it.Next()))
	}
	if err := ra.fetch(keys); err != nil {
		return err
	}
	for it := newDirty.Iterator(); it.HasNext(); {
		old, err := getRootRecord(ra, it.Next())
		if err != nil {
			return err
		}
		if old != nil {
			stale.AddMany(old.Members)
		}
	}
	// Every dirty root is re-sampled, also those dirty before this update:
	// their pending sample may have read a list this update changed
	// without the inverted index (which describes the stored samples)
	// knowing it.
	dirty.Or(newDirty)
	err = e.sampleRoots(w, rs, roaring.And(dirty, rs).ToArray(), func(_ uint32, m []uint32) error {
		stale.AddMany(m)
		return nil
	})
	if err != nil {
		return err
	}
	st, err := e.readState()
	if err != nil {
		return err
	}
	st.Marked = ch.Version
	b := e.store.NewBatch()
	defer b.Close()
	if err := errors.Join(setBitmap(b, keyDirty, dirty), setBitmap(b, keyStale, stale), setJSON(b, keyState, &st)); err != nil {
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	e.stale.Store(stale)
	e.version.Store(ch.Version)
	rep.Dirty = int(newDirty.GetCardinality())
	rep.DirtyTotal = int(dirty.GetCardinality())
	rep.Stale = int(stale.GetCardinality())
	return nil
}

// AddEdges adds undirected edges (internal ids) in one update.
func (e *Engine) AddEdges(ctx context.Context, edges [][2]uint32) (*UpdateReport, error) {
	return e.Update(ctx, func(tx *index.Tx) error {
		for _, ed := range edges {
			if _, err := tx.AddEdge(ed[0], ed[1]); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteNodes deletes nodes (internal ids) in one update
// (index.Tx.DeleteNode).
func (e *Engine) DeleteNodes(ctx context.Context, nodes []uint32) (*UpdateReport, error) {
	return e.Update(ctx, func(tx *index.Tx) error {
		for _, u := range nodes {
			if err := tx.DeleteNode(u); err != nil {
				return err
			}
		}
		return nil
	})
}

// RemoveEdges removes undirected edges (internal ids) in one update.
func (e *Engine) RemoveEdges(ctx context.Context, edges [][2]uint32) (*UpdateReport, error) {
	return e.Update(ctx, func(tx *index.Tx) error {
		for _, ed := range edges {
			if _, err := tx.RemoveEdge(ed[0], ed[1]); err != nil {
				return err
			}
		}
		return nil
	})
}
