package query

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/storage"
)

// Source says how a prediction was obtained.
type Source string

const (
	// SourceView: read from the materialized view of the node.
	SourceView Source = "view"
	// SourceCold: computed at query time (the node's view was missing or
	// stale): the subgraphs that contain the node and were dirty or never
	// computed were sampled, debiased and classified, written back, and
	// the node's view recomputed. The answer is exact.
	SourceCold Source = "cold"
	// SourceApprox: no subgraph of the root set contains the node (say an
	// unlabelled node far from every root, or one just added). The answer
	// is f's probabilities for the node as root of its own debiased
	// subgraph, an approximation that is not stored; Subgraphs is 0.
	SourceApprox Source = "approx"
)

// Prediction is the fair prediction of one node.
type Prediction struct {
	Node uint32 `json:"node"`
	// ID is the node's external id (filled in by the external-id calls).
	ID int64 `json:"id"`
	// Class is 1 iff Probs[1] exceeds the models' decision threshold
	// (chosen on the validation nodes by classifier.decision at training;
	// 0.5 under "half", the paper's rule).
	Class int        `json:"class"`
	Probs [2]float64 `json:"probs"`
	// Subgraphs is the number of subgraphs whose probabilities were
	// averaged.
	Subgraphs int `json:"subgraphs"`
	// Variants are the probabilities of the model's other variants (for
	// the trained FASD models, "no_diffusion": the w/o-Diffusion
	// classifier on the clean subgraphs), averaged over the same
	// subgraphs, by name; nil when the model has only the served one.
	Variants map[string][2]float64 `json:"variants,omitempty"`
	Model    string                `json:"model"`
	// ViewVersion is the graph version the prediction was computed at;
	// GraphVersion the current one. An unaffected view stays valid across
	// updates, so ViewVersion < GraphVersion alone does not mean stale.
	ViewVersion  uint64 `json:"view_version"`
	GraphVersion uint64 `json:"graph_version"`
	// Stale reports that an update since the view was computed may have
	// changed it (only PredictMany and All return stale views; Predict
	// recomputes them).
	Stale  bool   `json:"stale"`
	Source Source `json:"source"`
}

// fromView is u's prediction from its view nv, as the models m read it.
func (e *Engine) fromView(m *models, u uint32, nv *nodeView, src Source) Prediction {
	p := Prediction{
		Node: u, Probs: nv.Probs[0], Subgraphs: int(nv.Count), Model: m.info.Version,
		ViewVersion: nv.Version, GraphVersion: e.version.Load(), Source: src,
		Variants: m.otherVariants(nv.Probs),
	}
	p.Class = m.info.ClassOf(p.Probs[1])
	return p
}

// cached returns the view of u if it can be served: the views are complete,
// u is not stale, and its view exists and was made by the current models.
func (e *Engine) cached(r storage.Reader, u uint32) (Prediction, bool, error) {
	if !e.complete.Load() || e.stale.Load().Contains(u) {
		return Prediction{}, false, nil
	}
	b, err := r.Get(nodeKey(u))
	if errors.Is(err, storage.ErrNotFound) {
		return Prediction{}, false, nil
	}
	if err != nil {
		return Prediction{}, false, fmt.Errorf("query: read view of %d: %w", u, err)
	}
	var nv nodeView
	if err := nv.decode(b); err != nil {
		return Prediction{}, false, err
	}
	if nv.Model != e.tag {
		return Prediction{}, false, nil
	}
	return e.fromView(e.base, u, &nv, SourceView), true, nil
}

// Predict returns the fair prediction of node u (internal id).
//
// Cached path: one read of u's view (no lock, no snapshot beyond the
// engine's point read), when the views are materialized and u is not
// stale. Otherwise the cold path (SourceCold, exact, written back; or
// SourceApprox when no subgraph contains u) runs under the writer lock.
func (e *Engine) Predict(ctx context.Context, u uint32) (Prediction, error) {
	if err := e.check(); err != nil {
		return Prediction{}, err
	}
	if e.rep != nil {
		return e.replicaPredict(ctx, u)
	}
	p, ok, err := e.cached(e.store, u)
	if err != nil || ok {
		if ok {
			e.stats.cached.Add(1)
		}
		return p, err
	}
	return e.cold(ctx, u)
}

// PredictExternal is Predict by external id.
func (e *Engine) PredictExternal(ctx context.Context, id int64) (Prediction, error) {
	u, err := e.internalID(id)
	if err != nil {
		return Prediction{}, err
	}
	p, err := e.Predict(ctx, u)
	p.ID = id
	return p, err
}

// internalID maps an external id to the internal one. Found ids are cached
// until the node is deleted (forgetExternal).
func (e *Engine) internalID(id int64) (uint32, error) {
	if u, ok := e.extIDs.Load(id); ok {
		return u.(uint32), nil
	}
	gen := e.extGen.Load()
	v, err := e.g.View()
	if err != nil {
		return 0, err
	}
	defer v.Close()
	u, err := v.InternalID(id)
	if errors.Is(err, index.ErrUnknownID) {
		return 0, fmt.Errorf("%w: external id %d", ErrUnknownNode, id)
	}
	if err == nil {
		e.rememberExternal(id, u, gen)
	}
	return u, err
}

// cold computes u's prediction at query time (see SourceCold). The caller
// does not hold e.wmu.
func (e *Engine) cold(ctx context.Context, u uint32) (Prediction, error) {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if err := e.check(); err != nil {
		return Prediction{}, err
	}
	// A writer may have refreshed u while we waited.
	if p, ok, err := e.cached(e.store, u); err != nil || ok {
		return p, err
	}
	v, err := e.g.View()
	if err != nil {
		return Prediction{}, err
	}
	defer v.Close()
	if err := liveNode(v, u); err != nil {
		return Prediction{}, err
	}
	cand, err := e.coldCandidates(v, u)
	if err != nil {
		return Prediction{}, err
	}
	// u's view is exact once every subgraph that contains u is current
	// (the candidates) and u's average was recomputed from them after the
	// last of those subgraphs changed. An interrupted Materialize or
	// Refresh leaves u in the affected set when it committed new
	// subgraphs of u but not yet u's view: then u's view is recomputed
	// even when no candidate remains.
	if !cand.IsEmpty() {
		err = e.recomputeRoots(ctx, cand, roaring.BitmapOf(u))
	} else {
		err = e.recomputeAffected(ctx, v.Version(), roaring.BitmapOf(u))
	}
	if err != nil {
		return Prediction{}, err
	}
	b, err := e.store.Get(nodeKey(u))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return e.approx(ctx, e.base, v, u)
	case err != nil:
		return Prediction{}, fmt.Errorf("query: read view of %d: %w", u, err)
	}
	var nv nodeView
	if err := nv.decode(b); err != nil {
		return Prediction{}, err
	}
	if e.complete.Load() {
		// Every dirty subgraph that contains u, before or after its
		// update, was just recomputed: u's view is exact now.
		if stale := e.stale.Load(); stale.Contains(u) {
			ns := stale.Clone()
			ns.Remove(u)
			wb := e.store.NewBatch()
			defer wb.Close()
			if err := setBitmap(wb, keyStale, ns); err != nil {
				return Prediction{}, err
			}
			if err := wb.Commit(); err != nil {
				return Prediction{}, fmt.Errorf("query: commit stale set: %w", err)
			}
			e.stale.Store(ns)
		}
	}
	e.stats.cold.Add(1)
	return e.fromView(e.base, u, &nv, SourceCold), nil
}

// coldCandidates returns the roots to recompute so that u's view becomes
// exact: the dirty roots whose old subgraph contains u, the dirty or
// missing roots whose current sample contains u; before Materialize, the
// missing candidates are the roots within Depth hops of u (members of an
// Algorithm 3 or hop subgraph lie within Depth hops of its root).
func (e *Engine) coldCandidates(v *index.View, u uint32) (*roaring.Bitmap, error) {
	sets, err := getBitmaps(e.store, keyDirty, keyRoots)
	if err != nil {
		return nil, err
	}
	dirty, stored := sets[0], sets[1]
	rs, err := rootSet(v)
	if err != nil {
		return nil, err
	}
	contains, err := getBitmap(e.store, containKey(u))
	if err != nil {
		return nil, err
	}
	cand := roaring.And(contains, dirty)
	check := dirty.Clone()
	missing := roaring.AndNot(rs, stored)
	if !e.complete.Load() {
		ball, err := v.Ball(u, e.info.Sample.Depth)
		if err != nil {
			return nil, err
		}
		missing.And(ball)
	}
	check.Or(missing)
	check.And(rs)
	w, err := e.newWorker(v)
	if err != nil {
		return nil, err
	}
	err = e.sampleRoots(w, rs, check.ToArray(), func(r uint32, m []uint32) error {
		for _, x := range m {
			if x == u {
				cand.Add(r)
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cand, nil
}

// approx predicts u from its own subgraph with the models m (see
// SourceApprox).
func (e *Engine) approx(ctx context.Context, m *models, v *index.View, u uint32) (Prediction, error) {
	w, err := e.modelWorker(v, m)
	if err != nil {
		return Prediction{}, err
	}
	defer w.release()
	if err := w.contribute(ctx, u); err != nil {
		return Prediction{}, err
	}
	probs := make([][2]float64, len(w.out.Probs))
	for k, ps := range w.out.Probs {
		probs[k] = [2]float64{float64(ps[0]), float64(ps[1])}
	}
	p := Prediction{
		Node: u, Probs: probs[0], Model: m.info.Version, Variants: m.otherVariants(probs),
		ViewVersion: v.Version(), GraphVersion: v.Version(), Source: SourceApprox,
	}
	p.Class = m.info.ClassOf(p.Probs[1])
	e.stats.approx.Add(1)
	return p, nil
}

// PredictMany predicts several nodes: every view that can be served is
// read through one snapshot, the others take the cold path one by one.
// With cold false, missing views are reported as errors wrapping
// ErrUnknownNode (out of range) or returned with Subgraphs 0 and Source
// "" (no view), and stale views are returned marked Stale, without any
// computation.
func (e *Engine) PredictMany(ctx context.Context, nodes []uint32, cold bool) ([]Prediction, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if e.rep != nil {
		return e.replicaPredictMany(ctx, nodes, cold)
	}
	snap, err := e.store.NewSnapshot()
	if err != nil {
		return nil, fmt.Errorf("query: snapshot: %w", err)
	}
	out := make([]Prediction, len(nodes))
	var todo []int
	var nv nodeView
	stale := e.stale.Load()
	for i, u := range nodes {
		p, ok, err := e.cached(snap, u)
		if err != nil {
			snap.Close()
			return nil, err
		}
		if ok {
			out[i] = p
			continue
		}
		if !cold {
			b, err := snap.Get(nodeKey(u))
			if err == nil && nv.decode(b) == nil {
				out[i] = e.fromView(e.base, u, &nv, SourceView)
				out[i].Stale = stale.Contains(u) || !e.complete.Load()
				continue
			}
			out[i] = Prediction{Node: u, Model: e.info.Version, GraphVersion: e.version.Load()}
			continue
		}
		todo = append(todo, i)
	}
	snap.Close()
	e.stats.cached.Add(int64(len(nodes) - len(todo)))
	for _, i := range todo {
		p, err := e.cold(ctx, nodes[i])
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// PredictManyExternal is PredictMany by external ids; the predictions
// carry the ids. An unknown id fails the call with ErrUnknownNode.
func (e *Engine) PredictManyExternal(ctx context.Context, ids []int64, cold bool) ([]Prediction, error) {
	nodes := make([]uint32, len(ids))
	for i, id := range ids {
		u, err := e.internalID(id)
		if err != nil {
			return nil, err
		}
		nodes[i] = u
	}
	ps, err := e.PredictMany(ctx, nodes, cold)
	if err != nil {
		return nil, err
	}
	for i := range ps {
		ps[i].ID = ids[i]
	}
	return ps, nil
}

// All streams the stored view of every node, in node order, through one
// snapshot; stale views are marked Stale. It computes nothing.
func (e *Engine) All(ctx context.Context) iter.Seq2[Prediction, error] {
	return e.all(ctx, e.models())
}

// all is All as the models m read the views: on a replica that has
// switched to other models since m, every view is marked Stale.
func (e *Engine) all(ctx context.Context, m *models) iter.Seq2[Prediction, error] {
	return func(yield func(Prediction, error) bool) {
		if err := e.check(); err != nil {
			yield(Prediction{}, err)
			return
		}
		snap, err := e.store.NewSnapshot()
		if err != nil {
			yield(Prediction{}, fmt.Errorf("query: snapshot: %w", err))
			return
		}
		defer snap.Close()
		p := famPrefix(famNode)
		it, err := snap.NewIter(p, []byte{prefixViews, famNode + 1})
		if err != nil {
			yield(Prediction{}, err)
			return
		}
		defer it.Close()
		stale, complete, err := e.staleness(snap, m)
		if err != nil {
			yield(Prediction{}, err)
			return
		}
		var nv nodeView
		for ok := it.First(); ok; ok = it.Next() {
			if err := ctx.Err(); err != nil {
				yield(Prediction{}, err)
				return
			}
			u, err := idOf(it.Key())
			if err == nil {
				var b []byte
				if b, err = it.Value(); err == nil {
					err = nv.decode(b)
				}
			}
			if err != nil {
				yield(Prediction{}, err)
				return
			}
			pr := e.fromView(m, u, &nv, SourceView)
			pr.Stale = !complete || stale.Contains(u) || nv.Model != m.tag
			if !yield(pr, nil) {
				return
			}
		}
		if err := it.Err(); err != nil {
			yield(Prediction{}, err)
		}
	}
}

// Status summarises the state of the views.
type Status struct {
	Model        string `json:"model"`
	GraphVersion uint64 `json:"graph_version"`
	// Refreshed is the graph version of the last full refresh.
	Refreshed  uint64 `json:"refreshed"`
	Complete   bool   `json:"complete"`
	Roots      int    `json:"roots"`
	DirtyRoots int    `json:"dirty_roots"`
	StaleNodes int    `json:"stale_nodes"`
}

// Status reports the state of the views.
func (e *Engine) Status() (Status, error) {
	if err := e.check(); err != nil {
		return Status{}, err
	}
	snap, err := e.store.NewSnapshot()
	if err != nil {
		return Status{}, err
	}
	defer snap.Close()
	sets, err := getBitmaps(snap, keyRoots, keyDirty)
	if err != nil {
		return Status{}, err
	}
	stored, dirty := sets[0], sets[1]
	return Status{
		Model: e.models().info.Version, GraphVersion: e.version.Load(), Refreshed: e.refreshed.Load(),
		Complete: e.complete.Load(), Roots: int(stored.GetCardinality()),
		DirtyRoots: int(dirty.GetCardinality()), StaleNodes: int(e.stale.Load().GetCardinality()),
	}, nil
}

var _ fasd.NodeSource = (*viewNodes)(nil)

// liveNode checks that u is a node of the graph version v that was not
// deleted (an error wrapping ErrUnknownNode otherwise).
func liveNode(v *index.View, u uint32) error {
	if int64(u) >= int64(v.NumNodes()) {
		return fmt.Errorf("%w: %d (graph has %d nodes)", ErrUnknownNode, u, v.NumNodes())
	}
	del, err := v.IsDeleted(u)
	if err == nil && del {
		err = fmt.Errorf("%w: %d was deleted", ErrUnknownNode, u)
	}
	return err
}
