package pipeline

import (
	"context"
	"testing"

	"github.com/fasd-db/fasd/fasd/nn"
)

// BenchmarkFreshProbeEpoch is one epoch of the fresh probe (the default
// profile's g_sen schedule, no early stopping) on the train- and
// validation-rooted subgraphs of a Bail-shaped graph (D = 18, mean degree
// 33, depth 2, fanout 10) of 3,000 nodes, two workers; per subgraph the
// cost is that of a Bail-sized run.
func BenchmarkFreshProbeEpoch(b *testing.B) {
	g := newToyGraph(3000, 18, 33, 0.7, 0.3, 0.5, 3)
	in := g.input(b, 1, 10)
	sgs, _, _, _, err := in.validate()
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := Preset(DefaultPreset)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Sens.Epochs, cfg.Sens.Patience = 1, 0
	w := nn.NewWorkers[float32](2)
	defer w.Close()
	p := newProber(&Options{Probe: true}, &cfg, sgs, in.Split, in.D, w, 1)
	v := originalView(sgs, in.D, nil)
	b.ReportMetric(float64(len(p.trainIdx)), "subgraphs")
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.train(context.Background(), nil, v, ProbeData); err != nil {
			b.Fatal(err)
		}
	}
}
