package runs

import (
	"context"
	"fmt"
	"slices"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/index"
)

// estimateInput is the input of an estimate-only run without the GCN
// baseline: the labels, sensitive values and splits of all nodes come from
// the store's node sets (bitmaps) instead of every node record, limit roots
// are chosen as pickRoots does, and only the nodes of their subgraphs are
// read (the subgraphs keep their features; Input.Features stays nil). It
// returns the input and the number of roots of the full run. onSample, if
// set, is called before each root is sampled.
func estimateInput(ctx context.Context, v *index.View, cfg *pipeline.Config, limit int, onSample func(root uint32)) (*pipeline.Input, int, error) {
	n, d := v.NumNodes(), v.NumFeatures()
	in := &pipeline.Input{NumNodes: n, D: d, Labels: make([]int8, n), Sens: make([]int8, n), Split: make([]fasd.Split, n),
		FeatureNames: v.FeatureNames()}
	for u := range in.Labels {
		in.Labels[u], in.Sens[u] = -1, -1
	}
	fill := func(bm interface{ ToArray() []uint32 }, dst []int8, val int8) {
		for _, u := range bm.ToArray() {
			if int(u) < n {
				dst[u] = val
			}
		}
	}
	for _, val := range []int8{0, 1} {
		ls, err := v.LabelSet(val)
		if err != nil {
			return nil, 0, fmt.Errorf("label set %d: %w", val, err)
		}
		fill(ls, in.Labels, val)
		gs, err := v.Group(val)
		if err != nil {
			return nil, 0, fmt.Errorf("group %d: %w", val, err)
		}
		fill(gs, in.Sens, val)
	}
	var roots []uint32
	for _, sp := range index.Splits {
		bm, err := v.SplitSet(sp)
		if err != nil {
			return nil, 0, fmt.Errorf("split %v: %w", sp, err)
		}
		for _, u := range bm.ToArray() {
			if int(u) < n {
				in.Split[u] = sp
				roots = append(roots, u)
			}
		}
	}
	slices.Sort(roots) // as trainInput lists them, so pickRoots picks the same
	total := len(roots)
	var err error
	if in.Scope, err = pipeline.PreviewScope(cfg, in); err != nil {
		return nil, 0, err
	}
	if in.Subgraphs, err = sampleRoots(ctx, v, cfg, d, viewNodes{v: v, in: in}, pickRoots(roots, limit, cfg.Seed), true, onSample); err != nil {
		return nil, 0, err
	}
	return in, total, nil
}

// viewNodes is a fasd.NodeSource that reads features from the view's node
// records and the other attributes from in's arrays.
type viewNodes struct {
	v  *index.View
	in *pipeline.Input
}

func (s viewNodes) NodeFeatures(u uint32, dst []float32) error {
	f, err := s.v.Features(u, dst[:0])
	if err != nil {
		return fmt.Errorf("features of node %d: %w", u, err)
	}
	if len(f) != len(dst) {
		return fmt.Errorf("%w: node %d has %d features, want %d", ErrCorrupt, u, len(f), len(dst))
	}
	return nil
}

func (s viewNodes) NodeAttrs(u uint32) (int8, int8, fasd.Split, error) {
	if int(u) >= len(s.in.Labels) {
		return 0, 0, fasd.SplitNone, fmt.Errorf("%w: node %d of %d", ErrCorrupt, u, len(s.in.Labels))
	}
	return s.in.Sens[u], s.in.Labels[u], s.in.Split[u], nil
}
