package query

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query/querytest"
	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/postgres/pgtest"
)

// readOnlyStore is the writer's store as a replica in this process sees
// it: reads pass through, every commit fails and is counted.
type readOnlyStore struct {
	storage.Store
	commits atomic.Int64
}

func (s *readOnlyStore) NewBatch() storage.Batch {
	return &refusedBatch{Batch: s.Store.NewBatch(), s: s}
}

type refusedBatch struct {
	storage.Batch
	s *readOnlyStore
}

func (b *refusedBatch) Commit() error {
	b.s.commits.Add(1)
	b.Batch.Close()
	return storage.ErrReadOnly
}

func openReplica(t *testing.T, s storage.Store, m *testModel, poll time.Duration) *Engine {
	t.Helper()
	e, err := Open("", &Options{Store: s, Model: m, Workers: 1, Replica: &Replica{Poll: poll}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// replicaReads reads every node of the graph through Predict, PredictMany
// (with and without cold) and All on the replica r and checks that each
// answer that is not flagged stale is exact by the oracle o of the graph
// at version ver, and reports it at that version. It returns the number
// of stale answers of Predict and the answers themselves.
func replicaReads(t *testing.T, r *Engine, o *oracleResult, ver uint64, step string) (stale int, ps []Prediction) {
	t.Helper()
	ctx := context.Background()
	n := len(o.counts)
	nodes := make([]uint32, n)
	for i := range nodes {
		nodes[i] = uint32(i)
	}
	check := func(how string, p Prediction) {
		t.Helper()
		switch {
		case p.Stale:
		case p.Source == SourceApprox:
			if o.counts[p.Node] != 0 {
				t.Fatalf("%s: %s node %d: approximation for a node in %d subgraphs", step, how, p.Node, o.counts[p.Node])
			}
		case p.Source == "":
			if o.counts[p.Node] != 0 {
				t.Fatalf("%s: %s node %d: no view and not stale, but in %d subgraphs", step, how, p.Node, o.counts[p.Node])
			}
		case !o.matches(p) || p.GraphVersion != ver:
			t.Fatalf("%s: %s node %d: %v×%d at version %d presented as fresh, exact is %v×%d at version %d",
				step, how, p.Node, p.Probs, p.Subgraphs, p.GraphVersion, o.fair[2*p.Node:2*p.Node+2], o.counts[p.Node], ver)
		}
	}
	for _, u := range nodes {
		p, err := r.Predict(ctx, u)
		if err != nil {
			t.Fatalf("%s: Predict %d: %v", step, u, err)
		}
		check("Predict", p)
		if p.Stale {
			stale++
		}
		ps = append(ps, p)
	}
	for _, cold := range []bool{false, true} {
		many, err := r.PredictMany(ctx, nodes, cold)
		if err != nil {
			t.Fatalf("%s: PredictMany: %v", step, err)
		}
		for _, p := range many {
			check("PredictMany", p)
		}
	}
	for p, err := range r.All(ctx) {
		if err != nil {
			t.Fatalf("%s: All: %v", step, err)
		}
		check("All", p)
	}
	return stale, ps
}

// TestReplica_FollowsWriter: a replica in the writer's process, on the
// writer's store, reads the writer's exact views, flags every answer stale
// while it is behind (after an update, an interrupted refresh and a
// refresh, before it catches up), follows them when it catches up, and
// writes nothing.
func TestReplica_FollowsWriter(t *testing.T) {
	onEveryBackend(t, func(t *testing.T) {
		ctx := context.Background()
		s, g := newTestGraph(t, 150, 4, 4, 1)
		m := newTestModel(featureNames(4), 11, false)
		w := openEngine(t, s, m)
		if _, err := w.Materialize(ctx); err != nil {
			t.Fatal(err)
		}
		ro := &readOnlyStore{Store: s}
		r := openReplica(t, ro, m, -1)
		o0 := oracle(t, g, m)
		v0 := w.version.Load()
		stale, before := replicaReads(t, r, o0, v0, "materialized")
		if stale != 0 {
			t.Fatalf("materialized: %d answers stale, want 0", stale)
		}

		// An update: the replica is behind until it catches up.
		rng := rand.New(rand.NewPCG(3, 4))
		var edges [][2]uint32
		for len(edges) < 12 {
			if a, b := uint32(rng.IntN(150)), uint32(rng.IntN(150)); a != b {
				edges = append(edges, [2]uint32{a, b})
			}
		}
		if _, err := w.AddEdges(ctx, edges); err != nil {
			t.Fatal(err)
		}
		o1 := oracle(t, g, m)
		v1 := w.version.Load()
		behind := func(step string) {
			t.Helper()
			stale, ps := replicaReads(t, r, o1, v1, step)
			if want := len(ps); stale != want {
				t.Fatalf("%s: %d of %d answers stale while the replica is behind, want all", step, stale, want)
			}
		}
		behind("updated, replica behind")
		if err := r.CatchUp(); err != nil {
			t.Fatal(err)
		}
		stale, _ = replicaReads(t, r, o1, v1, "updated, replica caught up")
		if want := int(w.stale.Load().GetCardinality()); stale == 0 || stale > want {
			t.Fatalf("updated: %d answers stale, want between 1 and the writer's %d stale nodes", stale, want)
		}

		// A refresh interrupted after its first chunk: exact or flagged.
		cctx, cancel := context.WithCancel(ctx)
		w.opts.Progress = func(stage string, done, total int) {
			if stage == "subgraphs" && done > 0 {
				cancel()
			}
		}
		if _, err := w.Refresh(cctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted refresh: %v", err)
		}
		w.opts.Progress = nil
		if err := r.CatchUp(); err != nil {
			t.Fatal(err)
		}
		replicaReads(t, r, o1, v1, "refresh interrupted")

		// The refresh: behind until caught up, then every answer fresh and
		// equal to the writer's.
		if _, err := w.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		behind("refreshed, replica behind")
		if err := r.CatchUp(); err != nil {
			t.Fatal(err)
		}
		stale, after := replicaReads(t, r, o1, v1, "refreshed, replica caught up")
		if stale != 0 {
			t.Fatalf("refreshed: %d answers stale, want 0", stale)
		}
		changed := 0
		for u, p := range after {
			wp, err := w.Predict(ctx, uint32(u))
			if err != nil {
				t.Fatal(err)
			}
			if wp.Probs != p.Probs || wp.Subgraphs != p.Subgraphs || wp.GraphVersion != p.GraphVersion {
				t.Fatalf("node %d: replica %+v, writer %+v", u, p, wp)
			}
			if p.Probs != before[u].Probs {
				changed++
			}
		}
		if changed == 0 {
			t.Fatal("no answer changed after the update and refresh: the test shows nothing")
		}

		// Writes are refused; nothing was committed.
		if _, err := r.AddEdges(ctx, edges[:1]); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("AddEdges on a replica: %v, want ErrReadOnly", err)
		}
		if _, err := r.Refresh(ctx); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("Refresh on a replica: %v, want ErrReadOnly", err)
		}
		if _, err := r.Materialize(ctx); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("Materialize on a replica: %v, want ErrReadOnly", err)
		}
		if _, err := r.ApplyExternal(ctx, ExternalUpdate{Delete: []int64{1000}}); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("ApplyExternal on a replica: %v, want ErrReadOnly", err)
		}
		if _, err := r.Work(ctx, nil, false); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("Work on a replica: %v, want ErrReadOnly", err)
		}
		if n := ro.commits.Load(); n != 0 {
			t.Fatalf("the replica committed %d batches", n)
		}
	})
}

// TestReplica_BeforeMaterialize: a replica opened on a store whose writer
// has not materialized yet answers stale (and writes nothing), and its
// poller picks the views up once they exist.
func TestReplica_BeforeMaterialize(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 120, 4, 4, 2)
	m := newTestModel(featureNames(4), 5, false)
	ro := &readOnlyStore{Store: s}
	r := openReplica(t, ro, m, 5*time.Millisecond)
	if p, err := r.Predict(ctx, 3); err != nil || !p.Stale {
		t.Fatalf("before any views: %+v, %v; want a stale answer", p, err)
	}
	w := openEngine(t, s, m)
	if _, err := w.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	o := oracle(t, g, m)
	deadline := time.Now().Add(10 * time.Second)
	for {
		stale, _ := replicaReads(t, r, o, w.version.Load(), "polling")
		if stale == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica still answers %d nodes stale 10 s after the materialize", stale)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := ro.commits.Load(); n != 0 {
		t.Fatalf("the replica committed %d batches", n)
	}
}

// TestReplica_SharedPostgres: a replica on its own shared handle of a
// PostgreSQL table (as fasd serve --replica opens it) reads while the
// writer updates and refreshes: every answer is exact for the graph
// version it reports or flagged stale, and the replica's poller follows
// the refresh to the new exact values.
func TestReplica_SharedPostgres(t *testing.T) {
	dsn, s := pgtest.Open(t, &storage.Options{NoSync: true})
	ctx := context.Background()
	g := querytest.NewGraph(t, s, 150, 4, 4, 1)
	m := newTestModel(featureNames(4), 11, false)
	w := openEngine(t, s, m)
	if _, err := w.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	oracles := map[uint64]*oracleResult{w.version.Load(): oracle(t, g, m)}
	rs, err := storage.Open(dsn, &storage.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Close() })
	r := openReplica(t, rs, m, 10*time.Millisecond)

	// A reader checks every answer against the oracle of the version it
	// reports while the writer updates and refreshes.
	var mu sync.Mutex
	stop := make(chan struct{})
	var reads, fresh atomic.Int64
	done := make(chan error, 1)
	go func() {
		rng := rand.New(rand.NewPCG(9, 9))
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			u := uint32(rng.IntN(150))
			p, err := r.Predict(ctx, u)
			if err != nil {
				done <- err
				return
			}
			reads.Add(1)
			if p.Stale || p.Source != SourceView {
				continue
			}
			mu.Lock()
			o := oracles[p.GraphVersion]
			mu.Unlock()
			if o == nil || !o.matches(p) {
				done <- errors.New("an answer not flagged stale is not exact for the version it reports")
				return
			}
			fresh.Add(1)
		}
	}()
	rng := rand.New(rand.NewPCG(3, 4))
	var edges [][2]uint32
	for len(edges) < 12 {
		if a, b := uint32(rng.IntN(150)), uint32(rng.IntN(150)); a != b {
			edges = append(edges, [2]uint32{a, b})
		}
	}
	// The oracle of the coming version is known before the update commits.
	c := copyGraph(t, s)
	gc, err := index.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gc.AddEdges(ctx, edges); err != nil {
		t.Fatal(err)
	}
	o1 := oracle(t, gc, m)
	mu.Lock()
	oracles[w.version.Load()+1] = o1
	mu.Unlock()
	if _, err := w.AddEdges(ctx, edges); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	v1 := w.version.Load()
	if oracles[v1] != o1 {
		t.Fatalf("the update made version %d, the test expected %d", v1, v1-1)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		stale, _ := replicaReads(t, r, o1, v1, "after the refresh")
		if stale == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica still answers %d nodes stale 20 s after the refresh", stale)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if reads.Load() == 0 {
		t.Fatal("the reader read nothing")
	}
	t.Logf("%d concurrent reads, %d fresh", reads.Load(), fresh.Load())
	if _, err := r.Refresh(ctx); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Refresh on a replica: %v, want ErrReadOnly", err)
	}
}

// TestReplica_UnmarkedUpdate: a graph update whose dirty marks were never
// committed (the writer died in between) leaves the state record as it
// was; the replica's next poll sees the graph past the marked version and
// flags every answer stale.
func TestReplica_UnmarkedUpdate(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 120, 4, 4, 3)
	m := newTestModel(featureNames(4), 7, false)
	w := openEngine(t, s, m)
	if _, err := w.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	r := openReplica(t, &readOnlyStore{Store: s}, m, -1)
	o := oracle(t, g, m)
	if stale, _ := replicaReads(t, r, o, w.version.Load(), "materialized"); stale != 0 {
		t.Fatalf("materialized: %d answers stale, want 0", stale)
	}
	// The update the writer committed before it died: no engine marks it.
	if _, err := g.AddEdges(ctx, [][2]uint32{{1, 2}, {3, 4}, {5, 6}, {7, 8}}); err != nil {
		t.Fatal(err)
	}
	if err := r.poll(); err != nil {
		t.Fatal(err)
	}
	stale, ps := replicaReads(t, r, oracle(t, g, m), w.version.Load()+1, "unmarked update")
	if stale != len(ps) {
		t.Fatalf("unmarked update: %d of %d answers stale, want all", stale, len(ps))
	}
}

// TestReplica_FollowsColdPath: a stale node that the writer's cold path
// made exact (its view rewritten, the stale set shrunk, no new state
// record) is fresh on the replica after its next poll, with the writer's
// exact answer; the nodes still stale stay flagged.
func TestReplica_FollowsColdPath(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 120, 4, 4, 5)
	m := newTestModel(featureNames(4), 9, false)
	w := openEngine(t, s, m)
	if _, err := w.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddEdges(ctx, [][2]uint32{{1, 2}, {3, 4}, {5, 6}}); err != nil {
		t.Fatal(err)
	}
	r := openReplica(t, &readOnlyStore{Store: s}, m, -1)
	stale := w.stale.Load().ToArray()
	if len(stale) < 2 {
		t.Fatalf("the update left %d stale nodes, want several", len(stale))
	}
	o := oracle(t, g, m)
	u := -1
	for _, x := range stale {
		p, err := r.Predict(ctx, x)
		if err != nil || !p.Stale {
			t.Fatalf("stale node %d on the replica: %+v, %v; want it flagged", x, p, err)
		}
		if u < 0 && p.Source == SourceView && o.counts[x] > 0 {
			u = int(x)
		}
	}
	if u < 0 {
		t.Fatal("no stale node has a view")
	}
	wp, err := w.Predict(ctx, uint32(u))
	if err != nil || wp.Source != SourceCold {
		t.Fatalf("writer's cold path for %d: %+v, %v", u, wp, err)
	}
	if err := r.poll(); err != nil {
		t.Fatal(err)
	}
	n, _ := replicaReads(t, r, o, w.version.Load(), "after the writer's cold path")
	p, err := r.Predict(ctx, uint32(u))
	if err != nil || p.Stale || p.Probs != wp.Probs || p.Subgraphs != wp.Subgraphs {
		t.Fatalf("node %d after the writer's cold path and a poll: %+v, %v; want the writer's %+v, fresh", u, p, err, wp)
	}
	if n == 0 {
		t.Fatal("no node stale any more after one cold read: the test shows nothing")
	}
}
