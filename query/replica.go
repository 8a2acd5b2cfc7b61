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
	"github.com/fasd-db/fasd/storage"
)

// ErrReadOnly is returned by every write of a replica (Options.Replica):
// Update and the calls built on it, Refresh, Materialize and Work. Writes
// go to the store's one writer.
var ErrReadOnly = errors.New("query: read-only replica: send writes to the store's writer")

// Replica makes an engine a read-only replica of a store that another
// engine writes (see doc.go, "Replicas"). Zero fields take defaults.
type Replica struct {
	// Poll is the wait between two looks at the views' state record for
	// a change made by the writer; 0 means 1 s, negative means no look
	// in the background (CatchUp only). Reads never depend on it for
	// correctness: each one checks the state record itself.
	Poll time.Duration
	// OnError, if set, receives the errors of background catch-ups (the
	// next poll tries again; reads meanwhile flag their answers stale).
	OnError func(error)
}

// replica is the follower state of a replica engine.
type replica struct {
	o     Replica
	cur   atomic.Pointer[replicaState]
	mu    sync.Mutex    // serialises catch-ups
	wake  chan struct{} // a read saw the state record change
	stop  chan struct{}
	done  sync.WaitGroup
	stops sync.Once
}

// replicaState is what a replica knows of the views, read in one snapshot.
type replicaState struct {
	// token is the state record it was read with (nil: none); a read
	// whose state record differs is behind the writer.
	token []byte
	// fresh: the views are of this engine's models and complete, and
	// the writer had marked every update up to the graph version.
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

// poll catches up when the state record changed since the last catch-up,
// the views were not fresh then, some nodes were stale then (the writer's
// cold path makes a stale node's view exact and shrinks the stale set
// without a new state record), or the graph moved past the version the
// writer marked: a writer that died between a graph update and its dirty
// marks changes no state record, and the replica's views are then stale
// from this poll on.
func (e *Engine) poll() error {
	rec, err := e.store.Get(keyState)
	if errors.Is(err, storage.ErrNotFound) {
		rec, err = nil, nil
	}
	if err != nil {
		return fmt.Errorf("query: replica poll: %w", err)
	}
	ver, err := e.g.Version()
	if err != nil {
		return fmt.Errorf("query: replica poll: %w", err)
	}
	if cur := e.rep.cur.Load(); cur.fresh && cur.stale.IsEmpty() && bytes.Equal(rec, cur.token) && ver == cur.version {
		return nil
	}
	return e.CatchUp()
}

// CatchUp makes a replica (Options.Replica) read the state of the views
// the writer left now, instead of at its next poll; on a writer it does
// nothing. Reads are exact or flagged stale either way: CatchUp only makes
// a replica's answers fresh again sooner after a refresh.
func (e *Engine) CatchUp() error {
	if e.rep == nil {
		return nil
	}
	if err := e.check(); err != nil {
		return err
	}
	e.rep.mu.Lock()
	defer e.rep.mu.Unlock()
	s, err := e.readReplicaState()
	if err != nil {
		return err
	}
	if old := e.rep.cur.Load(); old == nil || !bytes.Equal(old.token, s.token) {
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
	return nil
}

// readReplicaState reads the meta and state records and the stale and
// affected sets in one snapshot, then the graph version: a graph version
// beyond the marked one is an update whose dirty marks are not (or not
// yet) committed, and then no view is fresh.
func (e *Engine) readReplicaState() (*replicaState, error) {
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
	s := &replicaState{token: vals[1], stale: roaring.New(), version: ver}
	if vals[0] == nil || vals[1] == nil {
		return s, nil // no views yet: the writer has not opened the store
	}
	var m meta
	if err := json.Unmarshal(vals[0], &m); err != nil {
		return nil, fmt.Errorf("%w: meta: %w", ErrCorrupt, err)
	}
	m.migrate()
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
	want := e.wantMeta()
	ours := m.equal(&want)
	s.version, s.refreshed, s.complete = st.Marked, st.Refreshed, ours && st.Complete
	s.fresh = s.complete && st.Marked == ver
	return s, nil
}

// replicaPrediction is u's prediction from its view bytes (nil: none),
// read together with the state record stateRec; ok is false without a
// view. The answer is flagged Stale unless it is exact for the graph
// version it reports.
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
	p = e.fromView(u, &nv, SourceView)
	p.GraphVersion = s.version
	p.Stale = !s.freshFor(u, stateRec) || nv.Model != e.tag
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
	return e.replicaMissing(ctx, s, u, s.freshFor(u, vals[1]), true)
}

// replicaMissing answers for u, which has no view: an unknown or deleted
// node is an error; with fresh views u lies in no subgraph and gets, with
// approx, the approximation a writer gives; otherwise (the views are
// behind or incomplete) an empty prediction flagged Stale.
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
		return e.approx(ctx, v, u)
	}
	return Prediction{Node: u, Model: e.info.Version, GraphVersion: s.version, Stale: !fresh}, nil
}

// replicaPredictMany is PredictMany on a replica: every view and the
// state record through one snapshot (one batched read on a server), then
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
	vals, err := storage.GetMany(snap, append(keys, keyState))
	snap.Close()
	if err != nil {
		return nil, fmt.Errorf("query: read views: %w", err)
	}
	stateRec := vals[len(nodes)]
	out := make([]Prediction, len(nodes))
	for i, u := range nodes {
		p, ok, err := e.replicaPrediction(s, u, vals[i], stateRec)
		if err != nil {
			return nil, err
		}
		if !ok {
			if p, err = e.replicaMissing(ctx, s, u, s.freshFor(u, stateRec), cold); err != nil {
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
// a reader of snap must take them: the engine's own on a writer; on a
// replica its last catch-up's, with every view stale when snap's state
// record differs from the one that catch-up read.
func (e *Engine) staleness(snap storage.Reader) (stale *roaring.Bitmap, complete bool, err error) {
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
	return s.stale, s.fresh, nil
}

// checkWrite refuses writes on a replica, then checks the engine is open.
func (e *Engine) checkWrite() error {
	if e.rep != nil {
		return ErrReadOnly
	}
	return e.check()
}
