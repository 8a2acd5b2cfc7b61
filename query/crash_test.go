package query

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// The crash tests interrupt Materialize, Refresh and the cold path of
// Predict at every point where they commit, in two ways:
//
//   - in-process cancellation: the context is cancelled from the Progress
//     callback, which runs right after each committed chunk, and the same
//     engine keeps serving (a server whose refresh was stopped);
//   - an injected failure: the k-th batch commit of the operation fails
//     without writing anything (failStore), the engine is dropped and a new
//     one opened over what the store holds (a process killed at that
//     point).
//
// After the interruption every read must be exact (equal to the in-memory
// oracle of the current graph) or flagged stale, Audit must count the
// stale ones, and after the resume (the same operation again) the views
// must equal a from-scratch materialization bit for bit, with the graph
// (every committed update) intact.

// errInjected is the failure failStore injects.
var errInjected = errors.New("injected commit failure")

// failStore is a storage.Store whose batch commits are counted and whose
// commit number failAt (counted from 1; 0 never) fails without writing.
type failStore struct {
	storage.Store
	commits atomic.Int64
	failAt  atomic.Int64
}

func (f *failStore) NewBatch() storage.Batch { return &failBatch{Batch: f.Store.NewBatch(), s: f} }

// arm makes the k-th commit from now fail (k ≥ 1), or disarms with k = 0.
func (f *failStore) arm(k int) {
	if k == 0 {
		f.failAt.Store(0)
		return
	}
	f.failAt.Store(f.commits.Load() + int64(k))
}

type failBatch struct {
	storage.Batch
	s *failStore
}

func (b *failBatch) Commit() error {
	if n := b.s.commits.Add(1); n == b.s.failAt.Load() {
		return errInjected
	}
	return b.Batch.Commit()
}

// crashOp is an interruptible engine operation: setup brings a fresh
// engine to the state before it (deterministically), run is the operation
// and resume what a user runs afterwards to finish it.
type crashOp struct {
	name   string
	setup  func(t *testing.T, e *Engine)
	run    func(ctx context.Context, e *Engine) error
	resume func(ctx context.Context, e *Engine) error
}

// crashUpdates applies the same few random updates to every copy.
func crashUpdates(t *testing.T, e *Engine) {
	rng := rand.New(rand.NewPCG(7, 7))
	ext := int64(1 << 20)
	stale := 0
	for range 6 {
		stale = applyRandomUpdate(t, e, rng, &ext).Stale
	}
	if stale == 0 {
		t.Fatal("the updates left no stale view; the test would check nothing")
	}
}

func materialize(ctx context.Context, e *Engine) error { _, err := e.Materialize(ctx); return err }
func refresh(ctx context.Context, e *Engine) error     { _, err := e.Refresh(ctx); return err }

var crashOps = []crashOp{
	{name: "materialize", setup: func(*testing.T, *Engine) {}, run: materialize, resume: materialize},
	{name: "materialize-after-updates", setup: func(t *testing.T, e *Engine) {
		crashUpdates(t, e)
	}, run: materialize, resume: materialize},
	{name: "refresh", setup: func(t *testing.T, e *Engine) {
		if err := materialize(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		crashUpdates(t, e)
	}, run: refresh, resume: refresh},
	{name: "cold-predict", setup: func(t *testing.T, e *Engine) {
		if err := materialize(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		crashUpdates(t, e)
	}, run: func(ctx context.Context, e *Engine) error {
		// Cold queries of every stale node, each of which commits.
		for _, u := range e.stale.Load().ToArray() {
			if _, err := e.Predict(ctx, u); err != nil {
				return err
			}
		}
		return nil
	}, resume: refresh},
}

// crashEngine opens an engine with small chunks, so that every stage
// commits several times.
func crashEngine(t *testing.T, s storage.Store, m *testModel) *Engine {
	t.Helper()
	e, err := Open("", &Options{Store: s, Model: m, Workers: 2, ChunkRoots: 9, ChunkNodes: 17})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// newCrashCase builds the graph and models every run of one op shares, on
// a failStore.
func newCrashCase(t *testing.T, op crashOp, m *testModel) (*failStore, *index.Graph, *Engine) {
	t.Helper()
	raw, _ := newTestGraph(t, 130, 4, 3.5, 41)
	fs := &failStore{Store: raw}
	e := crashEngine(t, fs, m)
	op.setup(t, e)
	return fs, e.Graph(), e
}

// checkReads checks every read path of e against the oracle o: All and
// PredictMany without computation return exact views or flag them stale,
// Audit counts exactly the flagged ones, and Predict of every node is
// exact (cold when needed) and leaves exact views behind. It returns the
// number of stale views found first.
func checkReads(t *testing.T, e *Engine, o *oracleResult, step string) int {
	t.Helper()
	ctx := context.Background()
	stale := checkViews(t, e, o, step)
	n := len(o.counts)
	nodes := make([]uint32, n)
	for i := range nodes {
		nodes[i] = uint32(i)
	}
	ps, err := e.PredictMany(ctx, nodes, false)
	if err != nil {
		t.Fatalf("%s: PredictMany: %v", step, err)
	}
	for _, p := range ps {
		if p.Source != "" && !p.Stale && !o.matches(p) {
			t.Fatalf("%s: PredictMany(cold=false) node %d: %+v not stale but wrong (oracle %v×%d)", step, p.Node, p, o.fair[2*p.Node:2*p.Node+2], o.counts[p.Node])
		}
	}
	for _, set := range []string{"test", "labelled"} {
		rep, err := e.Audit(ctx, set)
		if err != nil {
			t.Fatalf("%s: audit: %v", step, err)
		}
		want := 0
		v, err := e.Graph().View()
		if err != nil {
			t.Fatal(err)
		}
		var target *roaring.Bitmap
		if set == "test" {
			target, err = v.SplitSet(index.SplitTest)
		} else {
			target, err = v.Labelled()
		}
		if err != nil {
			t.Fatal(err)
		}
		for p, err := range e.All(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			node, err := v.Node(p.Node)
			if err != nil {
				t.Fatal(err)
			}
			if p.Stale && target.Contains(p.Node) && node.Label >= 0 && node.Sensitive >= 0 {
				want++
			}
		}
		v.Close()
		if rep.Stale != want {
			t.Fatalf("%s: audit %s counts %d stale views, All flags %d", step, set, rep.Stale, want)
		}
	}
	for u := range uint32(n) {
		p, err := e.Predict(ctx, u)
		if err != nil {
			t.Fatalf("%s: predict %d: %v", step, u, err)
		}
		switch {
		case o.counts[u] == 0 && p.Source != SourceApprox:
			t.Fatalf("%s: node %d is in no subgraph, predicted %+v", step, u, p)
		case o.counts[u] > 0 && !o.matches(p):
			debugDiff(t, e, o, u)
			t.Fatalf("%s: predict %d: %+v (stale %v), oracle %v×%d", step, u, p, p.Stale, o.fair[2*u:2*u+2], o.counts[u])
		}
	}
	checkViews(t, e, o, step+", after reads")
	return stale
}

// finish resumes op on e and checks the result against a rebuild and the
// graph against the clean run's.
func finish(t *testing.T, op crashOp, e *Engine, s storage.Store, m *testModel, cleanGraph, cleanViews, step string) {
	t.Helper()
	if err := op.resume(context.Background(), e); err != nil {
		t.Fatalf("%s: resume: %v", step, err)
	}
	if n := checkViews(t, e, oracle(t, e.Graph(), m), step+", resumed"); n != 0 || !e.complete.Load() {
		t.Fatalf("%s: %d stale views after the resume (complete %v)", step, n, e.complete.Load())
	}
	if got := storagetest.Dump(t, s, prefixViews); got != cleanGraph {
		t.Fatalf("%s: the graph differs from the clean run's:\n%s", step, firstDiff(got, cleanGraph))
	}
	if got := dumpViews(t, s); got != cleanViews {
		t.Fatalf("%s: resumed views differ from the clean run's:\n%s", step, firstDiff(got, cleanViews))
	}
}

// cleanRun runs op without interruption and returns the number of commits
// it makes and the graph and views it leaves, and checks that they equal a
// rebuild on a copy of the graph.
func cleanRun(t *testing.T, op crashOp, m *testModel) (commits int, graph, views string) {
	t.Helper()
	fs, _, e := newCrashCase(t, op, m)
	before := fs.commits.Load()
	if err := op.run(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	commits = int(fs.commits.Load() - before)
	if err := op.resume(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	fresh := crashEngine(t, copyGraph(t, fs.Store), m)
	if err := materialize(context.Background(), fresh); err != nil {
		t.Fatal(err)
	}
	graph, views = storagetest.Dump(t, fs.Store, prefixViews), dumpViews(t, fs.Store)
	if want := dumpViews(t, fresh.store); views != want {
		t.Fatalf("clean %s differs from a rebuild:\n%s", op.name, firstDiff(views, want))
	}
	return commits, graph, views
}

// TestCrashAtEveryCommit fails every commit of every operation in turn,
// reopens the engine as after a crash, checks every read, resumes and
// compares with the clean run.
//
// It runs on Pebble and on PostgreSQL (skipped without a server), whose
// commits go over the network: the engine's invariants must not depend on
// an embedded engine.
//
// On PostgreSQL it runs the operations that commit in chunks
// (materialize, refresh); the cold path, which commits once per query,
// has about ten times as many commits to fail: it passes there too, but
// took 160 s on the shared 2-core machine, and runs on Pebble only.
func TestCrashAtEveryCommit(t *testing.T) {
	onBackends(t, []storage.Backend{storage.Pebble, storage.Postgres}, func(t *testing.T) {
		ops := crashOps
		if testBackend == storage.Postgres {
			ops = crashOps[:3]
		}
		testCrashAtEveryCommit(t, ops)
	})
}

func testCrashAtEveryCommit(t *testing.T, ops []crashOp) {
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			m := newTestModel(featureNames(4), 17, true)
			commits, cleanGraph, cleanViews := cleanRun(t, op, m)
			if commits < 3 {
				t.Fatalf("the clean %s commits %d times; the test needs several", op.name, commits)
			}
			for k := 1; k <= commits; k++ {
				step := fmt.Sprintf("%s, commit %d of %d failed", op.name, k, commits)
				fs, g, e := newCrashCase(t, op, m)
				fs.arm(k)
				if err := op.run(context.Background(), e); !errors.Is(err, errInjected) {
					t.Fatalf("%s: %v, want the injected failure", step, err)
				}
				fs.arm(0)
				// The process dies: no deferred work, a new engine over
				// what the store holds.
				e.Close()
				e = crashEngine(t, fs, m)
				checkReads(t, e, oracle(t, g, m), step)
				finish(t, op, e, fs.Store, m, cleanGraph, cleanViews, step)
			}
		})
	}
}

// TestCancelAtEveryStageBoundary cancels every operation after each of its
// committed chunks (the Progress callbacks of both stages) and keeps using
// the same engine, as a server does whose refresh was stopped.
func TestCancelAtEveryStageBoundary(t *testing.T) {
	for _, op := range crashOps[:3] {
		t.Run(op.name, func(t *testing.T) {
			m := newTestModel(featureNames(4), 17, true)
			_, cleanGraph, cleanViews := cleanRun(t, op, m)
			calls := 0
			{
				_, _, e := newCrashCase(t, op, m)
				e.opts.Progress = func(string, int, int) { calls++ }
				if err := op.run(context.Background(), e); err != nil {
					t.Fatal(err)
				}
			}
			if calls < 3 {
				t.Fatalf("%s reports progress %d times; the test needs several", op.name, calls)
			}
			for k := 1; k <= calls; k++ {
				fs, g, e := newCrashCase(t, op, m)
				ctx, cancel := context.WithCancel(context.Background())
				n, at := 0, ""
				e.opts.Progress = func(stage string, done, total int) {
					if n++; n == k {
						at = fmt.Sprintf("%s %d/%d", stage, done, total)
						cancel()
					}
				}
				err := op.run(ctx, e)
				cancel()
				e.opts.Progress = nil
				step := fmt.Sprintf("%s, cancelled after %s", op.name, at)
				if k < calls && !errors.Is(err, context.Canceled) {
					t.Fatalf("%s: %v, want context.Canceled", step, err)
				}
				checkReads(t, e, oracle(t, g, m), step)
				finish(t, op, e, fs.Store, m, cleanGraph, cleanViews, step)
			}
		})
	}
}

// TestRefreshKilledInNodeStage is the regression test of a refresh
// interrupted after its subgraph stage (all new subgraphs committed, no
// node view yet): the cold path used to find no dirty subgraph left,
// serve the node's old view as exact, write it back and drop the node
// from the stale set, so that Audit counted no stale view.
func TestRefreshKilledInNodeStage(t *testing.T) {
	for _, midway := range []bool{false, true} {
		m := newTestModel(featureNames(4), 17, true)
		op := crashOps[2]
		fs, g, e := newCrashCase(t, op, m)
		ctx, cancel := context.WithCancel(context.Background())
		e.opts.Progress = func(stage string, done, total int) {
			if (!midway && stage == "subgraphs" && done == total) || (midway && stage == "nodes") {
				cancel()
			}
		}
		if err := op.run(ctx, e); !errors.Is(err, context.Canceled) {
			t.Fatalf("refresh: %v, want context.Canceled", err)
		}
		e.Close()
		e = crashEngine(t, fs, m)
		o := oracle(t, g, m)
		wrong := 0
		for p, err := range e.All(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			if !o.matches(p) {
				wrong++
				if !p.Stale {
					t.Fatalf("midway %v: node %d has an out-of-date view not flagged stale", midway, p.Node)
				}
			}
		}
		if wrong == 0 {
			t.Fatalf("midway %v: no view out of date after the interruption; the test checks nothing", midway)
		}
		if rep, err := e.Audit(context.Background(), "labelled"); err != nil || rep.Stale == 0 {
			t.Fatalf("midway %v: audit %+v, %v: want stale views counted", midway, rep, err)
		}
		for u := range uint32(len(o.counts)) {
			p, err := e.Predict(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			if o.counts[u] > 0 && (p.Source == SourceApprox || !o.matches(p)) {
				t.Fatalf("midway %v: predict %d: %+v, oracle %v×%d", midway, u, p, o.fair[2*u:2*u+2], o.counts[u])
			}
		}
	}
}

// TestMaterializeInterruptedNoApprox is the regression test of a
// materialization interrupted after its subgraph stage: a node that lies
// in several stored subgraphs but has no view yet used to be answered
// from its own subgraph (approx, Subgraphs 0).
func TestMaterializeInterruptedNoApprox(t *testing.T) {
	m := newTestModel(featureNames(4), 17, true)
	fs, g, e := newCrashCase(t, crashOps[0], m)
	ctx, cancel := context.WithCancel(context.Background())
	e.opts.Progress = func(stage string, done, total int) {
		if stage == "subgraphs" && done == total {
			cancel()
		}
	}
	if err := materialize(ctx, e); !errors.Is(err, context.Canceled) {
		t.Fatalf("materialize: %v, want context.Canceled", err)
	}
	e.Close()
	e = crashEngine(t, fs, m)
	o := oracle(t, g, m)
	in := 0
	for u := range uint32(len(o.counts)) {
		p, err := e.Predict(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		if o.counts[u] > 0 {
			in++
			if p.Source != SourceCold || !o.matches(p) {
				t.Fatalf("node %d in %d subgraphs: %+v, oracle %v", u, o.counts[u], p, o.fair[2*u:2*u+2])
			}
		}
	}
	if in == 0 {
		t.Fatal("no node in any subgraph")
	}
}
