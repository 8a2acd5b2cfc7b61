// The write API by external ids: ExternalUpdate and Engine.ApplyExternal
// with its single-purpose shorthands.

package query

import (
	"context"
	"errors"
	"fmt"

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

// Size is the number of items of u: nodes, their edges, edits, deleted
// ids and edges.
func (u *ExternalUpdate) Size() int {
	n := len(u.Nodes) + len(u.Edits) + len(u.Delete) + len(u.AddEdges) + len(u.RemoveEdges)
	for _, nd := range u.Nodes {
		n += len(nd.Edges)
	}
	return n
}
