package query

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/nn"
	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/index/synth"
	"github.com/fasd-db/fasd/query/model"
	"github.com/fasd-db/fasd/query/querytest"
	"github.com/fasd-db/fasd/runs"
	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// benchEngine is a materialized engine over a random graph of n nodes with
// the cheap test model.
func benchEngine(b testing.TB, n int) (*Engine, []uint32) {
	b.Helper()
	s, _ := newTestGraph(b, n, 8, 10, 1)
	e := openEngine(b, s, newTestModel(featureNames(8), 1, true))
	if _, err := e.Materialize(context.Background()); err != nil {
		b.Fatal(err)
	}
	var nodes []uint32
	for p, err := range e.All(context.Background()) {
		if err != nil {
			b.Fatal(err)
		}
		nodes = append(nodes, p.Node)
	}
	return e, nodes
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkPredictCached: the cached path, one view read per call.
func BenchmarkPredictCached(b *testing.B) {
	e, nodes := benchEngine(b, 5000)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 1))
	lat := make([]time.Duration, 0, 1<<20)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		u := nodes[rng.IntN(len(nodes))]
		t0 := time.Now()
		p, err := e.Predict(ctx, u)
		d := time.Since(t0)
		if err != nil || p.Source != SourceView {
			b.Fatal(err, p.Source)
		}
		if len(lat) < cap(lat) {
			lat = append(lat, d)
		}
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// BenchmarkPredictCold: after a one-edge update, Predict of a node whose
// view went stale (re-sample the dirty roots, recompute those containing
// the node, write back). The update itself is not timed.
func BenchmarkPredictCold(b *testing.B) {
	for _, m := range []struct {
		name  string
		model func([]string) model.Model
	}{
		{"testmodel", func(names []string) model.Model { return newTestModel(names, 1, true) }},
		{"nets", func(names []string) model.Model { return randomNetsModel(b, names, 2, 10, 2) }},
	} {
		b.Run(m.name, func(b *testing.B) {
			s, _ := newTestGraph(b, 3000, 8, 10, 1)
			e := openEngine(b, s, m.model(featureNames(8)))
			ctx := context.Background()
			if _, err := e.Materialize(ctx); err != nil {
				b.Fatal(err)
			}
			benchColdPredict(b, e, 3000)
		})
	}
}

// randomNetsModel is a TrainedModel with freshly initialised pipeline
// networks (f, s_θ, s_φ and a baseline f): the compute cost of the real
// models, without training. For benchmarks only.
func randomNetsModel(b testing.TB, names []string, depth, fanout, steps int) *runs.TrainedModel {
	b.Helper()
	cfg, err := pipeline.Preset("synth")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Sample.Depth, cfg.Sample.Fanout, cfg.Debias.Steps = depth, fanout, steps
	d := len(names)
	rng := rand.New(rand.NewPCG(1, 2))
	m := &pipeline.Models{Config: cfg, D: d, FeatureHash: pipeline.FeatureHash(names)}
	arch := nn.GCNNetConfig{In: d, GCN: []int{64, 64}, FC: []int{64}, Out: 2}
	if m.F, err = nn.NewGCNNet[float32](arch, rng); err != nil {
		b.Fatal(err)
	}
	if m.FBase, err = nn.NewGCNNet[float32](arch, rng); err != nil {
		b.Fatal(err)
	}
	if m.ScoreX, err = nn.NewScoreX[float32](nn.DefaultScoreXConfig(d), rng); err != nil {
		b.Fatal(err)
	}
	if m.ScoreA, err = nn.NewScoreA[float32](nn.DefaultScoreAConfig(d), rng); err != nil {
		b.Fatal(err)
	}
	tm, err := runs.NewTrainedModel(m, "random-nets")
	if err != nil {
		b.Fatal(err)
	}
	return tm
}

// viewBytes sums key and value bytes of the views, per key family.
func viewBytes(b testing.TB, s storage.Store) (map[string]int64, int64) {
	it, err := s.NewIter([]byte{prefixViews}, []byte{prefixViews + 1})
	if err != nil {
		b.Fatal(err)
	}
	defer it.Close()
	fam := map[string]int64{}
	var total int64
	for ok := it.First(); ok; ok = it.Next() {
		v, _ := it.Value()
		n := int64(len(it.Key()) + len(v))
		fam[string(it.Key()[1])] += n
		total += n
	}
	return fam, total
}

// BenchmarkLargeRefreshVsMaterialize (FASD_BENCH_LARGE=1) loads the
// Pokec-sized synth graph, materializes it with the cheap test model
// (d = 3, k = 10 as on Pokec), then times one-edge update + refresh and
// updates of more edges, and measures the per-subgraph cost of the real
// networks (random weights) to extrapolate both to real models.
func BenchmarkLargeRefreshVsMaterialize(b *testing.B) {
	if os.Getenv("FASD_BENCH_LARGE") == "" {
		b.Skip("set FASD_BENCH_LARGE=1")
	}
	ctx := context.Background()
	dir := b.TempDir()
	s := querytest.LoadSynth(b, "pokec", dir)
	g, err := index.Open(s)
	if err != nil {
		b.Fatal(err)
	}
	names := g.Schema().Features
	tm := newTestModel(names, 1, true)
	tm.Spec.Sample = fasd.SampleOptions{Mode: fasd.SamplerAlg3, Depth: 3, Fanout: 10}
	e, err := Open("", &Options{Store: s, Model: tm})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	t0 := time.Now()
	rep, err := e.Materialize(ctx)
	if err != nil {
		b.Fatal(err)
	}
	full := time.Since(t0)
	v, _ := g.View()
	n := v.NumNodes()
	v.Close()
	fam, total := viewBytes(b, s)
	fmt.Printf("materialize (test model): %d subgraphs, %d node views in %s\n", rep.Subgraphs, rep.Nodes, full)
	fmt.Printf("view bytes: %d total, %.1f per node; by family %v\n", total, float64(total)/float64(n), fam)
	rng := rand.New(rand.NewPCG(9, 9))
	for _, k := range []int{1, 1, 1, 4, 16, 64, 256} {
		edges := make([][2]uint32, 0, k)
		for len(edges) < k {
			u, w := uint32(rng.IntN(n)), uint32(rng.IntN(n))
			if u != w {
				edges = append(edges, [2]uint32{u, w})
			}
		}
		t1 := time.Now()
		up, err := e.AddEdges(ctx, edges)
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		rr, err := e.Refresh(ctx)
		if err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		fmt.Printf("%4d edges: update %s (%d dirty, %d stale), refresh %s (%d subgraphs, %d views); total %s, ratio to full materialize %.0f×\n",
			k, t2.Sub(t1), up.Dirty, up.Stale, t3.Sub(t2), rr.Subgraphs, rr.Nodes, t3.Sub(t1), float64(full)/float64(t3.Sub(t1)))
	}
	// Per-subgraph cost of the real networks on Pokec-sized subgraphs.
	nets := randomNetsModel(b, names, 3, 10, 4)
	e2, err := Open("", &Options{Store: copyGraph(b, s), Model: nets, Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer e2.Close()
	v2, _ := e2.g.View()
	w, _ := e2.newWorker(v2)
	rs, _ := rootSet(v2)
	roots := rs.ToArray()
	t4 := time.Now()
	const probe = 40
	for i := range probe {
		if err := w.contribute(ctx, roots[i*len(roots)/probe]); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(t4) / probe
	v2.Close()
	fmt.Printf("real networks: %s per subgraph (1 core); full materialize of %d roots ≈ %s on 2 cores\n",
		per, len(roots), time.Duration(int64(per)*int64(len(roots))/2))
	b.ReportMetric(full.Seconds(), "materialize-s")
}

// BenchmarkMaterializeBackends: Materialize from scratch of a 2,000-node
// generated graph (mean degree 6, 8 features, the test model) with one
// worker and the default chunk sizes, on an in-memory Pebble store and on
// PostgreSQL (FASD_TEST_POSTGRES; skipped without it), reported per root,
// in all and split as RefreshReport.Times (compute, fold, node views).
// Each iteration materializes a fresh copy of the graph; the copy is not
// timed.
//
//	FASD_TEST_POSTGRES=postgres://… go test -run '^$' -bench MaterializeBackends -benchtime 3x ./query/
func BenchmarkMaterializeBackends(b *testing.B) {
	benchMaterializeBackends(b, func(b *testing.B) (storage.Store, model.Model) {
		src, _ := newTestGraph(b, 2000, 8, 6, 3)
		return src, newTestModel(featureNames(8), 1, true)
	})
}

// BenchmarkLargeMaterializeBackends (FASD_BENCH_LARGE=1) is
// BenchmarkMaterializeBackends on the 100,000-node generated graph of
// BENCHMARKS.md, "Materialize on PostgreSQL" (fasd gen --nodes 100000
// --unlabelled 0.9 --seed 1: 500k edges, 32 features, 9,985 roots), with
// the test model sampling as the trained models there do (depth 2,
// fanout 10): the store's share of a root without the diffusion.
//
//	FASD_BENCH_LARGE=1 FASD_TEST_POSTGRES=postgres://… go test -run '^$' -bench LargeMaterializeBackends -benchtime 1x -count 3 -timeout 30m ./query/
func BenchmarkLargeMaterializeBackends(b *testing.B) {
	if os.Getenv("FASD_BENCH_LARGE") == "" {
		b.Skip("set FASD_BENCH_LARGE=1")
	}
	cfg := synth.Small()
	cfg.Nodes, cfg.Unlabelled = 100_000, 0.9
	src := querytest.LoadSynthConfig(b, cfg, b.TempDir())
	g, err := index.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	m := newTestModel(g.Schema().Features, 1, true)
	m.Spec.Sample = fasd.SampleOptions{Mode: fasd.SamplerAlg3, Depth: 2, Fanout: 10}
	benchMaterializeBackends(b, func(*testing.B) (storage.Store, model.Model) { return src, m })
}

// benchMaterializeBackends times Materialize with one worker of fresh
// copies of the graph of src (called once per backend, with openMem
// opening stores of that backend) on Pebble and PostgreSQL.
func benchMaterializeBackends(b *testing.B, src func(*testing.B) (storage.Store, model.Model)) {
	for _, backend := range []storage.Backend{storage.Pebble, storage.Postgres} {
		b.Run(string(backend), func(b *testing.B) {
			prev := testBackend
			testBackend = backend
			defer func() { testBackend = prev }()
			if backend == storage.Postgres {
				storagetest.PostgresDSN(b) // skips without a server
			}
			s, m := src(b)
			ctx := context.Background()
			roots := 0
			var times RefreshTimes
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e, err := Open("", &Options{Store: copyGraph(b, s), Model: m, Workers: 1})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				rep, err := e.Materialize(ctx)
				if err != nil {
					b.Fatal(err)
				}
				roots += rep.Subgraphs
				times.Compute += rep.Times.Compute
				times.Fold += rep.Times.Fold
				times.Nodes += rep.Times.Nodes
				b.StopTimer()
				e.Close()
				b.StartTimer()
			}
			b.StopTimer()
			if roots > 0 {
				per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(roots) }
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(roots), "µs/root")
				b.ReportMetric(per(times.Compute), "compute-µs/root")
				b.ReportMetric(per(times.Fold), "fold-µs/root")
				b.ReportMetric(per(times.Nodes), "nodes-µs/root")
			}
		})
	}
}

// BenchmarkPredictReplica: the cached path of a writer and of a replica
// (Options.Replica, which reads the node's view and the state record
// together) over the same materialized store, on Pebble and, with
// FASD_TEST_POSTGRES, PostgreSQL.
//
//	FASD_TEST_POSTGRES=postgres://… go test -run '^$' -bench PredictReplica ./query/
func BenchmarkPredictReplica(b *testing.B) {
	for _, backend := range []storage.Backend{storage.Pebble, storage.Postgres} {
		b.Run(string(backend), func(b *testing.B) {
			prev := testBackend
			testBackend = backend
			defer func() { testBackend = prev }()
			if backend == storage.Postgres {
				storagetest.PostgresDSN(b) // skips without a server
			}
			w, nodes := benchEngine(b, 2000)
			r, err := Open("", &Options{Store: w.Store(), Model: w.model, Replica: &Replica{Poll: -1}})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			for _, c := range []struct {
				name string
				e    *Engine
			}{{"writer", w}, {"replica", r}} {
				b.Run(c.name, func(b *testing.B) {
					ctx := context.Background()
					rng := rand.New(rand.NewPCG(1, 1))
					lat := make([]time.Duration, 0, 1<<16)
					for i := 0; i < b.N; i++ {
						u := nodes[rng.IntN(len(nodes))]
						t0 := time.Now()
						p, err := c.e.Predict(ctx, u)
						d := time.Since(t0)
						if err != nil || p.Stale || p.Source != SourceView {
							b.Fatal(err, p.Source, p.Stale)
						}
						if len(lat) < cap(lat) {
							lat = append(lat, d)
						}
					}
					b.StopTimer()
					reportPercentiles(b, lat)
				})
			}
		})
	}
}

// BenchmarkPredictStore measures Predict on an existing, materialized store
// with its trained model: FASD_BENCH_DB=DIR (skipped without it), as
// BENCHMARKS.md does for the 1M-node graph.
//
//   - cached: a node drawn uniformly from those with a view, one view read;
//     the store is only read.
//   - cold: after a one-edge update between two random nodes, the first
//     stale node's Predict (re-sample its dirty roots, debias and classify
//     the subgraphs containing it, write back). It runs on a copy of the
//     store in a temporary directory; the update is not timed.
func BenchmarkPredictStore(b *testing.B) {
	dir := os.Getenv("FASD_BENCH_DB")
	if dir == "" {
		b.Skip("FASD_BENCH_DB not set: give a materialized store")
	}
	open := func(b *testing.B, dir string) *Engine {
		e, err := Open(dir, &Options{LoadModel: runs.LoadLatest, Storage: &storage.Options{MustExist: true}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			if err := e.Close(); err != nil {
				b.Error(err)
			}
		})
		return e
	}
	numNodes := func(b *testing.B, e *Engine) int {
		v, err := e.Graph().View()
		if err != nil {
			b.Fatal(err)
		}
		defer v.Close()
		return v.NumNodes()
	}
	b.Run("cached", func(b *testing.B) {
		e := open(b, dir)
		if !e.complete.Load() {
			b.Fatalf("%s is not materialized: cached predictions need its views", dir)
		}
		n := numNodes(b, e)
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(1, 1))
		lat := make([]time.Duration, 0, 1<<20)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			var p Prediction
			for {
				u := uint32(rng.IntN(n))
				t0 := time.Now()
				var err error
				if p, err = e.Predict(ctx, u); err != nil {
					b.Fatal(err)
				}
				if p.Source == SourceView {
					if len(lat) < cap(lat) {
						lat = append(lat, time.Since(t0))
					}
					break
				}
			}
		}
		b.StopTimer()
		reportPercentiles(b, lat)
	})
	b.Run("cold", func(b *testing.B) {
		cp := b.TempDir()
		if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
			b.Fatal(err)
		}
		e := open(b, cp)
		benchColdPredict(b, e, numNodes(b, e))
	})
}

// benchColdPredict times, b.N times, the Predict of the first stale node
// after a one-edge update between two random nodes of the first n (not
// timed) that dirtied some subgraph, and reports the percentiles.
func benchColdPredict(b *testing.B, e *Engine, n int) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 5))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for {
			u, w := uint32(rng.IntN(n)), uint32(rng.IntN(n))
			if u == w {
				continue
			}
			rep, err := e.AddEdges(ctx, [][2]uint32{{u, w}})
			if err != nil {
				b.Fatal(err)
			}
			if rep.Dirty > 0 {
				break
			}
		}
		u := e.stale.Load().Minimum()
		b.StartTimer()
		t0 := time.Now()
		p, err := e.Predict(ctx, u)
		lat = append(lat, time.Since(t0))
		if err != nil || p.Source == SourceView {
			b.Fatal(err, p.Source)
		}
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// BenchmarkMaterializeStore materializes a copy of an existing trained
// store (FASD_BENCH_DB=DIR, skipped without it) per op, with its trained
// model and the training's debias memo, as fasd materialize does; it
// reports the compute, commit (fold) and node-view times per root. Views
// the store has already are deleted from the copy first (their deletion
// marks stay in the copy's files: a little slower than right after train).
func BenchmarkMaterializeStore(b *testing.B) {
	dir := os.Getenv("FASD_BENCH_DB")
	if dir == "" {
		b.Skip("FASD_BENCH_DB not set: give a trained store")
	}
	var t RefreshTimes
	roots := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cp := filepath.Join(b.TempDir(), "db")
		if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
			b.Fatal(err)
		}
		// Drop the views of a store materialized already: the run
		// rebuilds them from the models and the memo.
		s, err := storage.Open(cp, &storage.Options{MustExist: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := errors.Join(DeleteViews(s), s.Close()); err != nil {
			b.Fatal(err)
		}
		e, err := Open(cp, &Options{LoadModel: runs.LoadLatest, Storage: &storage.Options{MustExist: true}})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := e.Materialize(context.Background())
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		if rep.Subgraphs == 0 {
			b.Fatal("nothing to materialize: give a trained store")
		}
		t.Compute += rep.Times.Compute
		t.Fold += rep.Times.Fold
		t.Nodes += rep.Times.Nodes
		roots += rep.Subgraphs
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(roots) }
	b.ReportMetric(per(t.Compute), "compute-µs/root")
	b.ReportMetric(per(t.Fold), "commit-µs/root")
	b.ReportMetric(per(t.Nodes), "nodes-µs/root")
}
