package fasd

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// Ensure a hand-computed average and NaN for uncovered nodes.
func TestAveragePredictions_Hand(t *testing.T) {
	sets := []SubgraphProbs{
		{Root: 3, Nodes: []uint32{3, 0}, P: []float32{0.2, 0.8, 0.6, 0.4}},
		{Root: 0, Nodes: []uint32{0, 1, 3}, P: []float32{0.5, 0.5, 0.1, 0.9, 0.4, 0.6}},
	}
	dst := make([]float64, 5*2)
	cnt := make([]int32, 5)
	if err := AveragePredictions(sets, 5, 2, dst, cnt); err != nil {
		t.Fatal(err)
	}
	f := func(v float32) float64 { return float64(v) }
	want := []float64{
		(f(0.5) + f(0.6)) / 2, (f(0.5) + f(0.4)) / 2,
		f(0.1), f(0.9),
		math.NaN(), math.NaN(),
		(f(0.4) + f(0.2)) / 2, (f(0.6) + f(0.8)) / 2,
		math.NaN(), math.NaN(),
	}
	for i := range want {
		if !(dst[i] == want[i] || math.IsNaN(dst[i]) && math.IsNaN(want[i])) {
			t.Errorf("dst[%d] = %v, want %v", i, dst[i], want[i])
		}
	}
	if !slices.Equal(cnt, []int32{2, 1, 0, 2, 0}) {
		t.Errorf("counts %v", cnt)
	}
	sets[1].Root = 3
	if err := AveragePredictions(sets, 5, 2, dst, cnt); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("duplicate root: %v", err)
	}
	sets[1].Root = 0
	sets[1].Nodes[0] = 7
	if err := AveragePredictions(sets, 5, 2, dst, cnt); !errors.Is(err, ErrShape) {
		t.Errorf("node out of range: %v", err)
	}
}

// Ensure that the averages are bit-identical under any order of the
// subgraphs, and equal AverageNode on each node's contributions (the
// incremental path of the query engine).
func TestAveragePredictions_OrderIndependent(t *testing.T) {
	const numNodes, classes, subgraphs = 60, 2, 40
	rng := NewRand(1)
	sets := make([]SubgraphProbs, subgraphs)
	for i := range sets {
		root := uint32(rng.IntN(1 << 20))
		for slices.ContainsFunc(sets[:i], func(s SubgraphProbs) bool { return s.Root == root }) {
			root++
		}
		n := 1 + rng.IntN(20)
		perm := rng.Perm(numNodes)[:n]
		sp := SubgraphProbs{Root: root}
		for _, v := range perm {
			sp.Nodes = append(sp.Nodes, uint32(v))
			p := float32(rng.Float64())
			sp.P = append(sp.P, 1-p, p)
		}
		sets[i] = sp
	}
	ref := make([]float64, numNodes*classes)
	cnt := make([]int32, numNodes)
	if err := AveragePredictions(sets, numNodes, classes, ref, cnt); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, numNodes*classes)
	for range 10 {
		rng.Shuffle(len(sets), func(i, j int) { sets[i], sets[j] = sets[j], sets[i] })
		if err := AveragePredictions(sets, numNodes, classes, got, cnt); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(ref[i]) {
				t.Fatalf("entry %d differs after shuffle: %v vs %v", i, got[i], ref[i])
			}
		}
	}
	perNode := make([][]NodeContribution, numNodes)
	for _, sp := range sets {
		for l, v := range sp.Nodes {
			perNode[v] = append(perNode[v], NodeContribution{Root: sp.Root, P: sp.P[l*classes : (l+1)*classes]})
		}
	}
	one := make([]float64, classes)
	for v := range numNodes {
		rng.Shuffle(len(perNode[v]), func(i, j int) { perNode[v][i], perNode[v][j] = perNode[v][j], perNode[v][i] })
		if err := AverageNode(perNode[v], one); err != nil {
			t.Fatal(err)
		}
		for c := range classes {
			if math.Float64bits(one[c]) != math.Float64bits(ref[v*classes+c]) {
				t.Fatalf("node %d class %d: AverageNode %v, AveragePredictions %v", v, c, one[c], ref[v*classes+c])
			}
		}
	}
	if err := AverageNode([]NodeContribution{{Root: 1, P: []float32{1}}}, one); !errors.Is(err, ErrShape) {
		t.Errorf("class mismatch: %v", err)
	}
}
