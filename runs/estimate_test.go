package runs

import (
	"context"
	"slices"
	"testing"

	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/index/synth"
)

// ensure that Train with EstimateOnly samples at most EstimateRoots roots
// (counted at the sampler), extrapolates to every root, trains nothing, and
// picks the same roots and the same estimate shape for the same seed.
func TestTrain_EstimateOnlySamplesFewRoots(t *testing.T) {
	sc := synth.Small()
	sc.Nodes = 600
	_, g := synthGraph(t, sc, "")
	const limit = 60
	run := func(seed uint64) ([]uint32, *pipeline.Estimate) {
		t.Helper()
		var roots []uint32
		var est *pipeline.Estimate
		rec, res, err := Train(context.Background(), g, e2eConfig(t, seed), &TrainOptions{
			NoSave: true, EstimateOnly: true, EstimateRoots: limit,
			Estimated: func(e *pipeline.Estimate) { est = e },
			onSample:  func(root uint32) { roots = append(roots, root) },
		})
		if err != nil || rec != nil || res != nil {
			t.Fatalf("seed %d: record %v, result %v, error %v", seed, rec, res, err)
		}
		if est == nil {
			t.Fatalf("seed %d: no estimate", seed)
		}
		return roots, est
	}
	roots, est := run(1)
	if len(roots) > limit {
		t.Fatalf("%d roots sampled, want at most %d", len(roots), limit)
	}
	if est.Roots != len(roots) || est.TotalRoots <= est.Roots {
		t.Fatalf("estimate from %d of %d roots, %d sampled", est.Roots, est.TotalRoots, len(roots))
	}
	if !slices.IsSorted(roots) || len(slices.Compact(slices.Clone(roots))) != len(roots) {
		t.Fatalf("roots not sorted or repeated: %v", roots)
	}
	again, est2 := run(1)
	if !slices.Equal(roots, again) || est2.TotalRoots != est.TotalRoots || len(est2.Stages) != len(est.Stages) {
		t.Fatalf("seed 1 twice: roots %v / %v, totals %d / %d", roots, again, est.TotalRoots, est2.TotalRoots)
	}
	for i, s := range est.Stages {
		if s.Stage != est2.Stages[i].Stage || s.Epochs != est2.Stages[i].Epochs || s.Units != est2.Stages[i].Units {
			t.Fatalf("stage %d: %+v, then %+v", i, s, est2.Stages[i])
		}
	}
	if other, _ := run(2); slices.Equal(roots, other) {
		t.Fatalf("seeds 1 and 2 sampled the same roots")
	}
}
