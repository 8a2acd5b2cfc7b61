package runs

import (
	"context"
	"fmt"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/index"
)

// sampleRoots samples and builds one subgraph per root with the run's
// per-root seeds (fasd.RootSeed(cfg.Seed, PurposeSample, root)), calling
// onSample (if set) before each. With keepX every subgraph keeps its
// feature rows; without, they are built (fasd.BuildSubgraph checks them)
// into one scratch buffer that each subgraph hands back, for an Input whose
// Features hold the rows. Every subgraph is compact (fasd.Subgraph.Compact:
// its adjacency as its non-zero entries, a tenth of the dense matrix at
// 20 nodes), built in one dense scratch matrix.
func sampleRoots(ctx context.Context, v *index.View, cfg *pipeline.Config, d int, src fasd.NodeSource, roots []uint32,
	keepX bool, onSample func(uint32)) ([]*fasd.Subgraph, error) {
	s, err := fasd.NewSampler(cfg.SampleOptions())
	if err != nil {
		return nil, err
	}
	sgs := make([]*fasd.Subgraph, 0, len(roots))
	var smp fasd.Sample
	var xbuf, abuf []float32
	for _, root := range roots {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if onSample != nil {
			onSample(root)
		}
		if err := s.Sample(v, root, fasd.NewRand(fasd.RootSeed(cfg.Seed, fasd.PurposeSample, root)), &smp); err != nil {
			return nil, fmt.Errorf("sample root %d: %w", root, err)
		}
		sg := &fasd.Subgraph{X: xbuf, A: abuf}
		if keepX {
			sg.X = nil
		}
		if err := fasd.BuildSubgraph(&smp, d, src, sg); err != nil {
			return nil, fmt.Errorf("build subgraph of root %d: %w", root, err)
		}
		if !keepX {
			xbuf, sg.X = sg.X, nil
		}
		abuf = sg.A
		sg.Compact()
		sgs = append(sgs, sg)
	}
	return sgs, nil
}
