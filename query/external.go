package query

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/fasd-db/fasd/fasd/attr"
	"github.com/fasd-db/fasd/index"
)

// NewNode is a node that an ExternalUpdate adds, by external id.
type NewNode struct {
	ID        int64
	Features  []float32
	Sensitive int8        // 0, 1 or index.Unknown
	Label     int8        // 0, 1 or index.Unlabelled
	Split     index.Split // index.SplitNone outside the split
	// Edges are the external ids of existing nodes or of nodes added
	// earlier in the same update.
	Edges []int64
}

// ExternalUpdate is one atomic graph update by external ids: new nodes
// (with their edges), then added edges, then removed edges. An id may name
// a node added by the same update.
type ExternalUpdate struct {
	Nodes       []NewNode
	AddEdges    [][2]int64
	RemoveEdges [][2]int64
}

// Validate checks u against a graph with dim features without reading the
// graph: feature counts, finite features, sensitive values and labels,
// splits, ids given twice, self-loops. The error wraps ErrInvalid and
// names the field (for example "nodes[2].features[0]").
func (u *ExternalUpdate) Validate(dim int) error {
	seen := make(map[int64]bool, len(u.Nodes))
	for i := range u.Nodes {
		n := &u.Nodes[i]
		if seen[n.ID] {
			return fmt.Errorf("%w: nodes[%d]: id %d given twice", ErrInvalid, i, n.ID)
		}
		seen[n.ID] = true
		if len(n.Features) != dim {
			return fmt.Errorf("%w: nodes[%d]: %d features, the graph has %d", ErrInvalid, i, len(n.Features), dim)
		}
		for j, f := range n.Features {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return fmt.Errorf("%w: nodes[%d].features[%d] is not finite", ErrInvalid, i, j)
			}
		}
		if n.Sensitive < -1 || n.Sensitive > 1 {
			return fmt.Errorf("%w: nodes[%d].sensitive: %d, want 0 or 1 (omit when unknown)", ErrInvalid, i, n.Sensitive)
		}
		if n.Label < -1 || n.Label > 1 {
			return fmt.Errorf("%w: nodes[%d].label: %d, want 0 or 1 (omit when unlabelled)", ErrInvalid, i, n.Label)
		}
		if n.Split > index.SplitTest {
			return fmt.Errorf("%w: nodes[%d].split: %v", ErrInvalid, i, n.Split)
		}
		for _, w := range n.Edges {
			if w == n.ID {
				return fmt.Errorf("%w: nodes[%d]: self-loop on %d", ErrInvalid, i, w)
			}
		}
	}
	for _, l := range []struct {
		name  string
		edges [][2]int64
	}{{"add_edges", u.AddEdges}, {"remove_edges", u.RemoveEdges}} {
		for i, e := range l.edges {
			if e[0] == e[1] {
				return fmt.Errorf("%w: %s[%d]: self-loop on %d", ErrInvalid, l.name, i, e[0])
			}
		}
	}
	return nil
}

// ApplyExternal validates u (ExternalUpdate.Validate) and applies it as
// one atomic update (Update). External ids are resolved inside the update,
// under the writer lock, against the graph the update starts from plus
// the nodes it adds; an unknown id fails the whole update with
// ErrUnknownNode.
func (e *Engine) ApplyExternal(ctx context.Context, u ExternalUpdate) (*UpdateReport, error) {
	if err := u.Validate(len(e.g.Schema().Features)); err != nil {
		return nil, err
	}
	return e.Update(ctx, func(tx *index.Tx) error {
		resolve := func(ext int64) (uint32, error) {
			id, err := tx.InternalID(ext)
			if errors.Is(err, index.ErrUnknownID) {
				return 0, fmt.Errorf("%w: external id %d", ErrUnknownNode, ext)
			}
			return id, err
		}
		ids := make([]uint32, len(u.Nodes))
		for i, n := range u.Nodes {
			id, err := tx.AddNode(index.Node{ExternalID: n.ID, Sensitive: n.Sensitive, Label: n.Label, Split: n.Split, Features: n.Features})
			if err != nil {
				return fmt.Errorf("nodes[%d]: %w", i, err)
			}
			ids[i] = id
		}
		for i, n := range u.Nodes {
			for _, w := range n.Edges {
				wid, err := resolve(w)
				if err != nil {
					return fmt.Errorf("nodes[%d].edges: %w", i, err)
				}
				if _, err := tx.AddEdge(ids[i], wid); err != nil {
					return fmt.Errorf("nodes[%d].edges: %w", i, err)
				}
			}
		}
		for k, list := range [][][2]int64{u.AddEdges, u.RemoveEdges} {
			for _, ed := range list {
				a, err := resolve(ed[0])
				if err != nil {
					return err
				}
				b, err := resolve(ed[1])
				if err != nil {
					return err
				}
				if k == 0 {
					_, err = tx.AddEdge(a, b)
				} else {
					_, err = tx.RemoveEdge(a, b)
				}
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// AddNodesExternal adds nodes and their edges (external ids) in one
// update.
func (e *Engine) AddNodesExternal(ctx context.Context, nodes []NewNode) (*UpdateReport, error) {
	return e.ApplyExternal(ctx, ExternalUpdate{Nodes: nodes})
}

// EdgesExternal adds (add) or removes edges given by external ids in one
// update.
func (e *Engine) EdgesExternal(ctx context.Context, edges [][2]int64, add bool) (*UpdateReport, error) {
	if add {
		return e.ApplyExternal(ctx, ExternalUpdate{AddEdges: edges})
	}
	return e.ApplyExternal(ctx, ExternalUpdate{RemoveEdges: edges})
}

// nodeJSON is the JSON form of a NewNode:
//
//	{"id": 7, "features": [0.5, 1], "sensitive": 1, "label": 0,
//	 "split": "test", "edges": [3, 4]}
//
// sensitive and label are omitted when unknown, split when none.
type nodeJSON struct {
	ID        int64     `json:"id"`
	Features  []float32 `json:"features"`
	Sensitive *int8     `json:"sensitive,omitempty"`
	Label     *int8     `json:"label,omitempty"`
	Split     string    `json:"split,omitempty"`
	Edges     []int64   `json:"edges,omitempty"`
}

// MarshalJSON encodes n in the form DecodeNodes reads.
func (n NewNode) MarshalJSON() ([]byte, error) {
	j := nodeJSON{ID: n.ID, Features: n.Features, Edges: n.Edges}
	if n.Sensitive != index.Unknown {
		j.Sensitive = &n.Sensitive
	}
	if n.Label != index.Unlabelled {
		j.Label = &n.Label
	}
	if n.Split != index.SplitNone {
		j.Split = n.Split.String()
	}
	return json.Marshal(&j)
}

// UnmarshalJSON decodes the form MarshalJSON writes, rejecting unknown
// fields.
func (n *NewNode) UnmarshalJSON(b []byte) error {
	var j nodeJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	split, err := attr.ParseSplit(j.Split)
	if err != nil {
		return fmt.Errorf("split: %w", err)
	}
	*n = NewNode{ID: j.ID, Features: j.Features, Sensitive: index.Unknown, Label: index.Unlabelled, Split: split, Edges: j.Edges}
	if j.Sensitive != nil {
		n.Sensitive = *j.Sensitive
	}
	if j.Label != nil {
		n.Label = *j.Label
	}
	return nil
}

// DecodeNodes reads the JSON document {"nodes": [node, …]} (the form of
// NewNode.MarshalJSON) from r: exactly one value, no unknown fields. The
// error wraps ErrInvalid, names the node and wraps the reader's error, if
// any. The nodes are not validated against a graph (ExternalUpdate
// .Validate does that).
func DecodeNodes(r io.Reader) ([]NewNode, error) {
	var doc struct {
		Nodes []json.RawMessage `json:"nodes"`
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: invalid JSON: %w", ErrInvalid, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("trailing data after the value")
		}
		return nil, fmt.Errorf("%w: invalid JSON: %w", ErrInvalid, err)
	}
	if len(doc.Nodes) == 0 {
		return nil, fmt.Errorf("%w: nodes: at least one node is required", ErrInvalid)
	}
	out := make([]NewNode, len(doc.Nodes))
	for i, m := range doc.Nodes {
		if err := json.Unmarshal(m, &out[i]); err != nil {
			return nil, fmt.Errorf("%w: nodes[%d]: %w", ErrInvalid, i, err)
		}
	}
	return out, nil
}
