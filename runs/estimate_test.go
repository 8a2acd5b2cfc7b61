package runs

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

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

// ensure that the estimate's input (node sets instead of every record,
// features of the sampled nodes only) holds the same subgraphs as
// trainInput for the same roots.
func TestEstimateInput_SameSubgraphs(t *testing.T) {
	sc := synth.Small()
	sc.Nodes = 500
	_, g := synthGraph(t, sc, "")
	v, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	cfg := e2eConfig(t, 3)
	full, total, err := trainInput(context.Background(), v, &cfg, false, 40, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	est, total2, err := estimateInput(context.Background(), v, &cfg, 40, nil)
	if err != nil {
		t.Fatal(err)
	}
	if total != total2 || len(full.Subgraphs) != len(est.Subgraphs) || len(est.Subgraphs) != 40 {
		t.Fatalf("totals %d / %d, subgraphs %d / %d", total, total2, len(full.Subgraphs), len(est.Subgraphs))
	}
	if !slices.Equal(full.Labels, est.Labels) || !slices.Equal(full.Sens, est.Sens) || !slices.Equal(full.Split, est.Split) {
		t.Fatal("labels, sensitive values or splits differ")
	}
	d := full.D
	for i, a := range full.Subgraphs {
		b := est.Subgraphs[i]
		if !slices.Equal(a.Nodes, b.Nodes) || !slices.Equal(a.A, b.A) || !slices.Equal(a.S, b.S) || !slices.Equal(a.Y, b.Y) || !slices.Equal(a.Split, b.Split) {
			t.Fatalf("subgraph %d differs", i)
		}
		for u, id := range a.Nodes {
			if !slices.Equal(b.X[u*d:(u+1)*d], full.Features[int(id)*d:int(id+1)*d]) {
				t.Fatalf("subgraph %d, node %d: features differ", i, id)
			}
		}
	}
}

// ensure that an estimate with sample.scope = "auto" trains no network:
// labels that fail the four-fifths rule settle the choice (the paper's
// sampling, final), and labels that pass leave it pending.
func TestTrain_EstimateOnlyScopeFromLabels(t *testing.T) {
	for _, tc := range []struct {
		name        string
		correlation float64
		pending     bool
	}{
		{"labels follow the group", 0.6, false},
		{"labels independent of the group", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := synth.Small()
			sc.Nodes = 1000
			sc.LabelCorrelation = tc.correlation
			_, g := synthGraph(t, sc, "nba")
			cfg := e2eConfig(t, 1)
			cfg.Sample.Scope = string(pipeline.SampleAuto)
			var ch *pipeline.ScopeChoice
			_, _, err := Train(context.Background(), g, cfg, &TrainOptions{
				NoSave: true, EstimateOnly: true, EstimateRoots: 40,
				Estimated: func(*pipeline.Estimate) {},
				Sampled:   func(in *pipeline.Input, _ time.Duration) { ch = in.Scope },
			})
			if err != nil {
				t.Fatal(err)
			}
			if ch == nil {
				t.Fatal("no scope choice reported")
			}
			t.Logf("%s", ch)
			if ch.Pending != tc.pending || ch.Wide {
				t.Fatalf("pending %v, wide %v; want pending %v, not wide (%s)", ch.Pending, ch.Wide, tc.pending, ch)
			}
			if !math.IsNaN(float64(ch.GCNAUC)) || !math.IsNaN(float64(ch.MLPAUC)) {
				t.Errorf("an estimate trained the networks: %s", ch)
			}
			if wantNets := map[bool]int{false: 0, true: 10}[tc.pending]; ch.Nets != wantNets {
				t.Errorf("nets %d, want %d", ch.Nets, wantNets)
			}
		})
	}
}
