package query

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query/model"
	"github.com/fasd-db/fasd/query/querytest"
	"github.com/fasd-db/fasd/storage"
)

func openEngine(t testing.TB, s storage.Store, m model.Model) *Engine {
	t.Helper()
	e, err := Open("", &Options{Store: s, Model: m, Workers: 2, ChunkRoots: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func TestMaterializeMatchesOracle(t *testing.T) {
	ctx := context.Background()
	for _, variants := range [][]string{{"fasd", "no_diffusion"}, nil, {"fasd", "no_diffusion", "no_adjacency"}} {
		s, g := newTestGraph(t, 150, 4, 4, 1)
		m := newTestModel(featureNames(4), 11, false)
		m.Spec.Variants = variants
		e := openEngine(t, s, m)
		rep, err := e.Materialize(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Complete || rep.Subgraphs == 0 || rep.Nodes == 0 {
			t.Fatalf("report %+v", rep)
		}
		o := oracle(t, g, m)
		if n := checkViews(t, e, o, "materialize"); n != 0 {
			t.Fatalf("%d stale views after materialize", n)
		}
		// Every node in some subgraph is served from its view.
		for u, c := range o.counts {
			p, err := e.Predict(ctx, uint32(u))
			if err != nil {
				t.Fatal(err)
			}
			if c > 0 && (p.Source != SourceView || !o.matches(p)) {
				t.Fatalf("node %d: %+v", u, p)
			}
			if c == 0 && (p.Source != SourceApprox || p.Subgraphs != 0) {
				t.Fatalf("node %d in no subgraph: %+v", u, p)
			}
			if want := max(len(variants)-1, 0); len(p.Variants) != want {
				t.Fatalf("node %d: variants %v, want %d besides the served one", u, p.Variants, want)
			}
		}
		// A second Materialize has nothing to do.
		calls := m.Calls()
		if rep, err := e.Materialize(ctx); err != nil || rep.Subgraphs != 0 {
			t.Fatalf("second materialize: %+v %v", rep, err)
		}
		if m.Calls() != calls {
			t.Fatal("second materialize ran the model")
		}
	}
}

func TestOpenChecks(t *testing.T) {
	s, _ := newTestGraph(t, 20, 3, 3, 2)
	if _, err := Open("", &Options{Store: s, Model: newTestModel(featureNames(4), 1, true)}); !errors.Is(err, ErrSchema) {
		t.Fatalf("schema mismatch: %v", err)
	}
	if _, err := Open("", &Options{Store: s}); !errors.Is(err, ErrNoModel) {
		t.Fatalf("no model: %v", err)
	}
	if _, err := Open("", &Options{Store: s, Workers: -1}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad options: %v", err)
	}
	bad := newTestModel(featureNames(3), 1, true)
	bad.Spec.Sample.Depth = 0
	if _, err := Open("", &Options{Store: s, Model: bad}); err == nil {
		t.Fatal("invalid sampler options accepted")
	}
	e, err := Open("", &Options{Store: s, Model: newTestModel(featureNames(3), 1, true)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if _, err := e.Predict(context.Background(), 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("predict after close: %v", err)
	}
	// A store without a graph.
	if _, err := Open("", &Options{Store: openMem(t), Model: bad}); !errors.Is(err, index.ErrNoGraph) {
		t.Fatalf("no graph: %v", err)
	}
}

// Views of other models are dropped on Open; views survive a reopen with
// the same models; a graph changed behind the engine's back dirties all.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 80, 3, 4, 3)
	m := newTestModel(featureNames(3), 5, true)
	e := openEngine(t, s, m)
	if _, err := e.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e = openEngine(t, s, m)
	if st, _ := e.Status(); !st.Complete || st.DirtyRoots != 0 {
		t.Fatalf("reopen: %+v", st)
	}
	e.Close()
	// Change the graph directly.
	if _, err := g.AddEdges(ctx, [][2]uint32{{0, 1}, {2, 3}}); err != nil {
		t.Fatal(err)
	}
	e = openEngine(t, s, m)
	st, _ := e.Status()
	if st.DirtyRoots != st.Roots || st.StaleNodes != 80 {
		t.Fatalf("after external change: %+v", st)
	}
	if _, err := e.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	checkViews(t, e, oracle(t, g, m), "after external change")
	e.Close()
	m2 := newTestModel(featureNames(3), 6, true)
	e = openEngine(t, s, m2)
	if st, _ := e.Status(); st.Complete || st.Roots != 0 {
		t.Fatalf("other model: %+v", st)
	}
	n := 0
	for range e.All(ctx) {
		n++
	}
	if n != 0 {
		t.Fatalf("%d views of the old model survived", n)
	}
}

// applyRandomUpdate applies one random update batch through the engine.
func applyRandomUpdate(t *testing.T, e *Engine, rng *rand.Rand, nextExt *int64) *UpdateReport {
	return applyRandomUpdateDel(t, e, rng, nil, nextExt)
}

// applyRandomUpdateDel is applyRandomUpdate that also deletes a node now
// and then, drawn with delRng (nil: never).
func applyRandomUpdateDel(t *testing.T, e *Engine, rng, delRng *rand.Rand, nextExt *int64) *UpdateReport {
	t.Helper()
	d := 4
	rep, err := e.Update(context.Background(), func(tx *index.Tx) error {
		n := uint32(tx.NumNodes())
		// live draws a node that is not deleted.
		live := func() uint32 {
			for {
				u := uint32(rng.IntN(int(n)))
				if del, err := tx.IsDeleted(u); err != nil || !del {
					return u
				}
			}
		}
		for range 1 + rng.IntN(3) {
			u := live()
			switch rng.IntN(8) {
			case 0, 1:
				w := live()
				if w != u {
					if _, err := tx.AddEdge(u, w); err != nil {
						return err
					}
				}
			case 2, 3:
				// Remove an existing edge of u, if any.
				for w := range n {
					if ok, _ := tx.HasEdge(u, w); ok {
						if _, err := tx.RemoveEdge(u, w); err != nil {
							return err
						}
						break
					}
				}
			case 4:
				id, err := tx.AddNode(querytest.RandomNode(rng, *nextExt, d))
				if err != nil {
					return err
				}
				*nextExt++
				for range rng.IntN(3) {
					if _, err := tx.AddEdge(id, live()); err != nil {
						return err
					}
				}
			case 5:
				f := make([]float32, d)
				for i := range f {
					f[i] = float32(rng.NormFloat64())
				}
				if err := tx.SetFeatures(u, f); err != nil {
					return err
				}
			case 6:
				if err := tx.SetSensitive(u, int8(rng.IntN(3))-1); err != nil {
					return err
				}
			case 7:
				if err := tx.SetLabel(u, int8(rng.IntN(3))-1); err != nil {
					return err
				}
				if rng.IntN(2) == 0 {
					if err := tx.SetSplit(u, index.Split(rng.IntN(4))); err != nil {
						return err
					}
				}
			}
		}
		// Deletions are drawn from their own generator, so that the
		// sequence of the other operations stays that of the seed.
		if delRng != nil && delRng.IntN(4) == 0 {
			// Delete a live node: its edges go, and the subgraphs it was
			// in or expanded, and its own if it was a root, turn dirty.
			if err := tx.DeleteNode(live()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestPropertyIncrementalEqualsRebuild is the key property: after random
// update sequences with refreshes (and cold queries, which refresh part of
// the dirty set) in between, the views equal a from-scratch
// materialization of the final graph bit for bit, and at every step every
// view not marked stale equals an in-memory oracle of the current graph. It
// runs on every storage backend.
func TestPropertyIncrementalEqualsRebuild(t *testing.T) {
	onEveryBackend(t, testPropertyIncrementalEqualsRebuild)
}

func testPropertyIncrementalEqualsRebuild(t *testing.T) {
	ctx := context.Background()
	steps := 25
	if testing.Short() {
		steps = 10
	}
	// Seeds 0–3 sample as the test model does (Algorithm 3, the sampled
	// edges); 4 and 5 keep every edge among the members (an edge added
	// between two members changes the subgraph though no sample reads
	// it), 6 the hop sampler with induced edges and a node cap.
	sampling := map[uint64]fasd.SampleOptions{
		4: {Mode: fasd.SamplerAlg3, Depth: 2, Fanout: 3, Edges: fasd.EdgesInduced},
		5: {Mode: fasd.SamplerAlg3, Depth: 2, Fanout: 3, Edges: fasd.EdgesInduced},
		6: {Mode: fasd.SamplerHop, Depth: 2, Fanout: 4, Edges: fasd.EdgesInduced, MaxNodes: 15},
	}
	for seed := range uint64(7) {
		s, g := newTestGraph(t, 120, 4, 4, 100+seed)
		m := newTestModel(featureNames(4), 20+seed, seed%2 == 0)
		if o, ok := sampling[seed]; ok {
			m.Spec.Sample = o
		}
		e := openEngine(t, s, m)
		// Odd seeds start unmaterialized: cold queries first, Materialize
		// half-way.
		if seed%2 == 0 {
			if _, err := e.Materialize(ctx); err != nil {
				t.Fatal(err)
			}
		}
		rng := rand.New(rand.NewPCG(seed, 99))
		delRng := rand.New(rand.NewPCG(seed, 7))
		ext := int64(1 << 20)
		for step := range steps {
			applyRandomUpdateDel(t, e, rng, delRng, &ext)
			o := oracle(t, g, m)
			checkViews(t, e, o, "after update")
			if rng.IntN(3) == 0 {
				// A cold query is exact.
				v, _ := g.View()
				u := uint32(rng.IntN(v.NumNodes()))
				deleted, _ := v.IsDeleted(u)
				v.Close()
				p, err := e.Predict(ctx, u)
				if deleted {
					if !errors.Is(err, ErrUnknownNode) {
						t.Fatalf("predict of deleted node %d: %+v, %v", u, p, err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if p.Source != SourceApprox && !o.matches(p) {
					t.Fatalf("seed %d step %d: cold predict of %d: %+v, oracle %v×%d", seed, step, u, p, o.fair[2*u:2*u+2], o.counts[u])
				}
				if p.Source == SourceApprox && o.counts[u] != 0 {
					t.Fatalf("approx for node %d in %d subgraphs", u, o.counts[u])
				}
				checkViews(t, e, o, "after cold query")
			}
			if seed%2 == 1 && step == steps/2 {
				if _, err := e.Materialize(ctx); err != nil {
					t.Fatal(err)
				}
				if n := checkViews(t, e, o, "after materialize"); n != 0 {
					t.Fatalf("%d stale views after materialize", n)
				}
			}
			if rng.IntN(3) == 0 {
				if _, err := e.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
				if n := checkViews(t, e, o, "after refresh"); n != 0 && e.complete.Load() {
					t.Fatalf("%d stale views after refresh", n)
				}
			}
		}
		if _, err := e.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		checkViews(t, e, oracle(t, g, m), "final")
		fresh := openEngine(t, copyGraph(t, s), m)
		if _, err := fresh.Materialize(ctx); err != nil {
			t.Fatal(err)
		}
		got, want := dumpViews(t, s), dumpViews(t, fresh.store)
		if got != want {
			t.Fatalf("seed %d: incremental views differ from a rebuild:\n%s", seed, firstDiff(got, want))
		}
	}
}

func firstDiff(a, b string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			lo := max(0, i-200)
			return "incremental: …" + a[lo:min(len(a), i+200)] + "\nrebuild: …" + b[lo:min(len(b), i+200)]
		}
	}
	return "one is a prefix of the other"
}

// TestIncrementalConcurrentReads runs readers during a refresh: each sees,
// per node, the view before the refresh or the one after, never a mix. It
// runs on every storage backend (make test runs it under the race
// detector).
func TestIncrementalConcurrentReads(t *testing.T) {
	onEveryBackend(t, testIncrementalConcurrentReads)
}

func testIncrementalConcurrentReads(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 150, 4, 4, 7)
	m := newTestModel(featureNames(4), 3, true)
	e := openEngine(t, s, m)
	if _, err := e.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	before := oracle(t, g, m)
	rng := rand.New(rand.NewPCG(1, 2))
	ext := int64(1 << 20)
	for range 4 {
		applyRandomUpdate(t, e, rng, &ext)
	}
	after := oracle(t, g, m)
	nodes := make([]uint32, len(before.counts))
	for i := range nodes {
		nodes[i] = uint32(i)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ps, err := e.PredictMany(ctx, nodes, false)
				if err != nil {
					errc <- err
					return
				}
				for _, p := range ps {
					if p.Subgraphs == 0 {
						continue
					}
					if !before.matches(p) && !after.matches(p) {
						errc <- errors.New("a view matches neither the old nor the new state")
						return
					}
				}
				if r == 0 && i%5 == 0 {
					// A single Predict may take the cold path.
					u := nodes[i%len(nodes)]
					p, err := e.Predict(ctx, u)
					if err != nil {
						errc <- err
						return
					}
					if p.Source != SourceApprox && !after.matches(p) && !(p.Source == SourceView && before.matches(p)) {
						errc <- errors.New("Predict returned a mixed state")
						return
					}
				}
			}
		}()
	}
	if _, err := e.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	checkViews(t, e, after, "after concurrent refresh")
}

// TestMaterializeResumes interrupts Materialize and resumes it.
func TestMaterializeResumes(t *testing.T) {
	s, g := newTestGraph(t, 150, 4, 4, 9)
	m := newTestModel(featureNames(4), 4, true)
	e := openEngine(t, s, m)
	ctx, cancel := context.WithCancel(context.Background())
	e.opts.Progress = func(stage string, done, total int) {
		if stage == "subgraphs" && done > total/2 {
			cancel()
		}
	}
	if _, err := e.Materialize(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted materialize: %v", err)
	}
	e.opts.Progress = nil
	st, _ := e.Status()
	if st.Complete || st.Roots == 0 {
		t.Fatalf("after interruption: %+v", st)
	}
	calls := m.Calls()
	e.Close()
	e = openEngine(t, s, m)
	rep, err := e.Materialize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := m.Calls() - calls
	o := oracle(t, g, m)
	if int(got) != rep.Subgraphs || rep.Subgraphs >= len(o.sets) {
		t.Fatalf("resume recomputed %d subgraphs (report %d) of %d", got, rep.Subgraphs, len(o.sets))
	}
	if n := checkViews(t, e, o, "resumed"); n != 0 {
		t.Fatal("stale views")
	}
	fresh := openEngine(t, copyGraph(t, s), m)
	if _, err := fresh.Materialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := dumpViews(t, s), dumpViews(t, fresh.store); got != want {
		t.Fatalf("resumed views differ from a rebuild:\n%s", firstDiff(got, want))
	}
}

// Ensure that views written in format 1 (a fair vector and a flagged
// baseline) are migrated on Open: the meta record is rewritten, every
// record and view is still served without recomputation and equals the
// oracle, and an unknown format is refused with ErrFormat.
func TestViewsFormat1Migrated(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 80, 3, 4, 12)
	m := newTestModel(featureNames(3), 4, true)
	e := openEngine(t, s, m)
	if _, err := e.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// Rewrite the views as format 1 wrote them.
	rewrite := func(f func(k, v []byte) []byte) {
		it, err := s.NewIter([]byte{prefixViews}, []byte{prefixViews + 1})
		if err != nil {
			t.Fatal(err)
		}
		b := s.NewBatch()
		for ok := it.First(); ok; ok = it.Next() {
			v, _ := it.Value()
			if nv := f(it.Key(), append([]byte(nil), v...)); nv != nil {
				if err := b.Set(append([]byte(nil), it.Key()...), nv); err != nil {
					t.Fatal(err)
				}
			}
		}
		it.Close()
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	records := 0
	rewrite(func(k, v []byte) []byte {
		switch {
		case len(k) == 6 && (k[1] == famRoot || k[1] == famNode):
			if v[0] != recordFormat || v[1] != 2 {
				t.Fatalf("key %x: format %d with %d variants", k, v[0], v[1])
			}
			v[0], v[1] = recordFormatV1, flagBaselineV1
			records++
			return v
		case len(k) == 2 && k[1] == famMeta:
			var mt map[string]any
			if err := json.Unmarshal(v, &mt); err != nil {
				t.Fatal(err)
			}
			mt["format"], mt["baseline"] = viewsFormatV1, true
			delete(mt, "variants")
			b, _ := json.Marshal(mt)
			return b
		}
		return nil
	})
	if records == 0 {
		t.Fatal("no records rewritten")
	}
	calls := m.Calls()
	e = openEngine(t, s, m)
	o := oracle(t, g, m)
	if n := checkViews(t, e, o, "migrated"); n != 0 {
		t.Fatalf("%d stale views after the migration", n)
	}
	for u, c := range o.counts {
		if c == 0 {
			continue
		}
		if p, err := e.Predict(ctx, uint32(u)); err != nil || p.Source != SourceView || !o.matches(p) {
			t.Fatalf("node %d after the migration: %+v %v", u, p, err)
		}
	}
	if m.Calls() != calls+int64(len(o.sets)) { // the oracle's own calls
		t.Fatalf("the migration recomputed %d subgraphs", m.Calls()-calls-int64(len(o.sets)))
	}
	var mt meta
	b, _ := s.Get(keyMeta)
	if err := json.Unmarshal(b, &mt); err != nil || mt.Format != viewsFormat || len(mt.Variants) != 2 {
		t.Fatalf("meta after the migration: %s %v", b, err)
	}
	e.Close()
	// A format from the future is refused.
	rewrite(func(k, v []byte) []byte {
		if len(k) == 2 && k[1] == famMeta {
			return []byte(`{"format":99}`)
		}
		return nil
	})
	if _, err := Open("", &Options{Store: s, Model: m}); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "99") {
		t.Fatalf("format 99: %v", err)
	}
}
