package query

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query/model"
	"github.com/fasd-db/fasd/query/querytest"
	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// testModel is querytest's deterministic stand-in for trained models.
type testModel = querytest.Model

func newTestModel(names []string, seed uint64, baseline bool) *testModel {
	return querytest.NewModel(names, seed, baseline)
}

// testBackend is the storage engine of openMem ("" = the default, Pebble);
// tests that run on every backend set it (no test here runs in parallel).
var testBackend storage.Backend

// onEveryBackend runs f as a subtest per storage backend, with openMem
// (and so newTestGraph and copyGraph) opening stores of that backend; the
// postgres subtest is skipped without a server (storagetest.PostgresEnv).
func onEveryBackend(t *testing.T, f func(t *testing.T)) {
	onBackends(t, []storage.Backend{storage.Pebble, storage.Badger, storage.Postgres}, f)
}

// onBackends runs f as a subtest per backend of bs, as onEveryBackend.
func onBackends(t *testing.T, bs []storage.Backend, f func(t *testing.T)) {
	for _, b := range bs {
		t.Run(string(b), func(t *testing.T) {
			if b == storage.Postgres {
				storagetest.PostgresDSN(t) // skips without a server
			}
			prev := testBackend
			testBackend = b
			defer func() { testBackend = prev }()
			f(t)
		})
	}
}

func openMem(t testing.TB) storage.Store {
	t.Helper()
	return querytest.OpenMem(t, testBackend)
}

func featureNames(d int) []string { return querytest.FeatureNames(d) }

// newTestGraph builds a random graph of n nodes with about deg·n/2 edges in
// an in-memory store (querytest.NewGraph).
func newTestGraph(t testing.TB, n, d int, deg float64, seed uint64) (storage.Store, *index.Graph) {
	t.Helper()
	s := openMem(t)
	return s, querytest.NewGraph(t, s, n, d, deg, seed)
}

// oracleResult is the from-scratch computation of every view in memory,
// independent of the engine: a CSR copy of the graph, fasd's sampler,
// the model and fasd.AveragePredictions.
type oracleResult struct {
	counts []int32
	fair   []float64 // n×2, the served variant
	// others are the other variants' n×2 probabilities, by name.
	others map[string][]float64
	sets   map[uint32]fasd.SubgraphProbs
}

func oracle(t testing.TB, g *index.Graph, m model.Model) *oracleResult {
	t.Helper()
	v, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	n, d := v.NumNodes(), v.NumFeatures()
	var edges [][2]uint32
	arr := &fasd.ArrayNodes{D: d, X: make([]float32, 0, n*d), S: make([]int8, n), Y: make([]int8, n), Split: make([]fasd.Split, n)}
	var roots []uint32
	for u := range uint32(n) {
		nb, err := v.Neighbors(u, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range nb {
			if u < w {
				edges = append(edges, [2]uint32{u, w})
			}
		}
		node, err := v.Node(u)
		if err != nil {
			t.Fatal(err)
		}
		arr.X = append(arr.X, node.Features...)
		arr.S[u], arr.Y[u], arr.Split[u] = node.Sensitive, node.Label, node.Split
		if node.Split != index.SplitNone || (node.Label >= 0 && node.Sensitive >= 0) {
			roots = append(roots, u)
		}
	}
	csr, err := fasd.NewCSRGraph(n, edges)
	if err != nil {
		t.Fatal(err)
	}
	info := m.Info()
	smp, err := fasd.NewSampler(info.Sample)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := m.NewScorer()
	if err != nil {
		t.Fatal(err)
	}
	names := info.VariantNames()
	res := &oracleResult{counts: make([]int32, n), fair: make([]float64, 2*n), others: map[string][]float64{}, sets: map[uint32]fasd.SubgraphProbs{}}
	perVariant := make([][]fasd.SubgraphProbs, len(names))
	// Reverse order: the result must not depend on the order of roots.
	for i := len(roots) - 1; i >= 0; i-- {
		r := roots[i]
		var sample fasd.Sample
		if err := smp.Sample(csr, r, fasd.NewRand(fasd.RootSeed(info.Seed, fasd.PurposeSample, r)), &sample); err != nil {
			t.Fatal(err)
		}
		var sg fasd.Subgraph
		if err := fasd.BuildSubgraph(&sample, d, arr, &sg); err != nil {
			t.Fatal(err)
		}
		var c model.Contribution
		if err := sc.Contribute(context.Background(), &sg, fasd.NewRand(fasd.RootSeed(info.Seed, fasd.PurposeDebias, r)), &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Probs) != len(names) {
			t.Fatalf("scorer returned %d variants, info names %d", len(c.Probs), len(names))
		}
		nodes := append([]uint32(nil), sample.Nodes...)
		for k, p := range c.Probs {
			sp := fasd.SubgraphProbs{Root: r, Nodes: nodes, P: append([]float32(nil), p...)}
			perVariant[k] = append(perVariant[k], sp)
			if k == 0 {
				res.sets[r] = sp
			}
		}
	}
	if err := fasd.AveragePredictions(perVariant[0], n, 2, res.fair, res.counts); err != nil {
		t.Fatal(err)
	}
	for k := 1; k < len(names); k++ {
		counts := make([]int32, n)
		res.others[names[k]] = make([]float64, 2*n)
		if err := fasd.AveragePredictions(perVariant[k], n, 2, res.others[names[k]], counts); err != nil {
			t.Fatal(err)
		}
	}
	return res
}

// matches reports whether a prediction read from a view equals the oracle
// bit for bit (probabilities, baseline and count).
func (o *oracleResult) matches(p Prediction) bool {
	u := p.Node
	if int(u) >= len(o.counts) || int(o.counts[u]) != p.Subgraphs || o.counts[u] == 0 {
		return false
	}
	if len(p.Variants) != len(o.others) {
		return false
	}
	for c := range 2 {
		if math.Float64bits(p.Probs[c]) != math.Float64bits(o.fair[2*int(u)+c]) {
			return false
		}
		for name, want := range o.others {
			got, ok := p.Variants[name]
			if !ok || math.Float64bits(got[c]) != math.Float64bits(want[2*int(u)+c]) {
				return false
			}
		}
	}
	return true
}

// checkViews checks every stored node view against the oracle: a view that
// is not marked stale must be exact, and with complete views every node in
// some subgraph must have one. It returns the number of stale views.
func checkViews(t *testing.T, e *Engine, o *oracleResult, step string) int {
	t.Helper()
	seen := make(map[uint32]bool)
	stale := 0
	for p, err := range e.All(context.Background()) {
		if err != nil {
			t.Fatalf("%s: All: %v", step, err)
		}
		seen[p.Node] = true
		if p.Stale {
			stale++
			continue
		}
		if !o.matches(p) {
			debugDiff(t, e, o, p.Node)
			t.Fatalf("%s: node %d: view %v×%d, oracle %v×%d", step, p.Node, p.Probs, p.Subgraphs,
				o.fair[2*p.Node:2*p.Node+2], o.counts[p.Node])
		}
	}
	if e.complete.Load() {
		staleSet := e.stale.Load()
		for u, c := range o.counts {
			if c > 0 && !seen[uint32(u)] && !staleSet.Contains(uint32(u)) {
				t.Fatalf("%s: node %d is in %d subgraphs but has no view", step, u, c)
			}
		}
	}
	return stale
}

// copyGraph copies the graph's keys (not the views) of src into a new
// in-memory store.
func copyGraph(t testing.TB, src storage.Store) storage.Store {
	t.Helper()
	dst := openMem(t)
	storagetest.Copy(t, dst, src, prefixViews)
	return dst
}

// dumpViews renders the view keys of s, with the graph-version fields of
// root records and node views (the version at which each was computed,
// which legitimately differs between an incremental history and a
// rebuild) zeroed.
func dumpViews(t testing.TB, s storage.Store) string {
	t.Helper()
	it, err := s.NewIter([]byte{prefixViews}, []byte{prefixViews + 1})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out bytes.Buffer
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		v, err := it.Value()
		if err != nil {
			t.Fatal(err)
		}
		v = append([]byte(nil), v...)
		if len(k) == 6 && (k[1] == famRoot || k[1] == famNode) {
			clear(v[6:14])
		}
		if len(k) == 2 && k[1] == famState {
			continue // the state records versions of the history
		}
		fmt.Fprintf(&out, "%x=%x\n", k, v)
	}
	return out.String()
}

// debugDiff logs why a view differs from the oracle.
func debugDiff(t *testing.T, e *Engine, o *oracleResult, u uint32) {
	cb, _ := getBitmap(e.store, containKey(u))
	dirty, _ := getBitmap(e.store, keyDirty)
	stored, _ := getBitmap(e.store, keyRoots)
	var want []uint32
	for r, sp := range o.sets {
		for _, m := range sp.Nodes {
			if m == u {
				want = append(want, r)
			}
		}
	}
	t.Logf("node %d: stored contain %v, oracle roots %v, dirty %v, complete %v stale %v", u, cb.ToArray(), want, dirty.ToArray(), e.complete.Load(), e.stale.Load().Contains(u))
	for _, r := range want {
		rec, _ := getRootRecord(e.store, r)
		t.Logf("root %d stored=%v rec=%+v oracle=%v", r, stored.Contains(r), rec, o.sets[r].Nodes)
	}
}
