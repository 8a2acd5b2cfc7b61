package fasd

import (
	"testing"
)

// Benchmark sizes: NBA-shaped subgraphs (N = 21 under d = 2, k = 10; D = 95).
const (
	benchNodes = 21
	benchFeat  = 95
)

func BenchmarkSampler_Alg3_d2k10_NBAShaped(b *testing.B) {
	g := randomGraph(b, 403, 0.13, 1)
	s, _ := NewSampler(SampleOptions{Depth: 2, Fanout: 10})
	var smp Sample
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		root := uint32(i % 400)
		if err := s.Sample(g, root, NewRand(RootSeed(1, PurposeSample, root)), &smp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDebiaser_Run_N21_D95 measures the sampler's own cost (the model
// is a cheap linear stand-in).
func BenchmarkDebiaser_Run_N21_D95(b *testing.B) {
	x0, a0 := randomState(benchNodes, benchFeat, 1)
	d, _ := NewDebiaser(DebiasOptions{Steps: 5})
	x, a := make([]float32, len(x0)), make([]float32, len(a0))
	rng := NewRand(1)
	b.ReportAllocs()
	for b.Loop() {
		if err := d.Run(linearModel{0.3}, x0, a0, benchNodes, benchFeat, rng, x, a); err != nil {
			b.Fatal(err)
		}
	}
}
