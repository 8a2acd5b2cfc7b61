package runs

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query/querytest"
)

// BenchmarkLargePokecStageEpochs (FASD_BENCH_LARGE=1) times each stage of
// a FASD run with the pokec_z preset on the Pokec-z-sized generated graph:
// it samples every subgraph from the store (27,115 roots), runs the
// pipeline for two epochs per training stage on an evenly spaced subset of
// FASD_POKEC_SUBSET subgraphs (default 2,048; 0 or "all" for all of them),
// and prints, per stage, the measured wall time of the first and of a
// steady epoch (or of the one pass) and the steady time scaled to every
// subgraph (stages are linear in the number of subgraphs; the full-graph
// GCN does not depend on it).
func BenchmarkLargePokecStageEpochs(b *testing.B) {
	if os.Getenv("FASD_BENCH_LARGE") == "" {
		b.Skip("set FASD_BENCH_LARGE=1")
	}
	subset := 2048
	if v := os.Getenv("FASD_POKEC_SUBSET"); v == "all" || v == "0" {
		subset = 0
	} else if v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			b.Fatalf("FASD_POKEC_SUBSET=%q: want a count or all", v)
		}
		subset = n
	}
	ctx := context.Background()
	s := querytest.LoadSynth(b, "pokec", b.TempDir())
	g, err := index.Open(s)
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := pipeline.Preset("pokec_z")
	if err != nil {
		b.Fatal(err)
	}
	const epochs = 2
	cfg.Sens.Epochs, cfg.Score.Epochs, cfg.Classifier.Epochs, cfg.Baseline.Epochs = epochs, epochs, epochs, epochs
	v, err := g.View()
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	in, err := TrainInput(ctx, v, &cfg, true)
	v.Close()
	if err != nil {
		b.Fatal(err)
	}
	sampling := time.Since(t0)
	all := len(in.Subgraphs)
	// The subgraphs' adjacency and the node features (held once, not per
	// subgraph) are the memory floor of any run on this graph; a dense
	// per-subgraph copy of the features (the debiased view, and the
	// fairness gradients for λ > 0) would be xFloats.
	var xFloats, aFloats int64
	for _, sg := range in.Subgraphs {
		xFloats += int64(sg.N() * in.D)
		aFloats += int64(len(sg.A))
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("pokec_z input: node features %d MiB; per-subgraph X would be %d MiB, A %d MiB (float32) over %d subgraphs; live heap after sampling %d MiB\n",
		int64(len(in.Features))*4>>20, xFloats*4>>20, aFloats*4>>20, all, ms.HeapAlloc>>20)
	small := *in
	if subset > 0 && subset < all {
		small.Subgraphs = make([]*fasd.Subgraph, 0, subset)
		step := float64(all) / float64(subset)
		for i := range subset {
			small.Subgraphs = append(small.Subgraphs, in.Subgraphs[int(float64(i)*step)])
		}
	}
	nodes := 0
	for _, sg := range small.Subgraphs {
		nodes += sg.N()
	}
	type mark struct {
		start time.Time
		ends  []time.Time
		total time.Duration
	}
	marks := map[pipeline.Stage]*mark{}
	var order []pipeline.Stage
	cb := pipeline.Callbacks{
		StageStart: func(st pipeline.Stage, _ int) {
			order = append(order, st)
			marks[st] = &mark{start: time.Now()}
		},
		Epoch: func(st pipeline.Stage, _ int, _, _ float64) {
			if m := marks[st]; m != nil {
				m.ends = append(m.ends, time.Now())
			}
		},
		StageEnd: func(st pipeline.Stage, d time.Duration) { marks[st].total = d },
	}
	b.ResetTimer()
	variants := []pipeline.Variant{pipeline.VariantFASD, pipeline.VariantNoDiffusion, pipeline.VariantGCN}
	if _, err := pipeline.Run(ctx, cfg, &small, &pipeline.Options{Variants: variants, Callbacks: cb}); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	scale := float64(all) / float64(len(small.Subgraphs))
	fmt.Printf("pokec_z: %d subgraphs sampled from the store in %s; run on %d of them (%.1f nodes each), scale ×%.2f\n",
		all, sampling.Round(time.Millisecond), len(small.Subgraphs), float64(nodes)/float64(len(small.Subgraphs)), scale)
	fmt.Printf("%-14s %12s %12s %14s\n", "stage", "first", "steady", "steady, all")
	for _, st := range order {
		m := marks[st]
		first, steady := m.total, m.total
		if len(m.ends) >= 2 {
			first = m.ends[0].Sub(m.start)
			steady = m.ends[len(m.ends)-1].Sub(m.ends[len(m.ends)-2])
		}
		full := time.Duration(float64(steady) * scale)
		if st == pipeline.StageBaseline {
			full = steady
		}
		fmt.Printf("%-14s %12s %12s %14s\n", st, first.Round(time.Millisecond), steady.Round(time.Millisecond), full.Round(time.Millisecond))
	}
}
