package index

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// Ensure that DeleteNode removes a node's edges, takes it out of every
// node set and the id map, leaves a tombstone that View.Check accepts, and
// refuses further use of the id; that its external id can be reused, also
// within the same update; and that a node added and deleted by one update
// leaves a consistent graph.
func TestTx_DeleteNode(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := openMem(t, b)
			if _, err := Load(context.Background(), s, smallOptions(t, smallNodes, smallEdges)); err != nil {
				t.Fatal(err)
			}
			g, err := Open(s)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			ch, err := g.Update(ctx, func(tx *Tx) error {
				id, err := tx.InternalID(20)
				if err != nil {
					return err
				}
				return tx.DeleteNode(id)
			})
			if err != nil {
				t.Fatal(err)
			}
			if ch.Deleted.String() != "{1}" || !slices.Equal(ch.DeletedIDs, []int64{20}) || ch.EdgesRemoved != 2 ||
				!ch.Adjacency.Contains(0) || !ch.Adjacency.Contains(2) || !ch.Attributes.Contains(1) {
				t.Fatalf("change %+v", ch)
			}
			checkGraph(t, g)
			v, _ := g.View()
			if _, err := v.InternalID(20); !errors.Is(err, ErrUnknownID) {
				t.Errorf("InternalID of a deleted node: %v", err)
			}
			if del, _ := v.IsDeleted(1); !del {
				t.Error("IsDeleted(1) = false")
			}
			n, _ := v.Node(1)
			if n.ExternalID != 20 || n.Sensitive != Unknown || n.Label != Unlabelled || n.Split != SplitNone || slices.ContainsFunc(n.Features, func(f float32) bool { return f != 0 }) {
				t.Errorf("tombstone %+v", n)
			}
			st, err := v.Stats(ctx)
			if err != nil || st.Nodes != 5 || st.Deleted != 1 || st.Edges != 3 || st.Groups.Unknown != 0 {
				t.Errorf("stats %+v, %v", st, err)
			}
			v.Close()
			for name, fn := range map[string]func(tx *Tx) error{
				"delete":   func(tx *Tx) error { return tx.DeleteNode(1) },
				"edge":     func(tx *Tx) error { _, err := tx.AddEdge(0, 1); return err },
				"features": func(tx *Tx) error { return tx.SetFeatures(1, []float32{0, 0}) },
				"label":    func(tx *Tx) error { return tx.SetLabel(1, 1) },
			} {
				if _, err := g.Update(ctx, fn); !errors.Is(err, ErrDeleted) {
					t.Errorf("%s of a deleted node: %v, want ErrDeleted", name, err)
				}
			}
			// Reuse of the external id, then delete-and-re-add and
			// add-and-delete within one update.
			if _, err := g.Update(ctx, func(tx *Tx) error {
				id, err := tx.AddNode(Node{ExternalID: 20, Sensitive: 1, Label: 0, Features: []float32{1, 1}})
				if err != nil {
					return err
				}
				_, err = tx.AddEdge(id, 0)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			checkGraph(t, g)
			if _, err := g.Update(ctx, func(tx *Tx) error {
				old, err := tx.InternalID(20)
				if err != nil {
					return err
				}
				if err := tx.DeleteNode(old); err != nil {
					return err
				}
				if _, err := tx.InternalID(20); !errors.Is(err, ErrUnknownID) {
					return errors.New("deleted id still resolves inside the update")
				}
				if _, err := tx.AddNode(Node{ExternalID: 20, Sensitive: 0, Label: 1, Features: []float32{0, 0}}); err != nil {
					return err
				}
				tmp, err := tx.AddNode(Node{ExternalID: 77, Sensitive: 0, Label: 1, Features: []float32{0, 0}})
				if err != nil {
					return err
				}
				if _, err := tx.AddEdge(tmp, 0); err != nil {
					return err
				}
				return tx.DeleteNode(tmp)
			}); err != nil {
				t.Fatal(err)
			}
			checkGraph(t, g)
			v, _ = g.View()
			defer v.Close()
			if id, err := v.InternalID(20); err != nil || id != 7 {
				t.Errorf("InternalID(20) = %d, %v; want 7", id, err)
			}
			if _, err := v.InternalID(77); !errors.Is(err, ErrUnknownID) {
				t.Errorf("InternalID(77): %v", err)
			}
			if del, _ := v.Deleted(); del.String() != "{1,6,8}" {
				t.Errorf("deleted %v, want {1,6,8}", del)
			}
		})
	}
}

// Ensure that random sequences of node additions (new external ids and
// freed ones), deletions, attribute edits and edge changes keep the graph
// equal to a simple oracle of the live nodes (id map, attributes,
// adjacency, deleted set) and every invariant of View.Check, on every
// backend.
func TestGraph_DeleteOracle(t *testing.T) {
	type rec struct {
		id        uint32
		sens, lab int8
		feat      float32
	}
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			seed := *propSeed
			rng := rand.New(rand.NewPCG(seed, 11))
			g := newGraph(t, b)
			ctx := context.Background()
			live := map[int64]*rec{}
			adj := map[uint32]map[uint32]bool{}
			deleted := roaring.New()
			var freed []int64
			next, nodes, reused := int64(0), uint32(0), 0
			ids := func() []int64 {
				out := make([]int64, 0, len(live))
				for ext := range live {
					out = append(out, ext)
				}
				slices.Sort(out)
				return out
			}
			for step := range 80 {
				_, err := g.Update(ctx, func(tx *Tx) error {
					for range 1 + rng.IntN(4) {
						exts := ids()
						switch op := rng.IntN(6); {
						case op == 0 || len(exts) < 4:
							ext := next
							if len(freed) > 0 && rng.IntN(2) == 0 {
								ext, freed = freed[len(freed)-1], freed[:len(freed)-1]
								reused++
							} else {
								next++
							}
							r := &rec{sens: int8(rng.IntN(3)) - 1, lab: int8(rng.IntN(3)) - 1, feat: float32(rng.IntN(9))}
							id, err := tx.AddNode(Node{ExternalID: ext, Sensitive: r.sens, Label: r.lab, Features: []float32{r.feat, 0}})
							if err != nil {
								return err
							}
							if id != nodes {
								return fmt.Errorf("new node got id %d, want %d", id, nodes)
							}
							nodes++
							r.id = id
							live[ext] = r
							adj[id] = map[uint32]bool{}
						case op == 1:
							ext := exts[rng.IntN(len(exts))]
							r := live[ext]
							if err := tx.DeleteNode(r.id); err != nil {
								return err
							}
							for w := range adj[r.id] {
								delete(adj[w], r.id)
							}
							delete(adj, r.id)
							delete(live, ext)
							deleted.Add(r.id)
							freed = append(freed, ext)
						case op == 2:
							r := live[exts[rng.IntN(len(exts))]]
							r.lab, r.sens, r.feat = int8(rng.IntN(3))-1, int8(rng.IntN(3))-1, float32(rng.IntN(9))
							if err := errors.Join(tx.SetLabel(r.id, r.lab), tx.SetSensitive(r.id, r.sens), tx.SetFeatures(r.id, []float32{r.feat, 0})); err != nil {
								return err
							}
						default:
							u, w := live[exts[rng.IntN(len(exts))]].id, live[exts[rng.IntN(len(exts))]].id
							if u == w {
								continue
							}
							if op == 3 {
								if _, err := tx.RemoveEdge(u, w); err != nil {
									return err
								}
								delete(adj[u], w)
								delete(adj[w], u)
							} else {
								if _, err := tx.AddEdge(u, w); err != nil {
									return err
								}
								adj[u][w], adj[w][u] = true, true
							}
						}
					}
					return nil
				})
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				v, err := g.View()
				if err != nil {
					t.Fatal(err)
				}
				if err := v.Check(ctx); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if del, _ := v.Deleted(); !del.Equals(deleted) || v.NumNodes() != int(nodes) {
					t.Fatalf("step %d: deleted %v (of %d), oracle %v (of %d)", step, del, v.NumNodes(), deleted, nodes)
				}
				edges := 0
				for ext, r := range live {
					id, err := v.InternalID(ext)
					if err != nil || id != r.id {
						t.Fatalf("step %d: InternalID(%d) = %d, %v; oracle %d", step, ext, id, err, r.id)
					}
					n, _ := v.Node(id)
					if n.ExternalID != ext || n.Sensitive != r.sens || n.Label != r.lab || n.Features[0] != r.feat {
						t.Fatalf("step %d: node %d = %+v, oracle %+v", step, id, n, *r)
					}
					nb, _ := v.Neighbors(id, nil)
					want := slices.Sorted(maps.Keys(adj[id]))
					if !slices.Equal(nb, want) {
						t.Fatalf("step %d: N(%d) = %v, oracle %v", step, id, nb, want)
					}
					edges += len(want)
				}
				for _, ext := range freed {
					if _, err := v.InternalID(ext); !errors.Is(err, ErrUnknownID) {
						t.Fatalf("step %d: freed id %d resolves: %v", step, ext, err)
					}
				}
				if st, err := v.Stats(ctx); err != nil || st.Nodes != len(live) || st.Deleted != int(deleted.GetCardinality()) || st.Edges != int64(edges/2) {
					t.Fatalf("step %d: stats %+v, %v; oracle %d live, %d deleted, %d edges", step, st, err, len(live), deleted.GetCardinality(), edges/2)
				}
				v.Close()
			}
			if deleted.GetCardinality() < 10 || reused < 5 {
				t.Fatalf("weak run: %d deletions, %d reused ids", deleted.GetCardinality(), reused)
			}
			t.Logf("%d nodes, %d deleted, %d external ids reused", nodes, deleted.GetCardinality(), reused)
		})
	}
}
