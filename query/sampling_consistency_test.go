package query

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/storage"
)

// Ensure that sampling from the store (index.View, roaring Select) and from
// the in-memory fasd.CSRGraph draws the same neighbours and the same
// subgraphs for the same seeds: the query engine relies on the two being
// interchangeable, and index may not import fasd to share the code.
func TestSampling_IndexMatchesCSR(t *testing.T) {
	ctx := context.Background()
	st, err := storage.Open("", &storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g, err := index.Create(st, index.Schema{Features: []string{"f"}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	rng := rand.New(rand.NewPCG(7, 7))
	nodes := make([]index.Node, n)
	for i := range nodes {
		nodes[i] = index.Node{ExternalID: int64(i), Sensitive: int8(i % 2), Label: -1, Features: []float32{0}}
	}
	if _, err := g.AddNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	var edges [][2]uint32
	for i := 0; i < 4000; i++ {
		u, v := uint32(rng.IntN(n)), uint32(rng.IntN(n))
		if u%50 == 0 { // a few hubs with degrees well above k and above 64
			v = uint32(rng.IntN(n))
		}
		if u != v {
			edges = append(edges, [2]uint32{u, v})
		}
	}
	for i := uint32(1); i < n; i++ {
		edges = append(edges, [2]uint32{0, i}) // node 0 has degree n-1
	}
	if _, err := g.AddEdges(ctx, edges); err != nil {
		t.Fatal(err)
	}
	csr, err := fasd.NewCSRGraph(n, edges)
	if err != nil {
		t.Fatal(err)
	}
	view, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()

	for _, k := range []int{1, 3, 10, 80, 400} {
		for v := uint32(0); v < n; v++ {
			seed := fasd.RootSeed(11, fasd.PurposeSample, v) + uint64(k)
			a, err := view.SampleNeighbors(v, k, fasd.NewRand(seed), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := csr.SampleNeighbors(v, k, fasd.NewRand(seed), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a, b) {
				t.Fatalf("k=%d node %d: index drew %v, CSR drew %v", k, v, a, b)
			}
		}
	}
	for _, opt := range []fasd.SampleOptions{
		{Mode: fasd.SamplerAlg3, Depth: 2, Fanout: 10},
		{Mode: fasd.SamplerAlg3, Depth: 3, Fanout: 10},
		{Mode: fasd.SamplerHop, Depth: 2, Fanout: 5, Edges: fasd.EdgesInduced, MaxNodes: 40},
	} {
		smp, err := fasd.NewSampler(opt)
		if err != nil {
			t.Fatal(err)
		}
		var sa, sb fasd.Sample
		for root := uint32(0); root < n; root += 7 {
			seed := fasd.RootSeed(3, fasd.PurposeSample, root)
			if err := smp.Sample(view, root, fasd.NewRand(seed), &sa); err != nil {
				t.Fatal(err)
			}
			if err := smp.Sample(csr, root, fasd.NewRand(seed), &sb); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sa.Nodes, sb.Nodes) || !slices.Equal(sa.Edges, sb.Edges) || !slices.Equal(sa.Expanded, sb.Expanded) {
				t.Fatalf("%+v root %d: index sample %v / CSR sample %v", opt, root, sa.Nodes, sb.Nodes)
			}
		}
	}
}
