package pipeline

import (
	"context"
	"testing"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/nn"
)

// fBenchInput is a Bail-shaped graph (D = 18, mean degree 33, depth 2,
// fanout 10) of n nodes with its subgraphs and evaluation arrays.
func fBenchInput(b testing.TB, n int, cfg *Config) (*view, *evalData, int) {
	g := newToyGraph(n, 18, 33, 0.7, 0.3, 0.5, 3)
	in := g.input(b, 1, 10)
	sgs, train, val, test, err := in.validate()
	if err != nil {
		b.Fatal(err)
	}
	return originalView(sgs, in.D, nil), newEvalData(cfg, in, train, val, test), in.D
}

// BenchmarkFStage is the whole of f's training (the w/o-Diffusion f: the
// original subgraphs) with the default preset under each schedule, on a
// 3,000-node Bail-shaped graph (2,7xx subgraphs), two workers. It reports
// the optimizer steps, the subgraph-steps and the validations.
func BenchmarkFStage(b *testing.B) {
	for _, sched := range []ClassSchedule{ClassEpochs, ClassBudget} {
		b.Run(string(sched), func(b *testing.B) {
			cfg, err := Preset(DefaultPreset)
			if err != nil {
				b.Fatal(err)
			}
			cfg.Classifier.Schedule = sched
			v, ev, d := fBenchInput(b, 3000, &cfg)
			w := nn.NewWorkers[float32](2)
			defer w.Close()
			var vr VariantResult
			b.ResetTimer()
			for b.Loop() {
				if _, vr, err = trainClassifier(context.Background(), &cfg, v, d, w, ev, VariantNoDiffusion, 1, 2, &reporter{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(v.sgs)), "subgraphs")
			if st := vr.FBudget; st != nil {
				b.ReportMetric(float64(st.SubgraphSteps), "subgraph-steps")
				b.ReportMetric(float64(st.Evals), "validations")
			} else {
				b.ReportMetric(float64(len(vr.ValCurve)*len(v.sgs)), "subgraph-steps")
				b.ReportMetric(float64(len(vr.ValCurve)), "validations")
			}
			b.ReportMetric(float64(vr.Test.AUC), "test-auc")
		})
	}
}

// BenchmarkFValidation is one validation of f on the 3,000-node
// Bail-shaped graph: every subgraph ("all", the epochs schedule's), or the
// subgraphs covering a sample of 100 validation nodes ("sample100", the
// budget schedule's with classifier.val_cap = 100); it reports the
// subgraphs evaluated.
func BenchmarkFValidation(b *testing.B) {
	cfg, err := Preset(DefaultPreset)
	if err != nil {
		b.Fatal(err)
	}
	v, ev, d := fBenchInput(b, 3000, &cfg)
	net, err := nn.NewGCNNet[float32](classifierArch(&cfg, d), fasd.NewRand(1))
	if err != nil {
		b.Fatal(err)
	}
	nodes := fValNodes(ev.val, 100, fasd.NewRand(2))
	for _, tc := range []struct {
		name string
		idx  []int
	}{{"all", nil}, {"sample100", coveringSubgraphs(v.sgs, nodes, ev.numNodes)}} {
		b.Run(tc.name, func(b *testing.B) {
			sel := newSelector(ev, VariantNoDiffusion)
			probs := make([][]float32, len(v.sgs))
			for b.Loop() {
				if err := classProbsOn(context.Background(), net, v, tc.idx, d, 2, probs); err != nil {
					b.Fatal(err)
				}
				if _, err := sel.averagedOn(v, probs, tc.idx); err != nil {
					b.Fatal(err)
				}
			}
			n := len(tc.idx)
			if tc.idx == nil {
				n = len(v.sgs)
			}
			b.ReportMetric(float64(n), "subgraphs")
		})
	}
}
