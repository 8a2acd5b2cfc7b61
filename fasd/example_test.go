package fasd_test

import (
	"fmt"
	"slices"

	"github.com/fasd-db/fasd/fasd"
)

// Sample the Algorithm-3 subgraph of a root and build its Subgraph.
func ExampleSampler_Sample() {
	g, _ := fasd.NewCSRGraph(5, [][2]uint32{{0, 1}, {1, 2}, {1, 3}, {3, 4}})
	s, _ := fasd.NewSampler(fasd.SampleOptions{Depth: 2, Fanout: 10})
	var smp fasd.Sample
	rng := fasd.NewRand(fasd.RootSeed(42, fasd.PurposeSample, 0))
	if err := s.Sample(g, 0, rng, &smp); err != nil {
		panic(err)
	}
	nodes := slices.Clone(smp.Nodes)
	slices.Sort(nodes)
	src := &fasd.ArrayNodes{
		D:     1,
		X:     []float32{0, 1, 2, 3, 4},
		S:     []int8{0, 1, 0, 1, -1},
		Y:     []int8{1, 0, -1, 1, 0},
		Split: []fasd.Split{fasd.SplitTrain, fasd.SplitVal, fasd.SplitNone, fasd.SplitTest, fasd.SplitNone},
	}
	var sg fasd.Subgraph
	if err := fasd.BuildSubgraph(&smp, 1, src, &sg); err != nil {
		panic(err)
	}
	fmt.Println("nodes:", nodes, "edges:", sg.NumEdges(), "expanded:", len(sg.Expanded))
	// Output: nodes: [0 1 2 3] edges: 3 expanded: 2
}

// Compute the fairness metrics of a set of test predictions.
func ExampleEvaluate() {
	s := []int8{0, 0, 0, 0, 1, 1, 1, 1}
	y := []int8{1, 1, 0, 0, 1, 1, 0, 0}
	pred := []int8{1, 0, 0, 1, 1, 1, 1, 0}
	m, _ := fasd.Evaluate(pred, y, s)
	fmt.Printf("Acc %.1f  ΔDP %.1f  ΔEO %.1f\n", 100*m.Acc, 100*m.DP, 100*m.EO)
	// Output: Acc 62.5  ΔDP 25.0  ΔEO 50.0
}

// The default reverse grid for NBA (N_steps = 5, Δt_rev = 0.01).
func ExampleDebiaser_Grid() {
	d, _ := fasd.NewDebiaser(fasd.DebiasOptions{Steps: 5})
	for _, st := range d.Grid() {
		fmt.Printf("t=%.2f dt=%.2f\n", st.T, st.Dt)
	}
	// Output:
	// t=0.05 dt=0.01
	// t=0.04 dt=0.01
	// t=0.03 dt=0.01
	// t=0.02 dt=0.01
	// t=0.01 dt=0.01
}
