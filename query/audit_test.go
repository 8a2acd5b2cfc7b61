package query

import (
	"context"
	"math"
	"testing"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/index"
)

// TestAuditMatchesEvaluate checks the bitmap audit against fasd's
// slice-based metrics on the oracle's averages.
func TestAuditMatchesEvaluate(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 300, 4, 4, 12)
	m := newTestModel(featureNames(4), 8, true)
	e := openEngine(t, s, m)
	if _, err := e.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	o := oracle(t, g, m)
	v, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	n := v.NumNodes()
	y, sens := make([]int8, n), make([]int8, n)
	p1, b1 := make([]float64, n), make([]float64, n)
	for u := range uint32(n) {
		y[u], _ = v.Label(u)
		sens[u], _ = v.Sensitive(u)
		p1[u], b1[u] = o.fair[2*u+1], o.others["no_diffusion"][2*u+1]
	}
	for _, set := range []string{"test", "labelled"} {
		var bm interface{ ToArray() []uint32 }
		if set == "test" {
			bm, err = v.SplitSet(index.SplitTest)
		} else {
			bm, err = v.Labelled()
		}
		if err != nil {
			t.Fatal(err)
		}
		var nodes []uint32
		for _, u := range bm.ToArray() {
			if sens[u] >= 0 && y[u] >= 0 && o.counts[u] > 0 {
				nodes = append(nodes, u)
			}
		}
		rep, err := e.Audit(ctx, set)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Nodes != len(nodes) || rep.Variants["no_diffusion"] == nil || len(rep.Variants) != 1 {
			t.Fatalf("%s: %d nodes, want %d", set, rep.Nodes, len(nodes))
		}
		for name, pair := range map[string]struct {
			got  Metrics
			prob []float64
		}{"fair": {rep.Fair, p1}, "no_diffusion": {*rep.Variants["no_diffusion"], b1}} {
			want, err := fasd.EvaluateNodes(pair.prob, y, sens, nodes)
			if err != nil {
				t.Fatal(err)
			}
			got := pair.got
			same := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 || (math.IsNaN(a) && math.IsNaN(b)) }
			if !same(got.Acc, want.Acc) || !same(got.DP, want.DP) || !same(got.EO, want.EO) {
				t.Fatalf("%s %s: audit %+v, evaluate %+v", set, name, got, want)
			}
			for s := range 2 {
				if got.Groups[s].N != want.Groups[s].N || !same(got.Groups[s].Acc, want.Groups[s].Acc) || !same(got.Groups[s].TPR, want.Groups[s].TPR) {
					t.Fatalf("%s %s group %d: %+v vs %+v", set, name, s, got.Groups[s], want.Groups[s])
				}
			}
		}
	}
	if _, err := e.Audit(ctx, "bogus"); err == nil {
		t.Fatal("bogus set accepted")
	}
}
