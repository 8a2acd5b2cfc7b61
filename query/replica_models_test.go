package query

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query/model"
	"github.com/fasd-db/fasd/query/querytest"
	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/postgres/pgtest"
)

// savedModels stands in for the runs a fasd train saves in the store and
// for runs.LoadLatest: save writes the seed of the newest test models
// under a key of the runs' prefix; load reads it back, and fails with
// errLoad while fail is set.
type savedModels struct {
	fail  atomic.Bool
	calls atomic.Int64
}

var (
	keySavedModels = []byte{index.PrefixRuns, 'x', 't', 'e', 's', 't'}
	errLoad        = errors.New("test: the run is being written")
)

// modelOf are the test models saved with seed: those of an odd seed have
// the no_diffusion variant, so that two models differ in their variants
// too.
func modelOf(seed uint64) *testModel { return newTestModel(featureNames(4), seed, seed%2 == 1) }

func (sm *savedModels) save(t testing.TB, s storage.Store, seed uint64) *testModel {
	t.Helper()
	b := s.NewBatch()
	defer b.Close()
	if err := b.Set(keySavedModels, []byte(strconv.FormatUint(seed, 10))); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	return modelOf(seed)
}

func (sm *savedModels) load(r storage.Reader) (model.Model, error) {
	sm.calls.Add(1)
	if sm.fail.Load() {
		return nil, errLoad
	}
	v, err := r.Get(keySavedModels)
	if err != nil {
		return nil, fmt.Errorf("test: no saved models: %w", err)
	}
	seed, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil {
		return nil, err
	}
	return modelOf(seed), nil
}

// openLoaded opens an engine whose models LoadModel loads from the store.
func openLoaded(t testing.TB, s storage.Store, sm *savedModels, rep *Replica) *Engine {
	t.Helper()
	e, err := Open("", &Options{Store: s, LoadModel: sm.load, Workers: 2, ChunkRoots: 7, Replica: rep})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// retrain is fasd train and fasd materialize on the writer's store: the
// writer w closes, newer models are saved, and a writer opened on them
// materializes the views. Before the materialize, pause runs (if set).
func retrain(t *testing.T, w *Engine, s storage.Store, sm *savedModels, seed uint64, pause func()) (*Engine, *testModel) {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m := sm.save(t, s, seed)
	w2 := openLoaded(t, s, sm, nil)
	if pause != nil {
		pause()
	}
	if _, err := w2.Materialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	return w2, m
}

// allStale checks that every answer of the replica r is flagged stale
// (replicaReads checks the rest against o).
func allStale(t *testing.T, r *Engine, o *oracleResult, ver uint64, step string) {
	t.Helper()
	if stale, ps := replicaReads(t, r, o, ver, step); stale != len(ps) {
		t.Fatalf("%s: %d of %d answers stale, want all", step, stale, len(ps))
	}
}

// sameAsWriter checks that every answer of r is fresh, of the writer's
// models and equal to the writer's.
func sameAsWriter(t *testing.T, r, w *Engine, o *oracleResult, step string) {
	t.Helper()
	ctx := context.Background()
	stale, ps := replicaReads(t, r, o, w.version.Load(), step)
	if stale != 0 {
		t.Fatalf("%s: %d answers stale, want 0", step, stale)
	}
	for u, p := range ps {
		wp, err := w.Predict(ctx, uint32(u))
		if err != nil {
			t.Fatal(err)
		}
		if p.Model != wp.Model || p.Probs != wp.Probs || p.Subgraphs != wp.Subgraphs || len(p.Variants) != len(wp.Variants) {
			t.Fatalf("%s: node %d: replica %+v, writer %+v", step, u, p, wp)
		}
	}
	if got, want := r.ModelInfo().Version, w.ModelInfo().Version; got != want {
		t.Fatalf("%s: replica's ModelInfo %s, writer's %s", step, got, want)
	}
	st, err := r.Status()
	if err != nil || st.Model != w.ModelInfo().Version {
		t.Fatalf("%s: replica's Status %+v, %v; want model %s", step, st, err, w.ModelInfo().Version)
	}
}

// TestReplica_SwitchesModels: a replica opened before newer models are
// saved and materialized keeps answering with the old views or flags its
// answers stale until it catches up; then it serves the new models, with
// the writer's answers. How it learns of the change varies: a catch-up
// while the writer materializes, a catch-up after it, a poll after it
// (the state record is then the one the old views had: only the meta
// record and the views' model tags differ).
func TestReplica_SwitchesModels(t *testing.T) {
	cases := []struct {
		name    string
		midway  bool // catch up between the writer's reopen and its materialize
		catchUp func(r *Engine) error
	}{
		{"catch-up while materializing", true, (*Engine).CatchUp},
		{"catch-up after", false, (*Engine).CatchUp},
		{"poll after", false, (*Engine).poll},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			onEveryBackend(t, func(t *testing.T) {
				ctx := context.Background()
				s, g := newTestGraph(t, 150, 4, 4, 1)
				sm := &savedModels{}
				m1 := sm.save(t, s, 10)
				w := openLoaded(t, s, sm, nil)
				if _, err := w.Materialize(ctx); err != nil {
					t.Fatal(err)
				}
				ro := &readOnlyStore{Store: s}
				r := openLoaded(t, ro, sm, &Replica{Poll: -1})
				o1 := oracle(t, g, m1)
				ver := w.version.Load()
				stale, _ := replicaReads(t, r, o1, ver, "old models")
				if stale != 0 {
					t.Fatalf("old models: %d answers stale, want 0", stale)
				}
				var pause func()
				if tc.midway {
					pause = func() {
						allStale(t, r, o1, ver, "views wiped, replica behind")
						if err := tc.catchUp(r); err != nil {
							t.Fatal(err)
						}
						if got := r.ModelInfo().Version; got != "test-11" {
							t.Fatalf("caught up with the new models' empty views: replica serves %s, want test-11", got)
						}
						allStale(t, r, o1, ver, "views of the new models not materialized")
					}
				}
				w2, m2 := retrain(t, w, s, sm, 11, pause)
				o2 := oracle(t, g, m2)
				if !tc.midway {
					allStale(t, r, o1, ver, "new views, replica behind")
					if got := r.ModelInfo().Version; got != "test-10" {
						t.Fatalf("before the catch-up: replica serves %s, want test-10", got)
					}
				}
				if err := tc.catchUp(r); err != nil {
					t.Fatal(err)
				}
				sameAsWriter(t, r, w2, o2, "caught up")
				if n := ro.commits.Load(); n != 0 {
					t.Fatalf("the replica committed %d batches", n)
				}
			})
		})
	}
}

// TestReplica_ModelLoadFails: a replica whose load of the new models
// fails keeps its models, reports the error, flags its answers stale and
// switches at a later catch-up once loading works; newest models that are
// not the views' are reported once and not loaded again at every poll.
func TestReplica_ModelLoadFails(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 120, 4, 4, 2)
	sm := &savedModels{}
	sm.save(t, s, 20)
	w := openLoaded(t, s, sm, nil)
	if _, err := w.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	r := openLoaded(t, &readOnlyStore{Store: s}, sm, &Replica{Poll: -1})
	w2, m2 := retrain(t, w, s, sm, 21, nil)
	o2 := oracle(t, g, m2)
	ver := w2.version.Load()

	sm.fail.Store(true)
	for i := range 2 {
		if err := r.CatchUp(); !errors.Is(err, errLoad) {
			t.Fatalf("catch-up %d with a failing loader: %v, want %v", i, err, errLoad)
		}
		if got := r.ModelInfo().Version; got != "test-20" {
			t.Fatalf("after a failed load the replica serves %s, want test-20", got)
		}
		allStale(t, r, o2, ver, "load failed")
	}

	sm.fail.Store(false)
	if err := r.CatchUp(); err != nil {
		t.Fatal(err)
	}
	sameAsWriter(t, r, w2, o2, "load works again")

	// Newest models that are not the views' (trained after the writer
	// materialized): reported once, not loaded at every catch-up.
	r3 := openLoaded(t, &readOnlyStore{Store: s}, sm, &Replica{Poll: -1})
	w3, m3 := retrain(t, w2, s, sm, 30, nil)
	sm.save(t, s, 31)
	if err := r3.CatchUp(); !errors.Is(err, ErrStaleModels) {
		t.Fatalf("views of test-30, newest models test-31: %v, want ErrStaleModels", err)
	}
	calls := sm.calls.Load()
	for range 3 {
		if err := r3.CatchUp(); err != nil {
			t.Fatalf("a second catch-up on the same views: %v, want nil", err)
		}
	}
	if n := sm.calls.Load() - calls; n != 0 {
		t.Fatalf("%d loads after the newest models were found not to be the views'", n)
	}
	allStale(t, r3, oracle(t, g, m3), w3.version.Load(), "views of models older than the newest")
}

// TestReplica_PollerReportsLoadError: the background poller passes a
// failed load to OnError and switches at a later poll once loading works.
func TestReplica_PollerReportsLoadError(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 100, 4, 4, 4)
	sm := &savedModels{}
	sm.save(t, s, 40)
	w := openLoaded(t, s, sm, nil)
	if _, err := w.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 1000)
	rsm := &savedModels{} // the replica's loader
	r := openLoaded(t, &readOnlyStore{Store: s}, rsm, &Replica{Poll: 2 * time.Millisecond, OnError: func(err error) {
		select {
		case errs <- err:
		default:
		}
	}})
	rsm.fail.Store(true)
	w2, m2 := retrain(t, w, s, sm, 41, nil)
	select {
	case err := <-errs:
		if !errors.Is(err, errLoad) {
			t.Fatalf("OnError got %v, want %v", err, errLoad)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no error reported 10 s after the new views")
	}
	o2 := oracle(t, g, m2)
	allStale(t, r, o2, w2.version.Load(), "load failing")
	if got := r.ModelInfo().Version; got != "test-40" {
		t.Fatalf("while loading fails the replica serves %s, want test-40", got)
	}
	rsm.fail.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for r.ModelInfo().Version != "test-41" {
		if time.Now().After(deadline) {
			t.Fatal("the replica did not switch 10 s after loading works again")
		}
		time.Sleep(2 * time.Millisecond)
	}
	sameAsWriter(t, r, w2, o2, "switched by the poller")
}

// TestReplica_SwitchConcurrentReads: readers on a polling replica while
// the writer reopens with new models and materializes them: every answer
// not flagged stale is exact for the models and graph version it reports,
// and audits and debiased subgraphs name one of the two models (run with
// -race: the switch is one atomic store).
func TestReplica_SwitchConcurrentReads(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 150, 4, 4, 3)
	sm := &savedModels{}
	m1 := sm.save(t, s, 50)
	w := openLoaded(t, s, sm, nil)
	if _, err := w.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	ver := w.version.Load()
	oracles := map[string]*oracleResult{m1.Info().Version: oracle(t, g, m1), "test-51": oracle(t, g, modelOf(51))}
	r := openLoaded(t, &readOnlyStore{Store: s}, sm, &Replica{Poll: time.Millisecond})
	nodes := make([]uint32, 150)
	for i := range nodes {
		nodes[i] = uint32(i)
	}
	check := func(p Prediction) error {
		if p.Stale || p.Source != SourceView {
			return nil
		}
		if o := oracles[p.Model]; o == nil || !o.matches(p) || p.GraphVersion != ver {
			return fmt.Errorf("node %d: %+v presented as fresh is not exact for its models", p.Node, p)
		}
		return nil
	}
	v, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := rootSet(v)
	v.Close()
	if err != nil {
		t.Fatal(err)
	}
	roots := rs.ToArray()[:10]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads atomic.Int64
	var fresh [2]atomic.Int64 // fresh answers of the old and the new models
	errc := make(chan error, 5)
	for k := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var ps []Prediction
				switch k {
				case 0:
					p, err := r.Predict(ctx, uint32(i%150))
					if err != nil {
						errc <- err
						return
					}
					ps = []Prediction{p}
				case 1:
					var err error
					if ps, err = r.PredictMany(ctx, nodes[i%100:i%100+50], false); err != nil {
						errc <- err
						return
					}
				case 2:
					for p, err := range r.All(ctx) {
						if err != nil {
							errc <- err
							return
						}
						ps = append(ps, p)
					}
				case 3:
					rep, err := r.Audit(ctx, "labelled")
					if err == nil && oracles[rep.Model] == nil {
						err = fmt.Errorf("audit of unknown models %q", rep.Model)
					}
					if err != nil {
						errc <- err
						return
					}
				case 4:
					d, err := r.Subgraph(ctx, roots[i%len(roots)])
					if err == nil && oracles[d.Model] == nil {
						err = fmt.Errorf("subgraph of unknown models %q", d.Model)
					}
					if err != nil {
						errc <- err
						return
					}
				}
				for _, p := range ps {
					if err := check(p); err != nil {
						errc <- err
						return
					}
					reads.Add(1)
					if !p.Stale && p.Source == SourceView {
						if p.Model == "test-51" {
							fresh[1].Add(1)
						} else {
							fresh[0].Add(1)
						}
					}
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	w2, m2 := retrain(t, w, s, sm, 51, func() { time.Sleep(10 * time.Millisecond) })
	deadline := time.Now().Add(20 * time.Second)
	for fresh[1].Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no fresh answer of the new models 20 s after the materialize")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}
	t.Logf("%d answers; fresh: %d of the old models, %d of the new", reads.Load(), fresh[0].Load(), fresh[1].Load())
	if fresh[0].Load() == 0 {
		t.Fatal("no fresh answer of the old models: the test shows nothing")
	}
	sameAsWriter(t, r, w2, oracle(t, g, m2), "after the switch")
}

// TestReplica_SwitchesModelsSharedPostgres: a replica on its own shared
// handle of a PostgreSQL table (as fasd serve --replica opens it) polls
// (between reads, so that each read knows the models to check against) its way from the old models' views to the new ones the writer saved
// and materialized, every answer exact for its models or flagged stale.
func TestReplica_SwitchesModelsSharedPostgres(t *testing.T) {
	dsn, s := pgtest.Open(t, &storage.Options{NoSync: true})
	ctx := context.Background()
	g := querytest.NewGraph(t, s, 120, 4, 4, 6)
	sm := &savedModels{}
	m1 := sm.save(t, s, 60)
	w := openLoaded(t, s, sm, nil)
	if _, err := w.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	rs, err := storage.Open(dsn, &storage.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Close() })
	r := openLoaded(t, rs, sm, &Replica{Poll: -1}) // polled below, between reads
	o1 := oracle(t, g, m1)
	ver := w.version.Load()
	if stale, _ := replicaReads(t, r, o1, ver, "old models"); stale != 0 {
		t.Fatalf("old models: %d answers stale, want 0", stale)
	}
	w2, m2 := retrain(t, w, s, sm, 61, func() {
		replicaReads(t, r, o1, ver, "views wiped")
	})
	o2 := oracle(t, g, m2)
	deadline := time.Now().Add(20 * time.Second)
	for {
		// Until the switch, answers are the old views' or flagged stale
		// (replicaReads checks them against the oracle of the models
		// they report).
		o := o1
		if r.ModelInfo().Version == m2.Info().Version {
			o = o2
		}
		if stale, _ := replicaReads(t, r, o, ver, "polling"); stale == 0 && o == o2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the replica does not serve the new models 20 s after the materialize")
		}
		if err := r.poll(); err != nil {
			t.Fatal(err)
		}
	}
	sameAsWriter(t, r, w2, o2, "switched")
}

// TestReplica_SwitchesModelsSameStateRecord: views rebuilt with other
// models under the very state record the old views had (a writer of an
// earlier build, whose state record does not name the models): a read
// flags the other models' views stale and a poll, which compares the meta
// record too, switches.
func TestReplica_SwitchesModelsSameStateRecord(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 120, 4, 4, 7)
	sm := &savedModels{}
	m1 := sm.save(t, s, 70)
	w := openLoaded(t, s, sm, nil)
	if _, err := w.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	r := openLoaded(t, &readOnlyStore{Store: s}, sm, &Replica{Poll: -1})
	old, err := s.Get(keyState)
	if err != nil {
		t.Fatal(err)
	}
	ver := w.version.Load()
	w2, m2 := retrain(t, w, s, sm, 71, nil)
	b := s.NewBatch()
	defer b.Close()
	if err := b.Set(keyState, old); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	allStale(t, r, oracle(t, g, m1), ver, "same state record, other models' views")
	if err := r.poll(); err != nil {
		t.Fatal(err)
	}
	sameAsWriter(t, r, w2, oracle(t, g, m2), "polled")
}
