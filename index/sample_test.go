package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// densePositions is the reference: the partial Fisher–Yates shuffle of an
// explicit array [0, deg), as documented by fasd.DrawPositions.
func densePositions(deg, k int, rng *rand.Rand) []int {
	m := min(k, deg)
	p := make([]int, deg)
	for i := range p {
		p[i] = i
	}
	var out []int
	for i := 0; i < m; i++ {
		j := i + rng.IntN(deg-i)
		p[i], p[j] = p[j], p[i]
		out = append(out, p[i])
	}
	return out
}

// Ensure that drawPositions (slice and map variants) returns exactly the
// reference draw and consumes the generator identically.
func TestDrawPositions_Reference(t *testing.T) {
	for _, deg := range []int{0, 1, 2, 5, 17, 64, 65, 200, 5000} {
		for _, k := range []int{0, 1, 3, 10, 64, 65, 100, 300} {
			a, b := rand.New(rand.NewPCG(uint64(deg), uint64(k))), rand.New(rand.NewPCG(uint64(deg), uint64(k)))
			got := drawPositions(deg, k, a, nil)
			want := densePositions(deg, k, b)
			if !slices.Equal(got, want) {
				t.Fatalf("deg %d k %d: %v, want %v", deg, k, got, want)
			}
			if a.Uint64() != b.Uint64() {
				t.Fatalf("deg %d k %d: generator consumed differently", deg, k)
			}
		}
	}
}

// starGraph makes node 0 adjacent to nodes 1..deg, plus a path among
// them, on backend b.
func starGraph(t testing.TB, b storage.Backend, deg int) *Graph {
	t.Helper()
	g := newGraph(t, b)
	addNodes(t, g, deg+1)
	var edges [][2]uint32
	for i := 1; i <= deg; i++ {
		edges = append(edges, [2]uint32{0, uint32(i)})
		if i > 1 {
			edges = append(edges, [2]uint32{uint32(i - 1), uint32(i)})
		}
	}
	if _, err := g.AddEdges(context.Background(), edges); err != nil {
		t.Fatal(err)
	}
	return g
}

// Ensure that samples are distinct neighbours, never the node, of size
// min(k, deg), in the reference draw order, and deterministic per seed.
func TestView_SampleNeighbors(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			g := starGraph(t, b, 30)
			v, _ := g.View()
			defer v.Close()
			for node := range uint32(31) {
				nb, _ := v.Neighbors(node, nil)
				for _, k := range []int{0, 1, 2, 5, 30, 40} {
					rng := rand.New(rand.NewPCG(9, uint64(k)))
					got, err := v.SampleNeighbors(node, k, rng, nil)
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != min(k, len(nb)) {
						t.Fatalf("node %d k %d: %d drawn, deg %d", node, k, len(got), len(nb))
					}
					seen := map[uint32]bool{}
					for _, w := range got {
						if w == node || seen[w] || !slices.Contains(nb, w) {
							t.Fatalf("node %d k %d: bad sample %v of %v", node, k, got, nb)
						}
						seen[w] = true
					}
					var want []uint32
					for _, p := range densePositions(len(nb), k, rand.New(rand.NewPCG(9, uint64(k)))) {
						want = append(want, nb[p])
					}
					if !slices.Equal(got, want) {
						t.Fatalf("node %d k %d: %v, reference %v", node, k, got, want)
					}
				}
			}
			if _, err := v.SampleNeighbors(31, 3, rand.New(rand.NewPCG(1, 1)), nil); err == nil {
				t.Error("sampling an unknown node succeeded")
			}
		})
	}
}

// Ensure that the sample is uniform: each neighbour's inclusion count and
// the first draw's distribution pass a chi-square test (fixed seed; the
// critical values are the 0.999 quantiles of χ² with deg−1 = 9 degrees of
// freedom, 27.88, so a correct sampler fails with probability 0.002).
func TestView_SampleNeighborsUniform(t *testing.T) {
	const deg, k, trials = 10, 3, 20000
	g := starGraph(t, storage.Pebble, deg)
	v, _ := g.View()
	defer v.Close()
	rng := rand.New(rand.NewPCG(42, 42))
	incl := make([]float64, deg+1)
	first := make([]float64, deg+1)
	var buf []uint32
	for range trials {
		var err error
		buf, err = v.SampleNeighbors(0, k, rng, buf[:0])
		if err != nil {
			t.Fatal(err)
		}
		first[buf[0]]++
		for _, w := range buf {
			incl[w]++
		}
	}
	chi := func(counts []float64, expect float64) float64 {
		var s float64
		for _, c := range counts[1:] {
			s += (c - expect) * (c - expect) / expect
		}
		return s
	}
	const critical = 27.88
	if c := chi(incl, trials*k/float64(deg)); c > critical {
		t.Errorf("inclusion χ² = %.2f > %.2f: %v", c, critical, incl)
	}
	if c := chi(first, trials/float64(deg)); c > critical {
		t.Errorf("first-draw χ² = %.2f > %.2f: %v", c, critical, first)
	}
}

// Ensure that the sampled neighbours of a node with a degree over 2^16
// (several roaring containers) are right.
func TestView_SampleNeighborsLargeDegree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a node of degree 70000")
	}
	const deg = 70000
	ctx := context.Background()
	g := newGraph(t, storage.Pebble)
	nodes := make([]Node, deg+1)
	for i := range nodes {
		nodes[i] = Node{ExternalID: int64(i), Features: []float32{0, 0}}
	}
	// Badger-sized batches are not needed on Pebble: one update.
	if _, err := g.AddNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	edges := make([][2]uint32, 0, deg)
	for i := 1; i <= deg; i += 1 {
		edges = append(edges, [2]uint32{0, uint32(i)})
	}
	if _, err := g.AddEdges(ctx, edges); err != nil {
		t.Fatal(err)
	}
	v, _ := g.View()
	defer v.Close()
	got, err := v.SampleNeighbors(0, 100, rand.New(rand.NewPCG(5, 5)), nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []uint32
	for _, p := range densePositions(deg, 100, rand.New(rand.NewPCG(5, 5))) {
		want = append(want, uint32(p+1))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got[:5], want[:5])
	}
}
