package query

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query/model"
	"github.com/fasd-db/fasd/storage"
)

// ErrReadOnly is returned by every write of a replica (Options.Replica):
// Update and the calls built on it, Refresh, Materialize and Work. Writes
// go to the store's one writer.
var ErrReadOnly = errors.New("query: read-only replica: send writes to the store's writer")

// ErrStaleModels is returned (through Replica.OnError) by a replica's
// catch-up when the writer's views are of other models than the newest
// saved ones: the replica keeps its models and flags its answers stale
// until the writer's views are of the newest models.
var ErrStaleModels = errors.New("query: the writer's views are not of the newest saved models")

// Replica makes an engine a read-only replica of a store that another
// engine writes (see doc.go, "Replicas"). Zero fields take defaults.
type Replica struct {
	// Poll is the wait between two looks at the views' state record for
	// a change made by the writer; 0 means 1 s, negative means no look
	// in the background (CatchUp only). Reads never depend on it for
	// correctness: each one checks the state record itself.
	Poll time.Duration
	// OnError, if set, receives the errors of background catch-ups (the
	// next poll tries again; reads meanwhile flag their answers stale),
	// among them a failed load of the models the writer's views moved to.
	OnError func(error)
}

// replica is the follower state of a replica engine.
type replica struct {
	o   Replica
	cur atomic.Pointer[replicaState]
	mu  sync.Mutex // serialises catch-ups
	// tried is the model version of views for which the newest saved
	// models were loaded and were not theirs (or unusable): no catch-up
	// loads them again until the views move to other models. Under mu.
	tried string
	wake  chan struct{} // a read saw the state record change
	stop  chan struct{}
	done  sync.WaitGroup
	stops sync.Once
}

// replicaState is what a replica knows of the views, read in one snapshot.
type replicaState struct {
	// m are the models the replica serves with this state: a read uses
	// them and no others.
	m *models
	// token is the state record it was read with (nil: none); a read
	// whose state record differs is behind the writer. metaRec is the
	// meta record read with it, and views the model version it names
	// ("" without views).
	token, metaRec []byte
	views          string
	// fresh: the views are of m and complete, and the writer had marked
	// every update up to the graph version.
	fresh bool
	// stale are the stale nodes and those an interrupted refresh left to
	// recompute (as Open computes them for a writer).
	stale     *roaring.Bitmap
	version   uint64 // the graph version the views were marked up to
	refreshed uint64
	complete  bool
}

// freshFor reports whether u's view, read together with the state record
// stateRec, is exact for s.version.
func (s *replicaState) freshFor(u uint32, stateRec []byte) bool {
	return s.fresh && bytes.Equal(stateRec, s.token) && !s.stale.Contains(u)
}

// openReplica loads the replica's first state and starts its poller.
func (e *Engine) openReplica() error {
	o := *e.opts.Replica
	if o.Poll == 0 {
		o.Poll = time.Second
	}
	r := &replica{o: o, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	e.rep = r
	if err := e.CatchUp(); err != nil {
		return err
	}
	if o.Poll > 0 {
		r.done.Add(1)
		go r.run(e)
	}
	return nil
}

// run polls the state record until close.
func (r *replica) run(e *Engine) {
	defer r.done.Done()
	t := time.NewTicker(r.o.Poll)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		case <-r.wake:
		}
		if err := e.poll(); err != nil && r.o.OnError != nil {
			r.o.OnError(err)
		}
	}
}

// behind asks the poller to catch up now.
func (r *replica) behind() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// close stops the poller and waits for it.
func (r *replica) close() {
	r.stops.Do(func() { close(r.stop) })
	r.done.Wait()
}

// poll catches up when the state or meta record changed since the last
// catch-up (the writer reopened with other models: its views may end with
// the same state record), the views were not fresh then, some nodes were stale then (the writer's
// cold path makes a stale node's view exact and shrinks the stale set
// without a new state record), or the graph moved past the version the
// writer marked: a writer that died between a graph update and its dirty
// marks changes no state record, and the replica's views are then stale
// from this poll on.
func (e *Engine) poll() error {
	recs, err := storage.GetMany(e.store, [][]byte{keyState, keyMeta})
	if err != nil {
		return fmt.Errorf("query: replica poll: %w", err)
	}
	ver, err := e.g.Version()
	if err != nil {
		return fmt.Errorf("query: replica poll: %w", err)
	}
	if cur := e.rep.cur.Load(); cur.fresh && cur.stale.IsEmpty() && bytes.Equal(recs[0], cur.token) &&
		bytes.Equal(recs[1], cur.metaRec) && ver == cur.version {
		return nil
	}
	return e.CatchUp()
}

// CatchUp makes a replica (Options.Replica) read the state of the views
// the writer left now, instead of at its next poll; on a writer it does
// nothing. Reads are exact or flagged stale either way: CatchUp only makes
// a replica's answers fresh again sooner after a refresh.
//
// When the views are of other models than the replica's and the engine
// was opened with Options.LoadModel, CatchUp loads the newest models with
// it and, if they are the views' models, switches to them together with
// the new state (one atomic store: a read uses the old models and state
// or the new ones). A failed load keeps the old models and is returned
// (the views' answers stay flagged stale; the next catch-up tries
// again); newest models that are not the views' are returned once, and
// loaded again only when the views move to other models.
func (e *Engine) CatchUp() error {
	if e.rep == nil {
		return nil
	}
	if err := e.check(); err != nil {
		return err
	}
	e.rep.mu.Lock()
	defer e.rep.mu.Unlock()
	old := e.rep.cur.Load()
	m := e.base
	if old != nil {
		m = old.m
	}
	s, err := e.readReplicaState(m)
	if err != nil {
		return err
	}
	var loadErr error
	switch {
	case old == nil:
		// Open has just loaded the newest models: views of others are
		// older than them (or the writer's views are being rebuilt).
		e.rep.tried = s.views
	case s.views != "" && s.views != m.info.Version && s.views != e.rep.tried && e.opts.Model == nil && e.opts.LoadModel != nil:
		var nm *models
		if nm, loadErr = e.loadModels(m, s.views); nm != nil {
			if s, err = e.readReplicaState(nm); err != nil {
				return err
			}
		}
	}
	if old == nil || !bytes.Equal(old.token, s.token) {
		// A deleted node's external id may have come back as another node.
		e.extMu.Lock()
		e.extGen.Add(1)
		e.extIDs.Clear()
		e.extMu.Unlock()
	}
	e.stale.Store(s.stale)
	e.complete.Store(s.complete)
	e.version.Store(s.version)
	e.refreshed.Store(s.refreshed)
	e.rep.cur.Store(s)
	return loadErr
}

// loadModels loads the newest saved models (Options.LoadModel) for views
// of the model version views, the replica serving cur: nil and an error
// when the load fails (tried again at the next catch-up) or the models
// are not the views' or do not fit the graph (tried again when the views
// move to other models).
func (e *Engine) loadModels(cur *models, views string) (*models, error) {
	mod, err := e.opts.LoadModel(e.store)
	if err != nil {
		return nil, fmt.Errorf("query: replica: load the models of the writer's views (%.12s…), keeping %.12s…: %w", views, cur.info.Version, err)
	}
	nm, err := newModels(e.g, mod, make(chan model.Scorer, e.opts.Workers+2))
	if err == nil && nm.info.Version != views {
		err = fmt.Errorf("%w: the newest saved models are %.12s…, not those of the writer's views", ErrStaleModels, nm.info.Version)
	}
	if err != nil {
		e.rep.tried = views
		return nil, fmt.Errorf("query: replica: views of models %.12s…, keeping %.12s…: %w", views, cur.info.Version, err)
	}
	e.rep.tried = ""
	return nm, nil
}

// readReplicaState reads the meta and state records and the stale and
// affected sets in one snapshot, then the graph version: a graph version
// beyond the marked one is an update whose dirty marks are not (or not
// yet) committed, and then no view is fresh. The views are fresh only if
// they are of the models m.
func (e *Engine) readReplicaState(m *models) (*replicaState, error) {
	snap, err := e.store.NewSnapshot()
	if err != nil {
		return nil, fmt.Errorf("query: replica snapshot: %w", err)
	}
	vals, err := storage.GetMany(snap, [][]byte{keyMeta, keyState, keyStale, keyAffected})
	snap.Close()
	if err != nil {
		return nil, fmt.Errorf("query: replica read views' state: %w", err)
	}
	ver, err := e.g.Version()
	if err != nil {
		return nil, err
	}
	s := &replicaState{m: m, token: vals[1], metaRec: vals[0], stale: roaring.New(), version: ver}
	if vals[0] == nil || vals[1] == nil {
		return s, nil // no views yet: the writer has not opened the store
	}
	var have meta
	if err := json.Unmarshal(vals[0], &have); err != nil {
		return nil, fmt.Errorf("%w: meta: %w", ErrCorrupt, err)
	}
	have.migrate()
	var st state
	if err := json.Unmarshal(vals[1], &st); err != nil {
		return nil, fmt.Errorf("%w: state: %w", ErrCorrupt, err)
	}
	for i, b := range vals[2:] {
		if b == nil {
			continue
		}
		bm, err := index.DecodeBitmap(b)
		if err != nil {
			return nil, fmt.Errorf("%w: bitmap %d of the views' state: %w", ErrCorrupt, i, err)
		}
		s.stale.Or(bm)
	}
	s.views = have.Model
	want := m.wantMeta()
	ours := have.equal(&want)
	s.version, s.refreshed, s.complete = st.Marked, st.Refreshed, ours && st.Complete
	s.fresh = s.complete && st.Marked == ver
	return s, nil
}

// replicaPrediction is u's prediction from its view bytes (nil: none),
// read together with the state record stateRec; ok is false without a
// view. The answer is flagged Stale unless it is exact for the graph
// version and the models it reports.
func (e *Engine) replicaPrediction(s *replicaState, u uint32, view, stateRec []byte) (p Prediction, ok bool, err error) {
	if !bytes.Equal(stateRec, s.token) {
		e.rep.behind()
	}
	if view == nil {
		return Prediction{}, false, nil
	}
	var nv nodeView
	if err := nv.decode(view); err != nil {
		return Prediction{}, false, err
	}
	if nv.Model != s.m.tag && s.fresh {
		// A view of other models under the state record of fresh views:
		// the writer rebuilt the views with other models and ended on
		// the same state record.
		e.rep.behind()
	}
	p = e.fromView(s.m, u, &nv, SourceView)
	p.GraphVersion = s.version
	p.Stale = !s.freshFor(u, stateRec) || nv.Model != s.m.tag
	return p, true, nil
}

// replicaPredict is Predict on a replica: one request for u's view and the
// state record, nothing computed or written (an approximation for a node
// in no subgraph, as a writer gives, is computed but not stored).
func (e *Engine) replicaPredict(ctx context.Context, u uint32) (Prediction, error) {
	s := e.rep.cur.Load()
	vals, err := storage.GetMany(e.store, [][]byte{nodeKey(u), keyState})
	if err != nil {
		return Prediction{}, fmt.Errorf("query: read view of %d: %w", u, err)
	}
	p, ok, err := e.replicaPrediction(s, u, vals[0], vals[1])
	if err != nil || ok {
		if ok {
			e.stats.cached.Add(1)
		}
		return p, err
	}
	fresh := s.freshFor(u, vals[1])
	if fresh {
		// Such a rebuild deletes or replaces the meta record before any
		// view, so the meta record read after the view tells.
		rec, err := e.store.Get(keyMeta)
		if errors.Is(err, storage.ErrNotFound) {
			rec, err = nil, nil
		}
		if err != nil {
			return Prediction{}, fmt.Errorf("query: read views' meta: %w", err)
		}
		fresh = e.sameMeta(s, rec)
	}
	return e.replicaMissing(ctx, s, u, fresh, true)
}

// sameMeta reports whether the meta record rec is the one s was read
// with, and wakes the poller if not.
func (e *Engine) sameMeta(s *replicaState, rec []byte) bool {
	if bytes.Equal(rec, s.metaRec) {
		return true
	}
	e.rep.behind()
	return false
}

// replicaMissing answers for u, which has no view: an unknown or deleted
// node is an error; with fresh views u lies in no subgraph and gets, with
// approx, the approximation a writer gives; otherwise (the views are
// behind or incomplete) an empty prediction flagged Stale. fresh must
// include sameMeta: no view under the state record of fresh views means
// u lies in no subgraph, unless the views were rebuilt with other models
// and ended on the same state record (a writer of an earlier build does
// not name the models in it).
func (e *Engine) replicaMissing(ctx context.Context, s *replicaState, u uint32, fresh, approx bool) (Prediction, error) {
	v, err := e.g.View()
	if err != nil {
		return Prediction{}, err
	}
	defer v.Close()
	if err := liveNode(v, u); err != nil {
		return Prediction{}, err
	}
	if fresh && approx {
		return e.approx(ctx, s.m, v, u)
	}
	return Prediction{Node: u, Model: s.m.info.Version, GraphVersion: s.version, Stale: !fresh}, nil
}

// replicaPredictMany is PredictMany on a replica: every view and the
// state and meta records through one snapshot (one batched read on a server), then
// the missing views as replicaMissing answers them; cold only allows the
// approximation of nodes in no subgraph.
func (e *Engine) replicaPredictMany(ctx context.Context, nodes []uint32, cold bool) ([]Prediction, error) {
	s := e.rep.cur.Load()
	snap, err := e.store.NewSnapshot()
	if err != nil {
		return nil, fmt.Errorf("query: snapshot: %w", err)
	}
	keys := make([][]byte, 0, len(nodes)+1)
	for _, u := range nodes {
		keys = append(keys, nodeKey(u))
	}
	vals, err := storage.GetMany(snap, append(keys, keyState, keyMeta))
	snap.Close()
	if err != nil {
		return nil, fmt.Errorf("query: read views: %w", err)
	}
	stateRec, metaRec := vals[len(nodes)], vals[len(nodes)+1]
	out := make([]Prediction, len(nodes))
	for i, u := range nodes {
		p, ok, err := e.replicaPrediction(s, u, vals[i], stateRec)
		if err != nil {
			return nil, err
		}
		if !ok {
			fresh := s.freshFor(u, stateRec) && e.sameMeta(s, metaRec)
			if p, err = e.replicaMissing(ctx, s, u, fresh, cold); err != nil {
				return nil, err
			}
		} else {
			e.stats.cached.Add(1)
		}
		out[i] = p
	}
	return out, nil
}

// staleness returns the stale set and whether the views are complete as
// a reader of snap with the models m must take them: the engine's own on
// a writer; on a replica its last catch-up's, with every view stale when
// snap's state record differs from the one that catch-up read or the
// replica has switched from m to other models.
func (e *Engine) staleness(snap storage.Reader, m *models) (stale *roaring.Bitmap, complete bool, err error) {
	if e.rep == nil {
		return e.stale.Load(), e.complete.Load(), nil
	}
	s := e.rep.cur.Load()
	rec, err := snap.Get(keyState)
	if errors.Is(err, storage.ErrNotFound) {
		rec, err = nil, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("query: read views' state: %w", err)
	}
	if !bytes.Equal(rec, s.token) {
		e.rep.behind()
		return s.stale, false, nil
	}
	return s.stale, s.fresh && s.m == m, nil
}

// checkWrite refuses writes on a replica, then checks the engine is open.
func (e *Engine) checkWrite() error {
	if e.rep != nil {
		return ErrReadOnly
	}
	return e.check()
}
