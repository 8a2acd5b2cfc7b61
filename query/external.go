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
	ID int64
	// Features are in the dump's units, the numbers of the node file, and
	// are scaled with the scaling recorded at load time
	// (index.Scaling.Scale); with ExternalUpdate.StoredUnits they are
	// stored values.
	Features  []float64
	Sensitive int8        // 0, 1 or index.Unknown
	Label     int8        // 0, 1 or index.Unlabelled
	Split     index.Split // index.SplitNone outside the split
	// Edges are the external ids of existing nodes or of nodes added
	// earlier in the same update.
	Edges []int64
}

// NodeEdit changes attributes of an existing node, by external id. A nil
// field is left as it is.
type NodeEdit struct {
	ID int64
	// Features replace the whole feature vector (units as NewNode's).
	Features []float64
	// Sensitive and Label set the value; index.Unknown (−1) makes it
	// unknown / unlabelled.
	Sensitive *int8
	Label     *int8
	// Split moves the node into a part of the split (index.SplitNone takes
	// it out).
	Split *index.Split
}

// ExternalUpdate is one atomic graph update by external ids, applied in
// this order: deleted nodes, new nodes (with their edges), edits, added
// edges, removed edges. An id may name a node added by the same update; a
// deleted node's id may be given to a new node of the same update.
//
// Split membership: a node in the split must be labelled, and a test node
// must have a known sensitive value (the loader's rule). A new node or an
// edit that asks for otherwise is invalid; an edit that makes a split node
// unlabelled (or a test node's group unknown) without naming a split takes
// it out of the split. Editing a node's label or split changes what the
// next fasd train learns from, not the current models.
type ExternalUpdate struct {
	Nodes       []NewNode
	Edits       []NodeEdit
	Delete      []int64
	AddEdges    [][2]int64
	RemoveEdges [][2]int64
	// Clip clips a feature value beyond the accepted window
	// (index.Scaling.Window: RangeSlack ranges beyond the loaded min and
	// max) to the window instead of failing. Values that are not finite
	// always fail.
	Clip bool
	// StoredUnits says that features are stored values (already scaled),
	// checked against the values the scaling can produce. It is the way to
	// add features to a graph loaded by an older build, which recorded no
	// scaling (index.ErrNoScaling): there they are only checked to be
	// finite.
	StoredUnits bool
}

// Validate checks u against a graph with dim features without reading the
// graph: feature counts, finite features, sensitive values and labels,
// splits and their membership rule, ids given twice, self-loops. The error
// wraps ErrInvalid and names the field (for example "nodes[2] (id 7)
// .features[0]"). Feature ranges need the graph's scaling and are checked
// by ApplyExternal.
func (u *ExternalUpdate) Validate(dim int) error {
	checkFeatures := func(field string, i int, id int64, f []float64) error {
		if len(f) != dim {
			return fmt.Errorf("%w: %s[%d] (id %d): %d features, the graph has %d", ErrInvalid, field, i, id, len(f), dim)
		}
		for j, x := range f {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%w: %s[%d] (id %d).features[%d] is not finite", ErrInvalid, field, i, id, j)
			}
		}
		return nil
	}
	checkMembership := func(field string, i int, id int64, s, y int8, sp index.Split) error {
		switch {
		case sp > index.SplitTest:
			return fmt.Errorf("%w: %s[%d] (id %d).split: %v", ErrInvalid, field, i, id, sp)
		case sp != index.SplitNone && y == index.Unlabelled:
			return fmt.Errorf("%w: %s[%d] (id %d): split %v needs a label", ErrInvalid, field, i, id, sp)
		case sp == index.SplitTest && s == index.Unknown:
			return fmt.Errorf("%w: %s[%d] (id %d): split test needs a known sensitive value", ErrInvalid, field, i, id)
		}
		return nil
	}
	checkTri := func(field string, i int, id int64, what string, x int8) error {
		if x < -1 || x > 1 {
			return fmt.Errorf("%w: %s[%d] (id %d).%s: %d, want 0 or 1 (-1 or omitted: unknown)", ErrInvalid, field, i, id, what, x)
		}
		return nil
	}
	deleted := make(map[int64]bool, len(u.Delete))
	for i, id := range u.Delete {
		if deleted[id] {
			return fmt.Errorf("%w: delete[%d]: id %d given twice", ErrInvalid, i, id)
		}
		deleted[id] = true
	}
	seen := make(map[int64]bool, len(u.Nodes))
	for i := range u.Nodes {
		n := &u.Nodes[i]
		if seen[n.ID] {
			return fmt.Errorf("%w: nodes[%d]: id %d given twice", ErrInvalid, i, n.ID)
		}
		seen[n.ID] = true
		if err := checkFeatures("nodes", i, n.ID, n.Features); err != nil {
			return err
		}
		if err := errors.Join(checkTri("nodes", i, n.ID, "sensitive", n.Sensitive), checkTri("nodes", i, n.ID, "label", n.Label)); err != nil {
			return err
		}
		if err := checkMembership("nodes", i, n.ID, n.Sensitive, n.Label, n.Split); err != nil {
			return err
		}
		for _, w := range n.Edges {
			if w == n.ID {
				return fmt.Errorf("%w: nodes[%d] (id %d): self-loop", ErrInvalid, i, w)
			}
		}
	}
	edited := make(map[int64]bool, len(u.Edits))
	for i := range u.Edits {
		ed := &u.Edits[i]
		switch {
		case edited[ed.ID]:
			return fmt.Errorf("%w: edits[%d]: id %d given twice", ErrInvalid, i, ed.ID)
		case deleted[ed.ID] && !seen[ed.ID]:
			return fmt.Errorf("%w: edits[%d]: id %d is deleted by the same update", ErrInvalid, i, ed.ID)
		case ed.Features == nil && ed.Sensitive == nil && ed.Label == nil && ed.Split == nil:
			return fmt.Errorf("%w: edits[%d] (id %d): nothing to change", ErrInvalid, i, ed.ID)
		}
		edited[ed.ID] = true
		if ed.Features != nil {
			if err := checkFeatures("edits", i, ed.ID, ed.Features); err != nil {
				return err
			}
		}
		if ed.Sensitive != nil {
			if err := checkTri("edits", i, ed.ID, "sensitive", *ed.Sensitive); err != nil {
				return err
			}
		}
		if ed.Label != nil {
			if err := checkTri("edits", i, ed.ID, "label", *ed.Label); err != nil {
				return err
			}
		}
		if ed.Split != nil {
			// The rule is checked against the edited values that are given;
			// ApplyExternal checks the node's result.
			s, y := int8(0), int8(0)
			if ed.Sensitive != nil {
				s = *ed.Sensitive
			}
			if ed.Label != nil {
				y = *ed.Label
			}
			if err := checkMembership("edits", i, ed.ID, s, y, *ed.Split); err != nil {
				return err
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

// featureScaler converts the features of an ExternalUpdate to stored
// values.
type featureScaler struct {
	sc     *index.Scaling // nil: stored as given (a graph made by index.Create)
	names  []string
	stored bool
	clip   bool
}

func (e *Engine) newFeatureScaler(u *ExternalUpdate) (*featureScaler, error) {
	fs := &featureScaler{names: e.g.Schema().Features, stored: u.StoredUnits, clip: u.Clip}
	need := false
	for _, n := range u.Nodes {
		need = need || len(n.Features) > 0
	}
	for _, ed := range u.Edits {
		need = need || ed.Features != nil
	}
	if !need {
		return fs, nil
	}
	sc, err := e.g.Scaling()
	switch {
	case errors.Is(err, index.ErrNoScaling) && u.StoredUnits:
	case errors.Is(err, index.ErrNoScaling):
		return nil, fmt.Errorf("query: features cannot be given in the dump's units: %w; or give them in stored units (StoredUnits, fasd update --stored-units, \"units\": \"stored\")", err)
	case err != nil:
		return nil, err
	}
	fs.sc = sc
	return fs, nil
}

// convert scales f (field[i], external id id) and names the offending
// column in its error, which wraps ErrInvalid and index.ErrOutOfRange or
// index.ErrInvalid.
func (fs *featureScaler) convert(field string, i int, id int64, f []float64) ([]float32, error) {
	out := make([]float32, len(f))
	for j, x := range f {
		var err error
		switch {
		case fs.stored || fs.sc == nil:
			out[j], err = fs.storedValue(j, x)
		default:
			out[j], err = fs.sc.Scale(j, x, fs.clip)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s[%d] (id %d): feature %q: %w", ErrInvalid, field, i, id, fs.names[j], err)
		}
	}
	return out, nil
}

// storedValue checks a value given in stored units; with clip it is
// clipped to what the scaling can produce (the float32 range without a
// recorded scaling).
func (fs *featureScaler) storedValue(j int, x float64) (float32, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%w: %v is not finite", index.ErrInvalid, x)
	}
	lo, hi := -math.MaxFloat32, float64(math.MaxFloat32)
	if fs.sc != nil {
		lo, hi = fs.sc.StoredWindow(j)
	}
	if x < lo || x > hi {
		if !fs.clip {
			return 0, fmt.Errorf("%w: stored value %g outside [%g, %g]", index.ErrOutOfRange, x, lo, hi)
		}
		x = max(lo, min(hi, x))
	}
	return float32(x), nil
}

// ApplyExternal validates u (ExternalUpdate.Validate), converts its
// features to stored values with the graph's recorded scaling (errors
// wrap ErrInvalid and index.ErrOutOfRange, naming the node and the
// column), and applies it as one atomic update (Update). External ids are
// resolved inside the update, under the writer lock, against the graph the
// update starts from plus the nodes it adds; an unknown id fails the whole
// update with ErrUnknownNode. Nothing is written unless all of u is valid.
func (e *Engine) ApplyExternal(ctx context.Context, u ExternalUpdate) (*UpdateReport, error) {
	if err := u.Validate(len(e.g.Schema().Features)); err != nil {
		return nil, err
	}
	fs, err := e.newFeatureScaler(&u)
	if err != nil {
		return nil, err
	}
	newFeat := make([][]float32, len(u.Nodes))
	for i, n := range u.Nodes {
		if newFeat[i], err = fs.convert("nodes", i, n.ID, n.Features); err != nil {
			return nil, err
		}
	}
	editFeat := make([][]float32, len(u.Edits))
	for i, ed := range u.Edits {
		if ed.Features == nil {
			continue
		}
		if editFeat[i], err = fs.convert("edits", i, ed.ID, ed.Features); err != nil {
			return nil, err
		}
	}
	return e.Update(ctx, func(tx *index.Tx) error {
		resolve := func(ext int64) (uint32, error) {
			id, err := tx.InternalID(ext)
			if errors.Is(err, index.ErrUnknownID) {
				return 0, fmt.Errorf("%w: external id %d", ErrUnknownNode, ext)
			}
			return id, err
		}
		for i, ext := range u.Delete {
			id, err := resolve(ext)
			if err != nil {
				return fmt.Errorf("delete[%d]: %w", i, err)
			}
			if err := tx.DeleteNode(id); err != nil {
				return fmt.Errorf("delete[%d] (id %d): %w", i, ext, err)
			}
		}
		ids := make([]uint32, len(u.Nodes))
		for i, n := range u.Nodes {
			id, err := tx.AddNode(index.Node{ExternalID: n.ID, Sensitive: n.Sensitive, Label: n.Label, Split: n.Split, Features: newFeat[i]})
			if err != nil {
				return fmt.Errorf("nodes[%d] (id %d): %w", i, n.ID, err)
			}
			ids[i] = id
		}
		for i, n := range u.Nodes {
			for _, w := range n.Edges {
				wid, err := resolve(w)
				if err != nil {
					return fmt.Errorf("nodes[%d] (id %d).edges: %w", i, n.ID, err)
				}
				if _, err := tx.AddEdge(ids[i], wid); err != nil {
					return fmt.Errorf("nodes[%d] (id %d).edges: %w", i, n.ID, err)
				}
			}
		}
		for i, ed := range u.Edits {
			id, err := resolve(ed.ID)
			if err != nil {
				return fmt.Errorf("edits[%d]: %w", i, err)
			}
			if err := applyEdit(tx, id, &ed, editFeat[i]); err != nil {
				return fmt.Errorf("edits[%d] (id %d): %w", i, ed.ID, err)
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

// applyEdit applies one edit to node id and enforces the split membership
// rule on the result (see ExternalUpdate).
func applyEdit(tx *index.Tx, id uint32, ed *NodeEdit, f []float32) error {
	if f != nil {
		if err := tx.SetFeatures(id, f); err != nil {
			return err
		}
	}
	if ed.Sensitive != nil {
		if err := tx.SetSensitive(id, *ed.Sensitive); err != nil {
			return err
		}
	}
	if ed.Label != nil {
		if err := tx.SetLabel(id, *ed.Label); err != nil {
			return err
		}
	}
	if ed.Split != nil {
		if err := tx.SetSplit(id, *ed.Split); err != nil {
			return err
		}
	}
	n, err := tx.Node(id)
	if err != nil {
		return err
	}
	outside := n.Label == index.Unlabelled || (n.Split == index.SplitTest && n.Sensitive == index.Unknown)
	switch {
	case !outside || n.Split == index.SplitNone:
		return nil
	case ed.Split != nil:
		return fmt.Errorf("%w: split %v needs a labelled node (and a known sensitive value for test)", ErrInvalid, n.Split)
	}
	return tx.SetSplit(id, index.SplitNone)
}

// forgetExternal evicts the cached internal ids of deleted nodes (their
// external ids may name new nodes from now on). The generation bump makes
// a lookup that read the graph before the deletion and fills the cache
// after this eviction drop its now wrong entry (rememberExternal).
func (e *Engine) forgetExternal(ids []int64) {
	e.extMu.Lock()
	defer e.extMu.Unlock()
	e.extGen.Add(1)
	for _, id := range ids {
		e.extIDs.Delete(id)
	}
}

// rememberExternal caches id → u, found by a lookup that started at
// deletion generation gen, unless a deletion committed since.
func (e *Engine) rememberExternal(id int64, u uint32, gen uint64) {
	e.extMu.Lock()
	defer e.extMu.Unlock()
	if e.extGen.Load() == gen {
		e.extIDs.Store(id, u)
	}
}

// DeleteNodesExternal deletes nodes by external id in one update (see
// index.Tx.DeleteNode): their edges go, their ids are freed, and the
// subgraphs they were in or expanded are marked dirty.
func (e *Engine) DeleteNodesExternal(ctx context.Context, ids []int64) (*UpdateReport, error) {
	return e.ApplyExternal(ctx, ExternalUpdate{Delete: ids})
}

// EditNodesExternal applies node edits in one update.
func (e *Engine) EditNodesExternal(ctx context.Context, edits []NodeEdit, clip, storedUnits bool) (*UpdateReport, error) {
	return e.ApplyExternal(ctx, ExternalUpdate{Edits: edits, Clip: clip, StoredUnits: storedUnits})
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

// Size is the number of items of u: nodes, their edges, edits, deleted
// ids and edges.
func (u *ExternalUpdate) Size() int {
	n := len(u.Nodes) + len(u.Edits) + len(u.Delete) + len(u.AddEdges) + len(u.RemoveEdges)
	for _, nd := range u.Nodes {
		n += len(nd.Edges)
	}
	return n
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
