package query

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/storage/storagetest"
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

// Ensure that deletions and edits by external id round trip: a deleted
// node's id stops resolving (also through the engine's id cache) and can
// name a new node; an edit that unlabels a split node takes it out of the
// split; the views after Refresh equal the oracle of the new graph; and
// invalid deletions and edits fail as a whole.
func TestApplyExternalDeleteEdit(t *testing.T) {
	ctx := context.Background()
	s, g := newTestGraph(t, 40, 2, 3, 8)
	m := newTestModel(featureNames(2), 3, true)
	e := openEngine(t, s, m)
	if _, err := e.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	// Fill the id cache, then delete.
	if _, err := e.PredictExternal(ctx, 1001); err != nil {
		t.Fatal(err)
	}
	v, _ := g.View()
	old, _ := v.InternalID(1001)
	deg, _ := v.Degree(old)
	v.Close()
	rep, err := e.DeleteNodesExternal(ctx, []int64{1001})
	if err != nil || rep.NodesDeleted != 1 || rep.EdgesRemoved != deg {
		t.Fatalf("delete: %+v, %v (degree %d)", rep, err, deg)
	}
	if _, err := e.PredictExternal(ctx, 1001); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("predict of a deleted node: %v", err)
	}
	if _, err := e.Predict(ctx, old); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("predict of a deleted internal id: %v", err)
	}
	// Unlabel a node of the split and change its features.
	v, _ = g.View()
	var split int64 = -1
	for u := range uint32(v.NumNodes()) {
		if sp, _ := v.SplitOf(u); sp != index.SplitNone {
			split, _ = v.ExternalID(u)
			break
		}
	}
	v.Close()
	unl := index.Unlabelled
	if _, err := e.EditNodesExternal(ctx, []NodeEdit{{ID: split, Label: &unl, Features: []float64{0.25, -0.5}}}, false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := checkViews(t, e, oracle(t, g, m), "after delete and edit"); n != 0 {
		t.Fatalf("%d stale views after refresh", n)
	}
	v, _ = g.View()
	u, _ := v.InternalID(split)
	nd, _ := v.Node(u)
	v.Close()
	if nd.Label != index.Unlabelled || nd.Split != index.SplitNone || nd.Features[0] != 0.25 || nd.Features[1] != -0.5 {
		t.Fatalf("edited node %+v", nd)
	}
	// The freed id names a new node.
	if _, err := e.AddNodesExternal(ctx, []NewNode{{ID: 1001, Features: []float64{1, 0}, Sensitive: 0, Label: 1, Split: index.SplitTest, Edges: []int64{1002}}}); err != nil {
		t.Fatal(err)
	}
	p, err := e.PredictExternal(ctx, 1001)
	if err != nil || p.Node == old {
		t.Fatalf("re-added node: %+v, %v (old internal id %d)", p, err, old)
	}
	before := storagetest.Dump(t, s)
	train := index.SplitTrain
	one := int8(1)
	for _, c := range []struct {
		u    ExternalUpdate
		want error
		msg  string
	}{
		{ExternalUpdate{Delete: []int64{1001, 424242}}, ErrUnknownNode, "424242"},
		{ExternalUpdate{Delete: []int64{1003, 1003}}, ErrInvalid, "given twice"},
		{ExternalUpdate{Delete: []int64{1003}, Edits: []NodeEdit{{ID: 1003, Label: &one}}}, ErrInvalid, "deleted by the same update"},
		{ExternalUpdate{Edits: []NodeEdit{{ID: 1003}}}, ErrInvalid, "nothing to change"},
		{ExternalUpdate{Edits: []NodeEdit{{ID: 1003, Label: &unl, Split: &train}}}, ErrInvalid, "needs a label"},
		{ExternalUpdate{Edits: []NodeEdit{{ID: 1003, Features: []float64{1}}}}, ErrInvalid, "1 features"},
		{ExternalUpdate{Nodes: []NewNode{{ID: 5000, Features: []float64{0, 0}, Label: index.Unlabelled, Split: index.SplitVal}}}, ErrInvalid, "needs a label"},
		{ExternalUpdate{Nodes: []NewNode{{ID: 5000, Features: []float64{0, 0}, Sensitive: index.Unknown, Label: 1, Split: index.SplitTest}}}, ErrInvalid, "known sensitive value"},
		{ExternalUpdate{Delete: []int64{1003}, AddEdges: [][2]int64{{1003, 1004}}}, ErrUnknownNode, "1003"},
		{ExternalUpdate{Nodes: []NewNode{{ID: 5000, Features: []float64{4e38, 0}, Sensitive: 1, Label: 1}}}, index.ErrOutOfRange, `nodes[0] (id 5000): feature "f0"`},
	} {
		_, err := e.ApplyExternal(ctx, c.u)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: %v, want %v with %q", c.u, err, c.want, c.msg)
		}
	}
	if after := storagetest.Dump(t, s); after != before {
		t.Fatalf("a failed update changed the store:\n%s", firstDiff(after, before))
	}
	v, _ = g.View()
	defer v.Close()
	if err := v.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// Ensure that DecodeUpdate and DecodeNodeEdit read every part of the
// update document and refuse malformed ones with the field named.
func TestDecodeUpdate(t *testing.T) {
	u, err := DecodeUpdate(strings.NewReader(`{"nodes":[{"id":1,"features":[2.5]}],"edits":[{"id":2,"label":-1,"split":"none"}],
		"delete":[3],"add_edges":[[1,4]],"remove_edges":[[4,5]],"clip":true,"units":"stored"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Nodes) != 1 || u.Nodes[0].Features[0] != 2.5 || len(u.Edits) != 1 || *u.Edits[0].Label != index.Unlabelled ||
		*u.Edits[0].Split != index.SplitNone || u.Edits[0].Features != nil || u.Edits[0].Sensitive != nil ||
		len(u.Delete) != 1 || len(u.AddEdges) != 1 || len(u.RemoveEdges) != 1 || !u.Clip || !u.StoredUnits {
		t.Fatalf("decoded %+v", u)
	}
	b, err := json.Marshal(u.Edits[0])
	if err != nil || string(b) != `{"id":2,"label":-1,"split":"none"}` {
		t.Fatalf("edit round trip: %s, %v", b, err)
	}
	for _, doc := range []struct{ in, want string }{
		{`{}`, "the update is empty"},
		{`{"edits":[{"label":1}]}`, "edits[0]: id is required"},
		{`{"edits":[{"id":1,"split":"x"}]}`, "edits[0]: split"},
		{`{"nodes":[{"id":1,"features":[1e400]}]}`, "nodes[0]"},
		{`{"add_edges":[[1]]}`, "add_edges[0]: 1 ids"},
		{`{"delete":[1],"units":"metres"}`, "units \"metres\""},
	} {
		if _, err := DecodeUpdate(strings.NewReader(doc.in)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), doc.want) {
			t.Errorf("%s: %v, want %q", doc.in, err, doc.want)
		}
	}
	eu, err := DecodeNodeEdit(strings.NewReader(`{"features":[1,2],"clip":true}`), 9)
	if err != nil || eu.Edits[0].ID != 9 || !eu.Clip || len(eu.Edits[0].Features) != 2 {
		t.Fatalf("DecodeNodeEdit: %+v, %v", eu, err)
	}
	if _, err := DecodeNodeEdit(strings.NewReader(`{"id":8,"label":1}`), 9); !errors.Is(err, ErrInvalid) {
		t.Errorf("id mismatch: %v", err)
	}
}
