// The JSON wire form of the write API (the documents of fasd update and of
// the HTTP API's write routes): decoding only, no validation against a
// graph (ApplyExternal does that).

package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/fasd-db/fasd/fasd/attr"
	"github.com/fasd-db/fasd/index"
)

// nodeJSON is the JSON form of a NewNode:
//
//	{"id": 7, "features": [0.5, 1], "sensitive": 1, "label": 0,
//	 "split": "test", "edges": [3, 4]}
//
// sensitive and label are omitted (or -1) when unknown, split when none.
type nodeJSON struct {
	ID        *int64    `json:"id"`
	Features  []float64 `json:"features"`
	Sensitive *int8     `json:"sensitive,omitempty"`
	Label     *int8     `json:"label,omitempty"`
	Split     string    `json:"split,omitempty"`
	Edges     []int64   `json:"edges,omitempty"`
}

// MarshalJSON encodes n in the form DecodeNodes reads.
func (n NewNode) MarshalJSON() ([]byte, error) {
	j := nodeJSON{ID: &n.ID, Features: n.Features, Edges: n.Edges}
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
// fields and a missing id.
func (n *NewNode) UnmarshalJSON(b []byte) error {
	var j nodeJSON
	if err := strictUnmarshal(b, &j); err != nil {
		return err
	}
	if j.ID == nil {
		return errors.New("id is required")
	}
	split, err := attr.ParseSplit(j.Split)
	if err != nil {
		return fmt.Errorf("split: %w", err)
	}
	*n = NewNode{ID: *j.ID, Features: j.Features, Sensitive: index.Unknown, Label: index.Unlabelled, Split: split, Edges: j.Edges}
	if j.Sensitive != nil {
		n.Sensitive = *j.Sensitive
	}
	if j.Label != nil {
		n.Label = *j.Label
	}
	return nil
}

// editJSON is the JSON form of a NodeEdit:
//
//	{"id": 7, "features": [0.5, 1], "sensitive": -1, "label": 1,
//	 "split": "none"}
//
// An omitted field is left unchanged; -1 makes a sensitive value unknown
// or a node unlabelled; split "none" takes the node out of the split.
type editJSON struct {
	ID        *int64    `json:"id"`
	Features  []float64 `json:"features,omitempty"`
	Sensitive *int8     `json:"sensitive,omitempty"`
	Label     *int8     `json:"label,omitempty"`
	Split     *string   `json:"split,omitempty"`
}

// MarshalJSON encodes ed in the form UnmarshalJSON reads.
func (ed NodeEdit) MarshalJSON() ([]byte, error) {
	j := editJSON{ID: &ed.ID, Features: ed.Features, Sensitive: ed.Sensitive, Label: ed.Label}
	if ed.Split != nil {
		s := ed.Split.String()
		j.Split = &s
	}
	return json.Marshal(&j)
}

// UnmarshalJSON decodes the form MarshalJSON writes, rejecting unknown
// fields and a missing id.
func (ed *NodeEdit) UnmarshalJSON(b []byte) error {
	var j editJSON
	if err := strictUnmarshal(b, &j); err != nil {
		return err
	}
	if j.ID == nil {
		return errors.New("id is required")
	}
	return j.edit(*j.ID, ed)
}

func (j *editJSON) edit(id int64, ed *NodeEdit) error {
	*ed = NodeEdit{ID: id, Features: j.Features, Sensitive: j.Sensitive, Label: j.Label}
	if j.Split != nil {
		sp, err := attr.ParseSplit(*j.Split)
		if err != nil {
			return fmt.Errorf("split: %w", err)
		}
		ed.Split = &sp
	}
	return nil
}

// DecodeNodeEdit reads the JSON document of an edit of the node with
// external id id, the form of NodeEdit.MarshalJSON where "id" may be
// omitted (if given it must be id) plus DecodeUpdate's "clip" and "units":
//
//	{"features": [0.5, 1], "label": 1, "clip": true}
//
// and returns it as a one-edit update. Errors wrap ErrInvalid.
func DecodeNodeEdit(r io.Reader, id int64) (*ExternalUpdate, error) {
	var doc struct {
		editJSON
		Clip  bool   `json:"clip,omitempty"`
		Units string `json:"units,omitempty"`
	}
	data, err := readChecked(r)
	if err != nil {
		return nil, fmt.Errorf("%w: invalid JSON: %w", ErrInvalid, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
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
	if doc.ID != nil && *doc.ID != id {
		return nil, fmt.Errorf("%w: id %d in the body, %d in the path", ErrInvalid, *doc.ID, id)
	}
	u := &ExternalUpdate{Edits: make([]NodeEdit, 1), Clip: doc.Clip}
	if u.StoredUnits, err = ParseUnits(doc.Units); err != nil {
		return nil, err
	}
	if err := doc.edit(id, &u.Edits[0]); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return u, nil
}

func strictUnmarshal(b []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
}

// updateJSON is the JSON form of an ExternalUpdate (DecodeUpdate).
type updateJSON struct {
	Nodes       []json.RawMessage `json:"nodes,omitempty"`
	Edits       []json.RawMessage `json:"edits,omitempty"`
	Delete      []int64           `json:"delete,omitempty"`
	AddEdges    [][]int64         `json:"add_edges,omitempty"`
	RemoveEdges [][]int64         `json:"remove_edges,omitempty"`
	Clip        bool              `json:"clip,omitempty"`
	Units       string            `json:"units,omitempty"`
}

// ParseUnits maps the name of the units of feature values to
// ExternalUpdate.StoredUnits: "dump" (or "") the node file's units,
// "stored" the stored, scaled values.
func ParseUnits(s string) (stored bool, err error) {
	switch s {
	case "", "dump":
		return false, nil
	case "stored":
		return true, nil
	}
	return false, fmt.Errorf("%w: units %q: want dump or stored", ErrInvalid, s)
}

// DecodeUpdate reads the JSON document of an ExternalUpdate from r:
//
//	{"nodes": [node, …], "edits": [edit, …], "delete": [id, …],
//	 "add_edges": [[u, v], …], "remove_edges": [[u, v], …],
//	 "clip": false, "units": "dump"}
//
// every field optional (but not all lists empty), nodes in the form of
// NewNode.MarshalJSON, edits in that of NodeEdit.MarshalJSON, units "dump"
// (default: the node file's units) or "stored". Exactly one value, no
// unknown fields. The error wraps ErrInvalid, names the item and wraps the
// reader's error, if any. The update is not validated against a graph
// (ExternalUpdate.Validate does that).
func DecodeUpdate(r io.Reader) (*ExternalUpdate, error) {
	u, err := decodeUpdate(r)
	if err != nil {
		return nil, err
	}
	if u.Size() == 0 {
		return nil, fmt.Errorf("%w: the update is empty (give nodes, edits, delete, add_edges or remove_edges)", ErrInvalid)
	}
	return u, nil
}

func decodeUpdate(r io.Reader) (*ExternalUpdate, error) {
	var doc updateJSON
	data, err := readChecked(r)
	if err != nil {
		return nil, fmt.Errorf("%w: invalid JSON: %w", ErrInvalid, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
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
	u := &ExternalUpdate{Delete: doc.Delete, Clip: doc.Clip}
	if u.StoredUnits, err = ParseUnits(doc.Units); err != nil {
		return nil, err
	}
	u.Nodes = make([]NewNode, len(doc.Nodes))
	for i, m := range doc.Nodes {
		if err := json.Unmarshal(m, &u.Nodes[i]); err != nil {
			return nil, fmt.Errorf("%w: nodes[%d]: %w", ErrInvalid, i, err)
		}
	}
	u.Edits = make([]NodeEdit, len(doc.Edits))
	for i, m := range doc.Edits {
		if err := json.Unmarshal(m, &u.Edits[i]); err != nil {
			return nil, fmt.Errorf("%w: edits[%d]: %w", ErrInvalid, i, err)
		}
	}
	for _, l := range []struct {
		name string
		in   [][]int64
		out  *[][2]int64
	}{{"add_edges", doc.AddEdges, &u.AddEdges}, {"remove_edges", doc.RemoveEdges, &u.RemoveEdges}} {
		for i, e := range l.in {
			if len(e) != 2 {
				return nil, fmt.Errorf("%w: %s[%d]: %d ids, want a pair", ErrInvalid, l.name, i, len(e))
			}
			*l.out = append(*l.out, [2]int64{e[0], e[1]})
		}
	}
	return u, nil
}

// DecodeNodes reads the JSON document {"nodes": [node, …]} (the form of
// NewNode.MarshalJSON) from r: DecodeUpdate restricted to at least one new
// node and nothing else (DecodeUpdate also reads clip and units).
func DecodeNodes(r io.Reader) ([]NewNode, error) {
	u, err := decodeUpdate(r)
	if err != nil {
		return nil, err
	}
	if len(u.Nodes) == 0 {
		return nil, fmt.Errorf("%w: nodes: at least one node is required", ErrInvalid)
	}
	if len(u.Edits)+len(u.Delete)+len(u.AddEdges)+len(u.RemoveEdges) > 0 || u.Clip || u.StoredUnits {
		return nil, fmt.Errorf("%w: only nodes are expected here", ErrInvalid)
	}
	return u.Nodes, nil
}
