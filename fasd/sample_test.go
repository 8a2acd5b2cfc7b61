package fasd

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Ensure that Mix64 is splitmix64: seeded with state 0, splitmix64's first
// outputs are Mix64(0) and Mix64(γ) with γ the golden increment.
func TestMix64_KnownVectors(t *testing.T) {
	if got := Mix64(0); got != 0xE220A8397B1DCDAF {
		t.Errorf("Mix64(0) = %#x", got)
	}
	if got := Mix64(0x9E3779B97F4A7C15); got != 0x6E789E6AA1B965F4 {
		t.Errorf("Mix64(γ) = %#x", got)
	}
}

// Ensure that derived seeds separate purposes and roots and are stable.
func TestRootSeed_Separation(t *testing.T) {
	seen := map[uint64]string{}
	for _, run := range []uint64{0, 1, 42} {
		for _, p := range []Purpose{PurposeSample, PurposeDebias} {
			for root := range uint32(50) {
				s := RootSeed(run, p, root)
				if s != DeriveSeed(run, uint64(p), uint64(root)) {
					t.Fatal("RootSeed differs from DeriveSeed")
				}
				if prev, dup := seen[s]; dup {
					t.Fatalf("seed collision with %s", prev)
				}
				seen[s] = "x"
			}
		}
	}
	a, b := NewRand(7), NewRand(7)
	for range 10 {
		if a.Uint64() != b.Uint64() {
			t.Fatal("NewRand not deterministic")
		}
	}
}

// denseDraw is the oracle for DrawPositions: a partial Fisher–Yates shuffle on
// a materialised array.
func denseDraw(deg, k int, rng *rand.Rand) []int {
	p := make([]int, deg)
	for i := range p {
		p[i] = i
	}
	m := min(k, deg)
	var out []int
	for i := range m {
		j := i + rng.IntN(deg-i)
		p[i], p[j] = p[j], p[i]
		out = append(out, p[i])
	}
	return out
}

// Ensure that DrawPositions equals a dense partial Fisher–Yates shuffle draw
// for draw and returns distinct in-range positions.
func TestDrawPositions_MatchesDenseOracle(t *testing.T) {
	for _, tc := range []struct{ deg, k int }{{0, 3}, {1, 1}, {1, 5}, {5, 2}, {5, 5}, {5, 9}, {100, 10}, {40, 40}, {1000, 30}} {
		for seed := range uint64(20) {
			got := DrawPositions(tc.deg, tc.k, NewRand(seed), nil)
			want := denseDraw(tc.deg, tc.k, NewRand(seed))
			if !slices.Equal(got, want) {
				t.Fatalf("deg %d k %d seed %d: got %v want %v", tc.deg, tc.k, seed, got, want)
			}
			if len(got) != min(tc.deg, tc.k) {
				t.Fatalf("len %d", len(got))
			}
			s := slices.Clone(got)
			slices.Sort(s)
			if len(slices.Compact(s)) != len(got) {
				t.Fatalf("duplicates in %v", got)
			}
		}
	}
}

// Ensure that every ordered pair of positions is equally likely (chi-square).
func TestDrawPositions_Uniform(t *testing.T) {
	const deg, k, draws = 5, 2, 40000
	rng := NewRand(3)
	counts := map[[2]int]int{}
	var buf []int
	for range draws {
		buf = DrawPositions(deg, k, rng, buf[:0])
		counts[[2]int{buf[0], buf[1]}]++
	}
	if len(counts) != deg*(deg-1) {
		t.Fatalf("%d distinct ordered pairs, want %d", len(counts), deg*(deg-1))
	}
	exp := float64(draws) / float64(deg*(deg-1))
	chi := 0.0
	for _, c := range counts {
		chi += (float64(c) - exp) * (float64(c) - exp) / exp
	}
	// 19 degrees of freedom: P(χ² > 43.8) ≈ 0.001.
	if chi > 43.8 {
		t.Errorf("chi-square %.1f too large", chi)
	}
}

// Ensure that NewCSRGraph merges duplicates, drops self-loops, sorts lists,
// and that SampleNeighbors follows DrawPositions on the sorted list.
func TestCSRGraph_Build(t *testing.T) {
	g, err := NewCSRGraph(5, [][2]uint32{{0, 3}, {3, 0}, {0, 1}, {2, 2}, {4, 0}, {1, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if g.NumEdges() != 4 {
		t.Errorf("NumEdges %d, want 4", g.NumEdges())
	}
	nb, _ := g.Neighbors(0, nil)
	if !slices.Equal(nb, []uint32{1, 3, 4}) {
		t.Errorf("neighbours of 0: %v", nb)
	}
	if g.Degree(2) != 0 || !g.HasEdge(3, 1) || g.HasEdge(2, 2) || g.HasEdge(9, 1) {
		t.Error("degree/HasEdge wrong")
	}
	got, _ := g.SampleNeighbors(0, 2, NewRand(5), nil)
	pos := DrawPositions(3, 2, NewRand(5), nil)
	if len(got) != 2 || got[0] != nb[pos[0]] || got[1] != nb[pos[1]] {
		t.Errorf("SampleNeighbors %v, positions %v", got, pos)
	}
	if _, err := g.SampleNeighbors(5, 2, NewRand(1), nil); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("out-of-range node: %v", err)
	}
	if _, err := NewCSRGraph(2, [][2]uint32{{0, 2}}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("bad endpoint: %v", err)
	}
}

// randomGraph returns an Erdős–Rényi graph with n nodes and edge probability
// p; nodes n-3..n-1 are left isolated.
func randomGraph(t testing.TB, n int, p float64, seed uint64) *CSRGraph {
	rng := NewRand(seed)
	var edges [][2]uint32
	for u := range n - 3 {
		for v := u + 1; v < n-3; v++ {
			if rng.Float64() < p {
				edges = append(edges, [2]uint32{uint32(u), uint32(v)})
			}
		}
	}
	g, err := NewCSRGraph(n, edges)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// recorder wraps a NeighborSampler and records each draw.
type recorder struct {
	g     NeighborSampler
	calls []uint32
	draws [][]uint32
}

func (r *recorder) SampleNeighbors(v uint32, k int, rng *rand.Rand, dst []uint32) ([]uint32, error) {
	n := len(dst)
	dst, err := r.g.SampleNeighbors(v, k, rng, dst)
	r.calls = append(r.calls, v)
	r.draws = append(r.draws, slices.Clone(dst[n:]))
	return dst, err
}

func (r *recorder) Neighbors(v uint32, dst []uint32) ([]uint32, error) {
	return r.g.(NeighborLister).Neighbors(v, dst)
}

// Ensure the invariants of docs/method.md §14 for Algorithm 3 on many roots and
// seeds: size bound, distinct nodes, at most d expansions, every edge joins
// an expanded node to one of its draws (and every such pair among members is
// an edge), min(k, deg) draws per expansion, and a valid built subgraph.
func TestSampler_Alg3Invariants(t *testing.T) {
	g := randomGraph(t, 120, 0.06, 1)
	for _, opt := range []SampleOptions{
		{Depth: 2, Fanout: 10},
		{Depth: 3, Fanout: 4},
		{Depth: 5, Fanout: 2},
		{Depth: 3, Fanout: 10, MaxNodes: 12},
	} {
		s, err := NewSampler(opt)
		if err != nil {
			t.Fatal(err)
		}
		var smp Sample
		var sg Subgraph
		for root := range uint32(g.NumNodes()) {
			rec := &recorder{g: g}
			if err := s.Sample(rec, root, NewRand(RootSeed(9, PurposeSample, root)), &smp); err != nil {
				t.Fatal(err)
			}
			checkSampleCommon(t, g, &smp, root, opt)
			if len(smp.Expanded) > opt.Depth || len(rec.calls) != len(smp.Expanded) {
				t.Fatalf("root %d: %d expanded, %d calls, depth %d", root, len(smp.Expanded), len(rec.calls), opt.Depth)
			}
			want := map[[2]int32]bool{}
			local := map[uint32]int32{}
			for l, v := range smp.Nodes {
				local[v] = int32(l)
			}
			for i, v := range rec.calls {
				if smp.Nodes[smp.Expanded[i]] != v {
					t.Fatalf("root %d: expansion %d is %d, recorded %d", root, i, smp.Nodes[smp.Expanded[i]], v)
				}
				if len(rec.draws[i]) != min(opt.Fanout, g.Degree(v)) {
					t.Fatalf("root %d: %d draws for degree %d", root, len(rec.draws[i]), g.Degree(v))
				}
				for _, w := range rec.draws[i] {
					lw, ok := local[w]
					if !ok {
						if opt.MaxNodes == 0 {
							t.Fatalf("root %d: drawn node %d missing", root, w)
						}
						continue
					}
					a, b := smp.Expanded[i], lw
					want[[2]int32{min(a, b), max(a, b)}] = true
				}
			}
			if len(want) != len(smp.Edges) {
				t.Fatalf("root %d: %d edges, want %d", root, len(smp.Edges), len(want))
			}
			for _, e := range smp.Edges {
				if !want[e] {
					t.Fatalf("root %d: unexpected edge %v", root, e)
				}
			}
			if err := BuildSubgraph(&smp, 0, &ArrayNodes{S: make([]int8, 120), Y: make([]int8, 120), Split: make([]Split, 120)}, &sg); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkSampleCommon checks the invariants shared by every mode.
func checkSampleCommon(t *testing.T, g *CSRGraph, smp *Sample, root uint32, opt SampleOptions) {
	t.Helper()
	if smp.Nodes[0] != root {
		t.Fatalf("root %d: Nodes[0] = %d", root, smp.Nodes[0])
	}
	if len(smp.Nodes) > opt.MaxSize() {
		t.Fatalf("root %d: %d nodes > bound %d", root, len(smp.Nodes), opt.MaxSize())
	}
	s := slices.Clone(smp.Nodes)
	slices.Sort(s)
	if len(slices.Compact(s)) != len(smp.Nodes) {
		t.Fatalf("root %d: duplicate nodes", root)
	}
	for i, e := range smp.Edges {
		if e[0] >= e[1] || e[0] < 0 || int(e[1]) >= len(smp.Nodes) {
			t.Fatalf("root %d: bad edge %v", root, e)
		}
		if i > 0 && !(smp.Edges[i-1][0] < e[0] || smp.Edges[i-1][0] == e[0] && smp.Edges[i-1][1] < e[1]) {
			t.Fatalf("root %d: edges not sorted/unique", root)
		}
		if !g.HasEdge(smp.Nodes[e[0]], smp.Nodes[e[1]]) {
			t.Fatalf("root %d: edge %v not in graph", root, e)
		}
	}
}

// scripted is a NeighborSampler returning fixed lists, ignoring k and rng.
type scripted map[uint32][]uint32

func (s scripted) SampleNeighbors(v uint32, k int, _ *rand.Rand, dst []uint32) ([]uint32, error) {
	return append(dst, s[v][:min(k, len(s[v]))]...), nil
}

// Ensure that Algorithm 3 is followed literally on a scripted graph:
// re-queued visited nodes cost no budget, already-present neighbours still
// give edges, and the budget counts expansions.
func TestSampler_Alg3Literal(t *testing.T) {
	g := scripted{
		10: {11},
		11: {10, 12, 13},
		12: {14, 11},
		13: {15},
	}
	tests := []struct {
		name     string
		opt      SampleOptions
		nodes    []uint32
		edges    [][2]int32
		expanded []int32
	}{
		{
			name:     "d1",
			opt:      SampleOptions{Depth: 1, Fanout: 5},
			nodes:    []uint32{10, 11},
			edges:    [][2]int32{{0, 1}},
			expanded: []int32{0},
		},
		{
			// Q: [10] → [11] → [10 12 13]; 10 is skipped for free, so 12 is
			// the third expansion.
			name:     "d3",
			opt:      SampleOptions{Depth: 3, Fanout: 5},
			nodes:    []uint32{10, 11, 12, 13, 14},
			edges:    [][2]int32{{0, 1}, {1, 2}, {1, 3}, {2, 4}},
			expanded: []int32{0, 1, 2},
		},
		{
			name:     "d3k2",
			opt:      SampleOptions{Depth: 3, Fanout: 2},
			nodes:    []uint32{10, 11, 12, 14},
			edges:    [][2]int32{{0, 1}, {1, 2}, {2, 3}},
			expanded: []int32{0, 1, 2},
		},
		{
			name:     "cap4",
			opt:      SampleOptions{Depth: 9, Fanout: 5, MaxNodes: 4},
			nodes:    []uint32{10, 11, 12, 13},
			edges:    [][2]int32{{0, 1}, {1, 2}, {1, 3}},
			expanded: []int32{0, 1, 2, 3},
		},
		{
			name:     "hop2",
			opt:      SampleOptions{Mode: SamplerHop, Depth: 2, Fanout: 5},
			nodes:    []uint32{10, 11, 12, 13},
			edges:    [][2]int32{{0, 1}, {1, 2}, {1, 3}},
			expanded: []int32{0, 1},
		},
		{
			name:     "hop3",
			opt:      SampleOptions{Mode: SamplerHop, Depth: 3, Fanout: 5},
			nodes:    []uint32{10, 11, 12, 13, 14, 15},
			edges:    [][2]int32{{0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}},
			expanded: []int32{0, 1, 2, 3},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSampler(tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			var smp Sample
			if err := s.Sample(g, 10, NewRand(1), &smp); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(smp.Nodes, tc.nodes) || !slices.Equal(smp.Edges, tc.edges) || !slices.Equal(smp.Expanded, tc.expanded) {
				t.Errorf("got nodes %v edges %v expanded %v\nwant nodes %v edges %v expanded %v",
					smp.Nodes, smp.Edges, smp.Expanded, tc.nodes, tc.edges, tc.expanded)
			}
		})
	}
}

// Ensure that an isolated root yields a one-node subgraph whose root counts
// as expanded.
func TestSampler_IsolatedRoot(t *testing.T) {
	g := randomGraph(t, 30, 0.2, 2)
	s, _ := NewSampler(SampleOptions{Depth: 2, Fanout: 10})
	var smp Sample
	if err := s.Sample(g, 29, NewRand(1), &smp); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(smp.Nodes, []uint32{29}) || len(smp.Edges) != 0 || !slices.Equal(smp.Expanded, []int32{0}) {
		t.Errorf("isolated root: %+v", smp)
	}
}

// bfsDist returns hop distances from root (−1 unreachable).
func bfsDist(g *CSRGraph, root uint32) []int {
	d := make([]int, g.NumNodes())
	for i := range d {
		d[i] = -1
	}
	d[root] = 0
	q := []uint32{root}
	for len(q) > 0 {
		v := q[0]
		q = q[1:]
		nb, _ := g.Neighbors(v, nil)
		for _, w := range nb {
			if d[w] < 0 {
				d[w] = d[v] + 1
				q = append(q, w)
			}
		}
	}
	return d
}

// Ensure the hop-mode invariants: geometric size bound, every node within d
// hops, expansions are exactly the nodes above the last level, and induced
// edges are all graph edges among the members.
func TestSampler_HopInvariants(t *testing.T) {
	g := randomGraph(t, 150, 0.04, 4)
	for _, opt := range []SampleOptions{
		{Mode: SamplerHop, Depth: 2, Fanout: 3},
		{Mode: SamplerHop, Depth: 3, Fanout: 2},
		{Mode: SamplerHop, Depth: 2, Fanout: 4, Edges: EdgesInduced},
		{Mode: SamplerHop, Depth: 3, Fanout: 5, Edges: EdgesInduced, MaxNodes: 30},
		{Mode: SamplerAlg3, Depth: 2, Fanout: 10, Edges: EdgesInduced},
	} {
		s, err := NewSampler(opt)
		if err != nil {
			t.Fatal(err)
		}
		var smp Sample
		for root := range uint32(g.NumNodes()) {
			if err := s.Sample(g, root, NewRand(RootSeed(3, PurposeSample, root)), &smp); err != nil {
				t.Fatal(err)
			}
			checkSampleCommon(t, g, &smp, root, opt)
			dist := bfsDist(g, root)
			for _, v := range smp.Nodes {
				if dist[v] < 0 || dist[v] > opt.Depth {
					t.Fatalf("root %d: node %d at distance %d > %d", root, v, dist[v], opt.Depth)
				}
			}
			n := len(smp.Nodes)
			if opt.Edges == EdgesInduced {
				if len(smp.Expanded) != n {
					t.Fatalf("root %d: induced mode lists %d of %d members as read", root, len(smp.Expanded), n)
				}
				cnt := 0
				for i := range n {
					for j := i + 1; j < n; j++ {
						if g.HasEdge(smp.Nodes[i], smp.Nodes[j]) {
							cnt++
						}
					}
				}
				if cnt != len(smp.Edges) {
					t.Fatalf("root %d: %d induced edges, want %d", root, len(smp.Edges), cnt)
				}
			}
		}
	}
}

// Ensure that sampling is deterministic per (seed, root), independent of the
// order in which roots are sampled and of buffer reuse.
func TestSampler_Deterministic(t *testing.T) {
	g := randomGraph(t, 80, 0.1, 5)
	opt := SampleOptions{Depth: 2, Fanout: 10}
	s1, _ := NewSampler(opt)
	var shared Sample
	first := map[uint32]Sample{}
	for root := range uint32(80) {
		if err := s1.Sample(g, root, NewRand(RootSeed(1, PurposeSample, root)), &shared); err != nil {
			t.Fatal(err)
		}
		first[root] = Sample{slices.Clone(shared.Nodes), slices.Clone(shared.Edges), slices.Clone(shared.Expanded)}
	}
	s2, _ := NewSampler(opt)
	for root := uint32(79); root < 80; root-- {
		var smp Sample
		if err := s2.Sample(g, root, NewRand(RootSeed(1, PurposeSample, root)), &smp); err != nil {
			t.Fatal(err)
		}
		f := first[root]
		if !slices.Equal(smp.Nodes, f.Nodes) || !slices.Equal(smp.Edges, f.Edges) || !slices.Equal(smp.Expanded, f.Expanded) {
			t.Fatalf("root %d differs between runs", root)
		}
	}
}

// Ensure that the NBA-shaped setting (d=2, k=10) on a dense graph gives
// nearly full 21-node subgraphs, as docs/method.md §2 measured (mean 20.0).
func TestSampler_DenseGraphSizes(t *testing.T) {
	g := randomGraph(t, 400, 0.13, 6)
	s, _ := NewSampler(SampleOptions{Depth: 2, Fanout: 10})
	var smp Sample
	total := 0
	for root := range uint32(397) {
		if err := s.Sample(g, root, NewRand(RootSeed(0, PurposeSample, root)), &smp); err != nil {
			t.Fatal(err)
		}
		total += len(smp.Nodes)
	}
	if mean := float64(total) / 397; mean < 19.5 || mean > 21 {
		t.Errorf("mean size %.2f", mean)
	}
}

type badSampler struct{ mode int }

func (b badSampler) SampleNeighbors(v uint32, k int, _ *rand.Rand, dst []uint32) ([]uint32, error) {
	switch b.mode {
	case 0:
		return append(dst, v), nil
	case 1:
		return append(dst, v+1, v+1), nil
	default:
		for i := range k + 1 {
			dst = append(dst, v+uint32(i)+1)
		}
		return dst, nil
	}
}

// Ensure that contract violations and missing capabilities are reported.
func TestSampler_Errors(t *testing.T) {
	s, _ := NewSampler(SampleOptions{Depth: 2, Fanout: 3})
	var smp Sample
	for mode := range 3 {
		if err := s.Sample(badSampler{mode}, 1, NewRand(1), &smp); !errors.Is(err, ErrSampler) {
			t.Errorf("mode %d: %v", mode, err)
		}
	}
	si, _ := NewSampler(SampleOptions{Depth: 2, Fanout: 3, Edges: EdgesInduced})
	if err := si.Sample(scripted{}, 1, NewRand(1), &smp); !errors.Is(err, ErrNotSupported) {
		t.Errorf("induced without lister: %v", err)
	}
	bad := SampleOptions{Mode: 7, Edges: 9, Depth: 0, Fanout: -1, MaxNodes: -2}
	err := bad.Validate()
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatal(err)
	}
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 5 {
		t.Errorf("Validate reported %d problems, want 5: %v", n, err)
	}
}

// Ensure MaxSize gives the bounds of docs/method.md §2.
func TestSampleOptions_MaxSize(t *testing.T) {
	for _, tc := range []struct {
		o    SampleOptions
		want int
	}{
		{SampleOptions{Depth: 2, Fanout: 10}, 21},
		{SampleOptions{Depth: 3, Fanout: 10}, 31},
		{SampleOptions{Mode: SamplerHop, Depth: 2, Fanout: 10}, 111},
		{SampleOptions{Mode: SamplerHop, Depth: 3, Fanout: 10}, 1111},
		{SampleOptions{Mode: SamplerHop, Depth: 3, Fanout: 10, MaxNodes: 50}, 50},
		{SampleOptions{Mode: SamplerHop, Depth: 60, Fanout: 1000}, 1 << 40},
	} {
		if got := tc.o.MaxSize(); got != tc.want {
			t.Errorf("%+v: %d want %d", tc.o, got, tc.want)
		}
	}
}

// Ensure that BuildSubgraph copies node data and sets unit weights.
func TestBuildSubgraph(t *testing.T) {
	src := &ArrayNodes{
		D:     2,
		X:     []float32{0, 1, 10, 11, 20, 21, 30, 31},
		S:     []int8{0, 1, -1, 1},
		Y:     []int8{1, -1, 0, 1},
		Split: []Split{SplitTrain, SplitNone, SplitVal, SplitTest},
	}
	smp := &Sample{Nodes: []uint32{2, 0, 3}, Edges: [][2]int32{{0, 1}, {0, 2}}, Expanded: []int32{0}}
	var sg Subgraph
	if err := BuildSubgraph(smp, 2, src, &sg); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sg.X, []float32{20, 21, 0, 1, 30, 31}) ||
		!slices.Equal(sg.A, []float32{0, 1, 1, 1, 0, 0, 1, 0, 0}) ||
		!slices.Equal(sg.S, []int8{-1, 0, 1}) || !slices.Equal(sg.Y, []int8{0, 1, 1}) ||
		!slices.Equal(sg.Split, []Split{SplitVal, SplitTrain, SplitTest}) || sg.Root() != 2 || sg.NumEdges() != 2 {
		t.Errorf("built %+v", sg)
	}
	funcs := &NodeFuncs{
		Features: func(v uint32, dst []float32) error { return src.NodeFeatures(v, dst) },
		Label:    func(v uint32) int8 { return src.Y[v] },
	}
	var sf Subgraph
	if err := BuildSubgraph(smp, 2, funcs, &sf); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sf.X, sg.X) || !slices.Equal(sf.Y, sg.Y) || !slices.Equal(sf.S, []int8{-1, -1, -1}) || sf.Split[0] != SplitNone {
		t.Errorf("NodeFuncs built %+v", sf)
	}
	if err := BuildSubgraph(&Sample{Nodes: []uint32{9}}, 2, src, &sg); !errors.Is(err, ErrShape) {
		t.Errorf("out-of-range node: %v", err)
	}
}

// Ensure that Validate catches each broken invariant.
func TestSubgraph_Validate(t *testing.T) {
	good := func() *Subgraph {
		return &Subgraph{
			Nodes: []uint32{5, 6}, D: 1, X: []float32{1, 2},
			A: []float32{0, 0.7, 0.7, 0}, S: []int8{0, 1}, Y: []int8{1, -1},
			Split: []Split{SplitTrain, SplitNone}, Expanded: []int32{0},
		}
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	nan := float32(math.NaN())
	for name, mut := range map[string]func(*Subgraph){
		"empty":     func(g *Subgraph) { g.Nodes = nil },
		"dup":       func(g *Subgraph) { g.Nodes[1] = 5 },
		"xlen":      func(g *Subgraph) { g.X = g.X[:1] },
		"xnan":      func(g *Subgraph) { g.X[1] = nan },
		"alen":      func(g *Subgraph) { g.A = g.A[:3] },
		"diag":      func(g *Subgraph) { g.A[3] = 1 },
		"asym":      func(g *Subgraph) { g.A[1] = 0.5 },
		"anan":      func(g *Subgraph) { g.A[1], g.A[2] = nan, nan },
		"s":         func(g *Subgraph) { g.S[0] = 2 },
		"y":         func(g *Subgraph) { g.Y = g.Y[:1] },
		"split":     func(g *Subgraph) { g.Split[0] = 9 },
		"splitlen":  func(g *Subgraph) { g.Split = nil },
		"exprange":  func(g *Subgraph) { g.Expanded = []int32{2} },
		"expdup":    func(g *Subgraph) { g.Expanded = []int32{1, 1} },
		"negativeD": func(g *Subgraph) { g.D = -1 },
	} {
		g := good()
		mut(g)
		if err := g.Validate(); !errors.Is(err, ErrInvalidSubgraph) {
			t.Errorf("%s: %v", name, err)
		}
	}
	c := good()
	d := c.Clone()
	d.X[0] = 9
	if c.X[0] == 9 {
		t.Error("Clone shares memory")
	}
}

// failAfter is a NeighborSampler that fails every draw after its first
// ok ones, as the query engine's read-ahead sampler fails on a node it
// does not hold yet.
type failAfter struct {
	g  NeighborSampler
	ok int
}

var errFailAfter = errors.New("not held")

func (f *failAfter) SampleNeighbors(v uint32, k int, rng *rand.Rand, dst []uint32) ([]uint32, error) {
	if f.ok == 0 {
		return dst, errFailAfter
	}
	f.ok--
	return f.g.SampleNeighbors(v, k, rng, dst)
}

func (f *failAfter) Neighbors(v uint32, dst []uint32) ([]uint32, error) {
	return f.g.(NeighborLister).Neighbors(v, dst)
}

// Ensure a draw that fails half-way leaves the sampler as good as new: for
// every mode and every point of failure, the next sample of every root
// equals a fresh sampler's (the hop sampler once left its two frontier
// buffers on one array after a failure, and the query engine's read-ahead,
// which reuses a sampler after such failures, served wrong subgraphs).
func TestSampler_ReusedAfterError(t *testing.T) {
	g := randomGraph(t, 60, 0.15, 9)
	for _, opt := range []SampleOptions{
		{Mode: SamplerAlg3, Depth: 2, Fanout: 4},
		{Mode: SamplerHop, Depth: 2, Fanout: 4},
		{Mode: SamplerHop, Depth: 3, Fanout: 3, Edges: EdgesInduced, MaxNodes: 15},
	} {
		t.Run(fmt.Sprintf("%v", opt), func(t *testing.T) {
			// Root 0's draws, to fail at each of them.
			rec := &recorder{g: g}
			s0, _ := NewSampler(opt)
			var first Sample
			if err := s0.Sample(rec, 0, NewRand(RootSeed(1, PurposeSample, 0)), &first); err != nil {
				t.Fatal(err)
			}
			if len(rec.calls) < 2 {
				t.Fatalf("root 0 takes %d draws; the test needs a graph where it takes several", len(rec.calls))
			}
			for ok := range len(rec.calls) {
				// A used sampler: its buffers have room, so appends
				// do not move them to new arrays.
				s, _ := NewSampler(opt)
				var smp Sample
				for root := range uint32(60) {
					if err := s.Sample(g, root, NewRand(RootSeed(1, PurposeSample, root)), &smp); err != nil {
						t.Fatal(err)
					}
				}
				err := s.Sample(&failAfter{g: g, ok: ok}, 0, NewRand(RootSeed(1, PurposeSample, 0)), &smp)
				if !errors.Is(err, errFailAfter) {
					t.Fatalf("failing after %d draws: %v, want the sampler's error", ok, err)
				}
				fresh, _ := NewSampler(opt)
				for root := range uint32(60) {
					var got, want Sample
					if err := s.Sample(g, root, NewRand(RootSeed(1, PurposeSample, root)), &got); err != nil {
						t.Fatal(err)
					}
					if err := fresh.Sample(g, root, NewRand(RootSeed(1, PurposeSample, root)), &want); err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got.Nodes, want.Nodes) || !slices.Equal(got.Edges, want.Edges) || !slices.Equal(got.Expanded, want.Expanded) {
						t.Fatalf("after a failure at draw %d, root %d: %v, a fresh sampler %v", ok+1, root, got.Nodes, want.Nodes)
					}
				}
			}
		})
	}
}
