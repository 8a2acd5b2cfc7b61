package index

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/storagetest"
)

var propSeed = flag.Uint64("index.seed", 1, "seed of the randomised property tests")

// newGraph creates an empty graph with two features on backend b.
func newGraph(t testing.TB, b storage.Backend) *Graph {
	t.Helper()
	g, err := Create(openMem(t, b), Schema{Features: []string{"x", "y"}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func addNodes(t testing.TB, g *Graph, n int) {
	t.Helper()
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{ExternalID: int64(1000 + i), Sensitive: int8(i%3) - 1, Label: int8(i%3) - 1, Features: []float32{float32(i), -float32(i)}}
	}
	if _, err := g.AddNodes(context.Background(), nodes); err != nil {
		t.Fatal(err)
	}
}

// Ensure that random sequences of edge inserts and deletes (in updates of
// random size) keep the stored adjacency equal to a map-of-sets oracle,
// symmetric and self-loop free, with the edge count and version right.
func TestGraph_AdjacencyOracle(t *testing.T) {
	const n, steps = 40, 60
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			seed := *propSeed
			t.Logf("seed %d (-index.seed)", seed)
			rng := rand.New(rand.NewPCG(seed, 7))
			g := newGraph(t, b)
			addNodes(t, g, n)
			oracle := make([]map[uint32]bool, n)
			for i := range oracle {
				oracle[i] = map[uint32]bool{}
			}
			edges := 0
			ver, _ := g.Version()
			ctx := context.Background()
			for step := range steps {
				var wantAdj []uint32
				ch, err := g.Update(ctx, func(tx *Tx) error {
					wantAdj = wantAdj[:0]
					for range 1 + rng.IntN(12) {
						u, w := uint32(rng.IntN(n)), uint32(rng.IntN(n))
						if u == w {
							if _, err := tx.AddEdge(u, w); !errors.Is(err, ErrSelfLoop) {
								return fmt.Errorf("self-loop accepted: %v", err)
							}
							continue
						}
						if rng.IntN(3) == 0 {
							got, err := tx.RemoveEdge(u, w)
							if err != nil {
								return err
							}
							if got != oracle[u][w] {
								return fmt.Errorf("RemoveEdge(%d,%d) = %v, oracle %v", u, w, got, oracle[u][w])
							}
							if got {
								delete(oracle[u], w)
								delete(oracle[w], u)
								edges--
								wantAdj = append(wantAdj, u, w)
							}
						} else {
							got, err := tx.AddEdge(u, w)
							if err != nil {
								return err
							}
							if got == oracle[u][w] {
								return fmt.Errorf("AddEdge(%d,%d) = %v, oracle had it: %v", u, w, got, oracle[u][w])
							}
							if got {
								oracle[u][w], oracle[w][u] = true, true
								edges++
								wantAdj = append(wantAdj, u, w)
							}
						}
					}
					return nil
				})
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if len(wantAdj) > 0 {
					ver++
				}
				if ch.Version != ver {
					t.Fatalf("step %d: version %d, want %d", step, ch.Version, ver)
				}
				for _, u := range wantAdj {
					if !ch.Adjacency.Contains(u) {
						t.Fatalf("step %d: change misses node %d", step, u)
					}
				}
				v, err := g.View()
				if err != nil {
					t.Fatal(err)
				}
				if v.NumEdges() != int64(edges) {
					t.Fatalf("step %d: %d edges, oracle %d", step, v.NumEdges(), edges)
				}
				for u := range uint32(n) {
					got, err := v.Neighbors(u, nil)
					if err != nil {
						t.Fatal(err)
					}
					var want []uint32
					for w := range oracle[u] {
						want = append(want, w)
					}
					slices.Sort(want)
					if !slices.Equal(got, want) {
						t.Fatalf("step %d: N(%d) = %v, oracle %v", step, u, got, want)
					}
				}
				if step%10 == 9 {
					if err := v.Check(ctx); err != nil {
						t.Fatalf("step %d: %v", step, err)
					}
				}
				v.Close()
			}
		})
	}
}

// Ensure that attribute updates move nodes between the node sets, bump the
// version and report the changed nodes, and that a failing update writes
// nothing.
func TestGraph_AttributeUpdates(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			g := newGraph(t, b)
			addNodes(t, g, 6)
			v0, _ := g.Version()
			ch, err := g.Update(ctx, func(tx *Tx) error {
				return errors.Join(tx.SetSensitive(0, 1), tx.SetLabel(0, 1), tx.SetSplit(0, SplitTrain),
					tx.SetFeatures(1, []float32{9, 8}), tx.SetSplit(2, SplitTest))
			})
			if err != nil {
				t.Fatal(err)
			}
			if ch.Version != v0+1 || fmt.Sprint(ch.Attributes.ToArray()) != "[0 1 2]" || !ch.Adjacency.IsEmpty() {
				t.Errorf("change %+v attrs %v", ch, ch.Attributes.ToArray())
			}
			checkGraph(t, g)
			v, _ := g.View()
			defer v.Close()
			n0, _ := v.Node(0)
			if n0.Sensitive != 1 || n0.Label != 1 || n0.Split != SplitTrain {
				t.Errorf("node 0 %+v", n0)
			}
			g1, _ := v.Group(1)
			lab, _ := v.Labelled()
			tr, _ := v.SplitSet(SplitTrain)
			if !g1.Contains(0) || !lab.Contains(0) || !tr.Contains(0) {
				t.Errorf("node 0 missing from its sets")
			}
			f, _ := v.Features(1, nil)
			if fmt.Sprint(f) != "[9 8]" {
				t.Errorf("features %v", f)
			}
			// Invalid and failing updates change nothing.
			before := storagetest.Dump(t, g.Store())
			bad := []func(tx *Tx) error{
				func(tx *Tx) error { return tx.SetFeatures(0, []float32{1}) },
				func(tx *Tx) error { return tx.SetSensitive(0, 2) },
				func(tx *Tx) error { return tx.SetLabel(99, 0) },
				func(tx *Tx) error {
					_, err := tx.AddNode(Node{ExternalID: 1000, Features: []float32{0, 0}})
					return err
				},
				func(tx *Tx) error {
					if _, err := tx.AddEdge(0, 1); err != nil {
						return err
					}
					return errors.New("caller gives up")
				},
			}
			for i, fn := range bad {
				if _, err := g.Update(ctx, fn); err == nil {
					t.Errorf("bad update %d succeeded", i)
				}
			}
			if after := storagetest.Dump(t, g.Store()); after != before {
				t.Error("failed updates changed the store")
			}
			// A no-op update keeps the version.
			ch, err = g.Update(ctx, func(tx *Tx) error { return tx.SetSensitive(0, 1) })
			if err != nil || ch.Version != v0+1 {
				t.Errorf("no-op update: %+v %v", ch, err)
			}
		})
	}
}

// Ensure that a View keeps showing the version it was taken at while
// updates commit.
func TestView_Snapshot(t *testing.T) {
	ctx := context.Background()
	g := newGraph(t, storage.Pebble)
	addNodes(t, g, 3)
	v, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := g.AddEdges(ctx, [][2]uint32{{0, 1}, {1, 2}}); err != nil {
		t.Fatal(err)
	}
	if d, _ := v.Degree(1); d != 0 || v.NumEdges() != 0 {
		t.Errorf("old view sees degree %d, %d edges", d, v.NumEdges())
	}
	v2, _ := g.View()
	defer v2.Close()
	if d, _ := v2.Degree(1); d != 2 || v2.Version() <= v.Version() {
		t.Errorf("new view degree %d version %d (old %d)", d, v2.Version(), v.Version())
	}
	if _, err := v.Degree(3); !errors.Is(err, ErrNodeRange) {
		t.Errorf("out of range: %v", err)
	}
	v.Close()
	if _, err := v.Degree(0); !errors.Is(err, ErrClosed) {
		t.Errorf("after close: %v", err)
	}
}

// Ensure that SplitOf, which decodes the split bitmaps once per View, agrees
// with SplitSet for every node, keeps showing the View's version after an
// update moves nodes, and fails with ErrClosed after Close.
func TestView_SplitOf(t *testing.T) {
	const n = 300
	ctx := context.Background()
	g := newGraph(t, storage.Pebble)
	addNodes(t, g, n)
	rng := rand.New(rand.NewPCG(5, 7))
	assign := func(tx *Tx) error {
		for u := range uint32(n) {
			if int8(u%3)-1 < 0 {
				continue // unlabelled: no split
			}
			if err := tx.SetSplit(u, Splits[rng.IntN(len(Splits))]); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := g.Update(ctx, assign); err != nil {
		t.Fatal(err)
	}
	check := func(v *View) map[uint32]Split {
		t.Helper()
		want := make(map[uint32]Split)
		for _, sp := range Splits {
			bm, err := v.SplitSet(sp)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range bm.ToArray() {
				want[u] = sp
			}
		}
		for u := range uint32(n) {
			got, err := v.SplitOf(u)
			if err != nil {
				t.Fatal(err)
			}
			w, ok := want[u]
			if !ok {
				w = SplitNone
			}
			nd, err := v.Node(u)
			if err != nil {
				t.Fatal(err)
			}
			if got != w || nd.Split != w {
				t.Fatalf("node %d: SplitOf %v, Node %v, SplitSet says %v", u, got, nd.Split, w)
			}
		}
		return want
	}
	v, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	before := check(v)
	if len(before) == 0 {
		t.Fatal("no node got a split")
	}
	if _, err := g.Update(ctx, assign); err != nil {
		t.Fatal(err)
	}
	if again := check(v); !maps.Equal(again, before) {
		t.Error("the old view's splits changed after an update")
	}
	v2, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	if after := check(v2); maps.Equal(after, before) {
		t.Error("the update moved no node (the test needs it to)")
	}
	v.Close()
	if _, err := v.SplitOf(0); !errors.Is(err, ErrClosed) {
		t.Errorf("SplitOf after close: %v", err)
	}
}

// Ensure that Layers, Ball and HopDistances agree with a plain BFS over an
// explicit adjacency list on a random graph.
func TestView_BFS(t *testing.T) {
	const n = 60
	ctx := context.Background()
	g := newGraph(t, storage.Pebble)
	addNodes(t, g, n)
	rng := rand.New(rand.NewPCG(3, 3))
	var edges [][2]uint32
	adj := make([][]uint32, n)
	for range 70 {
		u, w := uint32(rng.IntN(n)), uint32(rng.IntN(n))
		if u != w && !slices.Contains(adj[u], w) {
			edges = append(edges, [2]uint32{u, w})
			adj[u], adj[w] = append(adj[u], w), append(adj[w], u)
		}
	}
	if _, err := g.AddEdges(ctx, edges); err != nil {
		t.Fatal(err)
	}
	v, _ := g.View()
	defer v.Close()
	for src := range uint32(n) {
		for hops := range 4 {
			want := map[uint32]int{src: 0}
			frontier := []uint32{src}
			for d := 1; d <= hops; d++ {
				var next []uint32
				for _, u := range frontier {
					for _, w := range adj[u] {
						if _, ok := want[w]; !ok {
							want[w] = d
							next = append(next, w)
						}
					}
				}
				frontier = next
			}
			got, err := v.HopDistances(src, hops)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("src %d hops %d: %v, want %v", src, hops, got, want)
			}
			ball, _ := v.Ball(src, hops)
			if int(ball.GetCardinality()) != len(want) {
				t.Fatalf("ball size %d, want %d", ball.GetCardinality(), len(want))
			}
		}
	}
}

// Ensure that Attributes, one read of a node's record, agrees with
// Features, Sensitive and Label for every combination of sensitive value
// and label, appends to dst, and fails on a node out of range.
func TestView_Attributes(t *testing.T) {
	g := newGraph(t, storage.Pebble)
	nodes := make([]Node, 9)
	for i := range nodes {
		nodes[i] = Node{ExternalID: int64(i), Sensitive: int8(i%3) - 1, Label: int8(i/3) - 1, Features: []float32{float32(i), 0.5}}
	}
	if _, err := g.AddNodes(context.Background(), nodes); err != nil {
		t.Fatal(err)
	}
	v, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for u, nd := range nodes {
		f, s, y, err := v.Attributes(uint32(u), []float32{-1})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := v.Features(uint32(u), []float32{-1})
		ws, _ := v.Sensitive(uint32(u))
		wy, _ := v.Label(uint32(u))
		if fmt.Sprint(f) != fmt.Sprint(want) || s != ws || y != wy || s != nd.Sensitive || y != nd.Label {
			t.Errorf("node %d: Attributes %v %d %d; Features %v, Sensitive %d, Label %d; stored %d %d", u, f, s, y, want, ws, wy, nd.Sensitive, nd.Label)
		}
	}
	if _, _, _, err := v.Attributes(uint32(len(nodes)), nil); !errors.Is(err, ErrNodeRange) {
		t.Errorf("out of range: %v", err)
	}
}
