package pipeline

import (
	"context"
	"sync"
	"testing"
	"time"
)

// ensure that the score and debias stages each estimate their time once,
// the debias stage after its debiasEstimateChunks-th chunk (so that the
// rate excludes the first chunk's warm-up).
func TestInRunEstimates(t *testing.T) {
	g := newToyGraph(420, 6, 6, 0.8, 0.4, 0.8, 11)
	in := g.input(t, 1, 5)
	if len(in.Subgraphs) <= debiasEstimateChunks*debiasChunk {
		t.Fatalf("%d subgraphs: too few for the debias estimate", len(in.Subgraphs))
	}
	cfg := fastConfig(t)
	var mu sync.Mutex
	done := map[Stage]int{}
	type report struct {
		d    time.Duration
		done int
	}
	got := map[Stage][]report{}
	cb := Callbacks{
		Progress: func(s Stage, d, _ int) {
			mu.Lock()
			done[s] = d
			mu.Unlock()
		},
		Estimate: func(s Stage, d time.Duration) {
			mu.Lock()
			got[s] = append(got[s], report{d, done[s]})
			mu.Unlock()
		},
	}
	if _, err := Run(context.Background(), cfg, in, &Options{Variants: []Variant{VariantFASD}, Callbacks: cb}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []Stage{StageScore, StageDebias} {
		rs := got[s]
		if len(rs) != 1 || !(rs[0].d > 0) {
			t.Errorf("%s: estimates %+v, want one, positive", s, rs)
		}
	}
	if rs := got[StageDebias]; len(rs) == 1 && rs[0].done != (debiasEstimateChunks-1)*debiasChunk {
		t.Errorf("debias estimated after %d subgraphs, want after %d (progress reported after the estimate)", rs[0].done, (debiasEstimateChunks-1)*debiasChunk)
	}
}
