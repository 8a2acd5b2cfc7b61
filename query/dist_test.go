package query

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/fasd-db/fasd/storage"
)

// distSetup returns a graph store, its model and the views a single
// process materializes on a copy of it.
func distSetup(t *testing.T) (storage.Store, *testModel, string) {
	t.Helper()
	s, _ := newTestGraph(t, 150, 4, 4, 1)
	m := newTestModel(featureNames(4), 11, false)
	ref := openEngine(t, copyGraph(t, s), m)
	if _, err := ref.Materialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, m, dumpViews(t, ref.store)
}

func openDist(t *testing.T, s storage.Store, m *testModel, d *Distributed) *Engine {
	t.Helper()
	e, err := Open("", &Options{Store: s, Model: m, Workers: 1, ChunkRoots: 7, Distributed: d})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// runWorkers runs n workers (each an engine of its own on s) until stop is
// called; hook, if set, becomes each worker's testHookBeforeStage.
func runWorkers(t *testing.T, s storage.Store, m *testModel, n int, d Distributed, hook func(int, Lease)) (stop func() []*WorkReport) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	reps := make([]*WorkReport, n)
	for i := range n {
		w := openDist(t, s, m, nil)
		if hook != nil {
			w.testHookBeforeStage = func(l Lease) { hook(i, l) }
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := w.Work(ctx, &d, true)
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("worker %d: %v", i, err)
			}
			reps[i] = rep
		}()
	}
	return func() []*WorkReport { cancel(); wg.Wait(); return reps }
}

// TestDistributedMaterialize: with 1–3 workers the coordinator's views
// equal a single process's bit for bit, and no plan, lease or stage key
// is left behind.
func TestDistributedMaterialize(t *testing.T) {
	onBackends(t, []storage.Backend{storage.Pebble, storage.Postgres}, func(t *testing.T) {
		for _, n := range []int{0, 2, 3} {
			s, m, want := distSetup(t)
			d := Distributed{Poll: time.Millisecond}
			stop := runWorkers(t, s, m, n, d, nil)
			c := openDist(t, s, m, &d)
			rep, err := c.Materialize(context.Background())
			reps := stop()
			if err != nil {
				t.Fatal(err)
			}
			if got := dumpViews(t, s); got != want {
				t.Fatalf("%d workers: distributed views differ from one process:\n%s", n, firstDiff(got, want))
			}
			checkDistTimes(t, rep, reps)
		}
	})
}

// checkDistTimes checks the coordinator's and the workers' accounts of a
// distributed materialize (parts of 7 roots, as openDist sets): every
// part folded, at least the workers' parts from stages, the workers' roots
// those of their parts, and times that fit in the run.
func checkDistTimes(t *testing.T, rep *RefreshReport, reps []*WorkReport) {
	t.Helper()
	tm := rep.Times
	if want := (rep.Subgraphs + 6) / 7; tm.Parts != want {
		t.Errorf("folded %d parts, want %d", tm.Parts, want)
	}
	parts, roots := 0, 0
	for _, w := range reps {
		parts += w.Parts
		roots += w.Roots
		if w.Parts > 0 && (w.Compute <= 0 || w.Roots < w.Parts) {
			t.Errorf("worker report %+v: no compute time or fewer roots than parts", w)
		}
	}
	if tm.Staged < parts || tm.Staged > tm.Parts || roots > 7*parts {
		t.Errorf("%d parts folded from stages, the workers staged %d parts of %d roots, %d parts in all", tm.Staged, parts, roots, tm.Parts)
	}
	if tm.Fold <= 0 || tm.Nodes <= 0 || tm.Compute < 0 || tm.Wait < 0 || tm.Compute+tm.Fold+tm.Wait+tm.Nodes > rep.Duration {
		t.Errorf("times %+v do not fit in %s", tm, rep.Duration)
	}
}

// TestDistributed_ExpiredLeaseCannotStage: a worker whose lease was
// claimed by another after it expired computes its part but stages
// nothing.
func TestDistributed_ExpiredLeaseCannotStage(t *testing.T) {
	s, m, _ := distSetup(t)
	c := openDist(t, s, m, &Distributed{})
	roots := []uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	p, err := c.startPlan(c.version.Load(), roots)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_000, 0)
	w := openDist(t, s, m, nil)
	w.testHookBeforeStage = func(l Lease) {
		if _, err := ClaimLease(s, l.Part, "thief", t0.Add(time.Hour), time.Hour); err != nil {
			t.Errorf("thief: %v", err)
		}
	}
	rep, err := w.Work(context.Background(), &Distributed{Now: func() time.Time { return t0 }, LeaseTTL: time.Second}, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Parts != 0 || rep.Lost != int(p.p.parts()) {
		t.Fatalf("report %+v, want 0 parts staged and %d lost", rep, p.p.parts())
	}
	for part := range p.p.parts() {
		if recs, err := readStage(s, p.p, part); err != nil || recs != nil {
			t.Fatalf("part %d staged after its lease was lost (%v)", part, err)
		}
	}
}

// TestDistributed_DeadWorker: a worker that dies holding a lease leaves
// its part to be claimed again after the lease expires; the views still
// equal a single process's.
func TestDistributed_DeadWorker(t *testing.T) {
	s, m, want := distSetup(t)
	var died atomic.Bool
	d := Distributed{Poll: time.Millisecond, LeaseTTL: 30 * time.Millisecond}
	stop := runWorkers(t, s, m, 2, d, func(i int, l Lease) {
		if i == 0 && died.CompareAndSwap(false, true) {
			runtime.Goexit() // killed between computing and staging
		}
	})
	c := openDist(t, s, m, &d)
	_, err := c.Materialize(context.Background())
	stop()
	if err != nil {
		t.Fatal(err)
	}
	if !died.Load() {
		t.Log("the doomed worker claimed no part")
	}
	if got := dumpViews(t, s); got != want {
		t.Fatalf("views differ after a dead worker:\n%s", firstDiff(got, want))
	}
}

// TestDistributed_CoordinatorResumes: a coordinator stopped after its
// first folded part leaves a state the next run completes to the same
// views.
func TestDistributed_CoordinatorResumes(t *testing.T) {
	s, m, want := distSetup(t)
	d := Distributed{Poll: time.Millisecond}
	stop := runWorkers(t, s, m, 2, d, nil)
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	c, err := Open("", &Options{Store: s, Model: m, Workers: 1, ChunkRoots: 7, Distributed: &d,
		Progress: func(stage string, done, total int) {
			if stage == "subgraphs" && done >= 14 {
				cancel()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Materialize(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted materialize: %v", err)
	}
	c.Close()
	c = openDist(t, s, m, &d)
	if _, err := c.Materialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := dumpViews(t, s); got != want {
		t.Fatalf("views differ after a resumed coordinator:\n%s", firstDiff(got, want))
	}
}

// TestDistributed_SlowPartKeepsLease: a worker whose part takes several
// lease lifetimes renews its lease meanwhile, so neither the coordinator
// nor another worker claims the part again, and its stage is folded.
func TestDistributed_SlowPartKeepsLease(t *testing.T) {
	const ttl = 300 * time.Millisecond
	// The coordinator computes parts too and can finish them all before
	// the slow worker claims one (a fast machine): try again on a fresh
	// store until the worker has held a part, a few times at most.
	for attempt := 1; ; attempt++ {
		s, m, want := distSetup(t)
		var slow atomic.Int32
		slow.Store(-1)
		d := Distributed{Poll: time.Millisecond, LeaseTTL: ttl}
		stop := runWorkers(t, s, m, 2, d, func(i int, l Lease) {
			if i == 0 && slow.CompareAndSwap(-1, int32(l.Part)) {
				time.Sleep(6 * ttl) // a slow part: computing it takes 6 lifetimes
			}
		})
		c := openDist(t, s, m, &d)
		_, err := c.Materialize(context.Background())
		reps := stop()
		if err != nil {
			t.Fatal(err)
		}
		if slow.Load() < 0 {
			if attempt < 10 {
				continue
			}
			t.Fatal("the slow worker claimed no part in 10 attempts: the test shows nothing")
		}
		checkSlowPart(t, s, reps, slow.Load(), want)
		return
	}
}

// checkSlowPart checks the outcome of TestDistributed_SlowPartKeepsLease:
// the slow worker staged its parts (part among them) and lost no lease,
// and the views equal the local materialization's.
func checkSlowPart(t *testing.T, s storage.Store, reps []*WorkReport, part int32, want string) {
	t.Helper()
	if reps[0].Lost != 0 || reps[0].Parts == 0 {
		t.Fatalf("slow worker: %+v; want its parts staged and no lease lost (part %d)", reps[0], part)
	}
	if got := dumpViews(t, s); got != want {
		t.Fatalf("views differ after a slow part:\n%s", firstDiff(got, want))
	}
}

// TestLeaseKeeper: a kept lease is renewed past its lifetime (another
// claim fails, the holder's fenced write succeeds with the renewed lease),
// and once the keeper stops the lease expires and is claimed again; a
// keeper whose lease was taken cancels its context and reports the loss.
func TestLeaseKeeper(t *testing.T) {
	s := openMem(t)
	const ttl = 300 * time.Millisecond
	d := (&Distributed{LeaseTTL: ttl}).withDefaults("w")
	l, err := ClaimLease(s, 3, "w", time.Now(), ttl)
	if err != nil {
		t.Fatal(err)
	}
	_, k := keepLease(context.Background(), s, l, &d)
	time.Sleep(5 * ttl)
	if _, err := ClaimLease(s, 3, "thief", time.Now(), ttl); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("claim of a kept lease after 5 lifetimes: %v, want ErrLeaseHeld", err)
	}
	kept, err := k.stop()
	if err != nil || kept.Generation != l.Generation || !kept.Deadline.After(l.Deadline) {
		t.Fatalf("stop: %+v, %v; want generation %d renewed past %v", kept, err, l.Generation, l.Deadline)
	}
	if err := fencedWrite(s, kept, "w1"); err != nil {
		t.Fatalf("write under the renewed lease: %v", err)
	}
	time.Sleep(2 * ttl)
	taken, err := ClaimLease(s, 3, "thief", time.Now(), time.Hour)
	if err != nil {
		t.Fatalf("claim after the keeper stopped: %v", err)
	}

	// Lost: the keeper of the old lease finds it taken at its next renewal.
	ctx, k := keepLease(context.Background(), s, kept, &d)
	select {
	case <-ctx.Done():
	case <-time.After(20 * ttl):
		t.Fatal("the keeper of a lost lease did not cancel its context")
	}
	if _, err := k.stop(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("stop after the loss: %v, want ErrLeaseLost", err)
	}
	if cur, _, err := ReadLease(s, 3); err != nil || cur.Generation != taken.Generation || cur.Owner != "thief" {
		t.Fatalf("lease after the loss: %+v, %v; want the thief's", cur, err)
	}
}

// TestDistributed_WorkerWithOtherModels: a worker that holds other models
// than the plan's (started before a fasd train, say) stages nothing and
// says why (ErrPlanModels); a stage of other models' records is refused
// at the fold; and a materialize beside such a worker gives the views of
// a single process, bit for bit.
func TestDistributed_WorkerWithOtherModels(t *testing.T) {
	s, m, want := distSetup(t)
	// The worker opens first, as one started before the models changed
	// (opening an engine with other models resets the views, plan
	// included).
	w := openDist(t, s, newTestModel(featureNames(4), 12, false), nil)
	c := openDist(t, s, m, &Distributed{})
	roots := []uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	p, err := c.startPlan(c.version.Load(), roots)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := w.Work(context.Background(), &Distributed{}, false)
	if !errors.Is(err, ErrPlanModels) {
		t.Fatalf("worker with other models: %v, want ErrPlanModels", err)
	}
	if rep.Parts != 0 {
		t.Fatalf("the worker with other models staged %d parts", rep.Parts)
	}
	for part := range p.p.parts() {
		if recs, err := readStage(s, p.p, part); err != nil || recs != nil {
			t.Fatalf("part %d staged by a worker with other models (%v)", part, err)
		}
	}
	// A stage of other models' records (a worker of an older build, which
	// does not check) is refused when the coordinator folds it.
	recs := make([]*rootRecord, len(p.p.part(0)))
	wk, release, err := w.newWorkers()
	if err != nil {
		t.Fatal(err)
	}
	err = w.computePart(context.Background(), wk, roaring.BitmapOf(roots...), p.p.part(0), recs)
	release()
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	_ = b.Set(stageKey(0), encodeStage(p.p.ID, p.p.part(0), recs))
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	cw, crelease, err := c.newWorkers()
	if err != nil {
		t.Fatal(err)
	}
	err = p.await(context.Background(), cw, roaring.BitmapOf(roots...), 0, make([]*rootRecord, len(recs)), &RefreshTimes{})
	crelease()
	if !errors.Is(err, ErrPlanModels) {
		t.Fatalf("fold of a stage of other models: %v, want ErrPlanModels", err)
	}
	if err := c.clearDist(true); err != nil {
		t.Fatal(err)
	}

	d := Distributed{Poll: time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		for ctx.Err() == nil { // keeps trying, as a worker left running would
			if _, err := w.Work(ctx, &d, false); err != nil && !errors.Is(err, ErrPlanModels) && !errors.Is(err, context.Canceled) {
				done <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
		done <- nil
	}()
	_, err = c.Materialize(context.Background())
	cancel()
	if werr := <-done; werr != nil {
		t.Errorf("worker: %v", werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := dumpViews(t, s); got != want {
		t.Fatalf("views differ from one process's:\n%s", firstDiff(got, want))
	}
}
