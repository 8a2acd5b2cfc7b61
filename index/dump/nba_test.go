package dump

import (
	"context"
	"math"
	"testing"
)

const nbaDir = "../../../shared/datasets/nba"

// Ensure that the real NBA dump loads with the preset and matches the
// figures of shared/datasets/README.md.
func TestNBA(t *testing.T) {
	p, err := LookupPreset("nba")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := FindFile(nbaDir, p.NodeFile)
	if err != nil {
		t.Skip("NBA dump not present:", err)
	}
	edges, err := FindFile(nbaDir, p.EdgeFile)
	if err != nil {
		t.Skip("NBA dump not present:", err)
	}
	tab, err := AnalyzeFile(context.Background(), nodes, p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Rows != 403 || tab.Features() != 95 {
		t.Errorf("rows %d features %d, want 403 95", tab.Rows, tab.Features())
	}
	if tab.Groups != [2]int{296, 107} || tab.UnknownSensitive != 0 {
		t.Errorf("groups %v unknown %d", tab.Groups, tab.UnknownSensitive)
	}
	if tab.Labels != [2]int{154, 159} || tab.NumUnlabelled != 90 {
		t.Errorf("labels %v unlabelled %d", tab.Labels, tab.NumUnlabelled)
	}
	// Joint counts from the README: (s,y) → n.
	joint := map[[2]int]int{{0, 1}: 119, {0, 0}: 111, {0, -1}: 66, {1, 0}: 43, {1, 1}: 40, {1, -1}: 24}
	for k, n := range joint {
		if got := tab.Joint[k[0]+1][k[1]+1]; got != n {
			t.Errorf("joint %v = %d, want %d", k, got, n)
		}
	}
	rr, err := tab.OpenRows(nodes)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	rows := 0
	// Every column is non-constant, so each reaches both -1 and 1.
	lo, hi := make([]float32, 95), make([]float32, 95)
	for rr.Next() {
		r := rr.Row()
		for j, x := range r.Features {
			if math.IsNaN(float64(x)) || x < -1 || x > 1 {
				t.Fatalf("row %d feature %s = %v", r.Index, tab.FeatureNames[j], x)
			}
			lo[j], hi[j] = min(lo[j], x), max(hi[j], x)
		}
		rows++
	}
	if rr.Err() != nil || rows != 403 {
		t.Fatalf("%d rows, %v", rows, rr.Err())
	}
	for j := range lo {
		if lo[j] != -1 || hi[j] != 1 {
			t.Errorf("feature %s spans [%v, %v]", tab.FeatureNames[j], lo[j], hi[j])
		}
	}
	er, err := OpenEdges(edges)
	if err != nil {
		t.Fatal(err)
	}
	defer er.Close()
	n, unknown, self := 0, 0, 0
	undirected := map[[2]int]bool{}
	deg := make([]int, tab.Rows)
	for er.Next() {
		u, v := er.Edge()
		ru, ok1 := tab.Resolve(u)
		rv, ok2 := tab.Resolve(v)
		n++
		switch {
		case !ok1 || !ok2:
			unknown++
		case ru == rv:
			self++
		case !undirected[[2]int{min(ru, rv), max(ru, rv)}]:
			undirected[[2]int{min(ru, rv), max(ru, rv)}] = true
			deg[ru]++
			deg[rv]++
		}
	}
	isolated := 0
	for _, d := range deg {
		if d == 0 {
			isolated++
		}
	}
	if er.Err() != nil || n != 16570 || unknown != 0 || self != 0 || len(undirected) != 10621 || isolated != 3 {
		t.Errorf("edge lines %d unknown %d self %d undirected %d isolated %d, err %v",
			n, unknown, self, len(undirected), isolated, er.Err())
	}
}
