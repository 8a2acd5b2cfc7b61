package query

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/index"
)

// Ensure that ExternalUpdate.Validate names the offending field of every
// kind of bad input and wraps ErrInvalid.
func TestExternalUpdateValidate(t *testing.T) {
	ok := func() NewNode {
		return NewNode{ID: 5, Features: []float64{1, 2}, Sensitive: 1, Label: index.Unlabelled, Split: index.SplitNone}
	}
	mod := func(f func(n *NewNode)) ExternalUpdate {
		n := ok()
		f(&n)
		return ExternalUpdate{Nodes: []NewNode{ok(), n}}
	}
	cases := []struct {
		u    ExternalUpdate
		want string
	}{
		{mod(func(n *NewNode) { n.ID = 6; n.Features = []float64{1} }), "nodes[1] (id 6): 1 features"},
		{mod(func(n *NewNode) { n.ID = 6; n.Features[1] = math.Inf(1) }), "nodes[1] (id 6).features[1] is not finite"},
		{mod(func(n *NewNode) { n.ID = 6; n.Sensitive = 2 }), "nodes[1] (id 6).sensitive: 2"},
		{mod(func(n *NewNode) { n.ID = 6; n.Label = -3 }), "nodes[1] (id 6).label: -3"},
		{mod(func(n *NewNode) { n.ID = 6; n.Split = 9 }), "nodes[1] (id 6).split"},
		{mod(func(n *NewNode) {}), "nodes[1]: id 5 given twice"},
		{mod(func(n *NewNode) { n.ID = 6; n.Edges = []int64{6} }), "nodes[1] (id 6): self-loop"},
		{ExternalUpdate{AddEdges: [][2]int64{{1, 2}, {3, 3}}}, "add_edges[1]: self-loop"},
		{ExternalUpdate{RemoveEdges: [][2]int64{{4, 4}}}, "remove_edges[0]: self-loop"},
	}
	for _, c := range cases {
		err := c.u.Validate(2)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.u, err, c.want)
		}
	}
	good := ExternalUpdate{Nodes: []NewNode{ok()}, AddEdges: [][2]int64{{1, 2}}}
	if err := good.Validate(2); err != nil {
		t.Fatal(err)
	}
}

// Ensure that DecodeNodes reads what NewNode.MarshalJSON writes, maps
// absent fields to unknown/unlabelled/none, and rejects malformed
// documents with errors naming the node.
func TestDecodeNodes(t *testing.T) {
	in := []NewNode{
		{ID: 1, Features: []float64{0.5}, Sensitive: 0, Label: 1, Split: index.SplitTest, Edges: []int64{2}},
		{ID: 2, Features: []float64{-1}, Sensitive: index.Unknown, Label: index.Unlabelled},
	}
	b, err := json.Marshal(map[string][]NewNode{"nodes": in})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"sensitive":-1`) || strings.Contains(string(b), `"split":"none"`) {
		t.Fatalf("unknown values not omitted: %s", b)
	}
	got, err := DecodeNodes(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Split != index.SplitTest || got[0].Label != 1 || got[1].Sensitive != index.Unknown ||
		got[1].Label != index.Unlabelled || got[1].Split != index.SplitNone || got[0].Edges[0] != 2 {
		t.Fatalf("round trip: %+v", got)
	}
	for _, c := range []struct{ doc, want string }{
		{`{"nodes":[{"id":1,"features":[1]},{"id":2,"features":[1],"split":"holdout"}]}`, "nodes[1]: split"},
		{`{"nodes":[{"id":1,"features":[1],"colour":3}]}`, "nodes[0]"},
		{`{"nodes":[]}`, "at least one node"},
		{`{"nodes":[{"id":1,"features":[1]}]} {}`, "trailing data"},
		{`{"nodes":`, "invalid JSON"},
		{`{"nodes":[{"id":"x"}]}`, "nodes[0]"},
	} {
		if _, err := DecodeNodes(strings.NewReader(c.doc)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.doc, err, c.want)
		}
	}
}

// Ensure that ApplyExternal resolves ids inside the update (a node added
// by the same update can be an edge end), fails as a whole on an unknown
// id, and leaves the graph untouched then.
func TestApplyExternal(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 30, 2, 3, 4)
	e := openEngine(t, s, newTestModel(featureNames(2), 1, false))
	before, _ := g.Version()
	_, err := e.ApplyExternal(ctx, ExternalUpdate{
		Nodes:    []NewNode{{ID: 500, Features: []float64{1, 1}, Sensitive: 1, Label: 0, Split: index.SplitTest, Edges: []int64{1000}}},
		AddEdges: [][2]int64{{500, 1001}, {1002, 424242}},
	})
	if !errors.Is(err, ErrUnknownNode) || !strings.Contains(err.Error(), "424242") {
		t.Fatalf("unknown id: %v", err)
	}
	if v, _ := g.Version(); v != before {
		t.Fatal("a failed update changed the graph")
	}
	rep, err := e.ApplyExternal(ctx, ExternalUpdate{
		Nodes:       []NewNode{{ID: 500, Features: []float64{1, 1}, Sensitive: 1, Label: 0, Split: index.SplitTest, Edges: []int64{1000, 501}}, {ID: 501, Features: []float64{0, 0}, Sensitive: index.Unknown, Label: index.Unlabelled}},
		AddEdges:    [][2]int64{{500, 1001}},
		RemoveEdges: [][2]int64{{500, 1000}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.NodesAdded) != 2 || rep.EdgesAdded != 3 || rep.EdgesRemoved != 1 {
		t.Fatalf("report %+v", rep)
	}
	v, _ := g.View()
	defer v.Close()
	u, err := v.InternalID(500)
	if err != nil {
		t.Fatal(err)
	}
	nb, _ := v.Neighbors(u, nil)
	if len(nb) != 2 {
		t.Fatalf("node 500 has neighbours %v, want 1001 and 501", nb)
	}
	if _, err := e.ApplyExternal(ctx, ExternalUpdate{Nodes: []NewNode{{ID: 1000, Features: []float64{1, 1}, Sensitive: 0, Label: 0}}}); !errors.Is(err, index.ErrDuplicateID) {
		t.Fatalf("existing id: %v", err)
	}
}
