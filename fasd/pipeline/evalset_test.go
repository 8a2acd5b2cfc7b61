package pipeline

import (
	"context"
	"slices"
	"testing"

	"github.com/fasd-db/fasd/fasd"
)

func TestEvalSet(t *testing.T) {
	est := &reporter{evals: new([]evalTiming)}
	for _, tc := range []struct {
		name  string
		r     *reporter
		idx   []int
		n     int
		wantN int
	}{
		{"run: all", &reporter{}, nil, 10, 10},
		{"run: subset", &reporter{}, []int{3, 5}, 10, 2},
		{"estimate: all", est, nil, 100, 1100},
		{"estimate: subset", est, []int{7, 2, 9}, 12, 1026},
		{"estimate: large enough", est, nil, estimateEvalMin, estimateEvalMin},
		{"estimate: empty", est, []int{}, 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := tc.r.evalSet(tc.idx, tc.n)
			if n != tc.wantN {
				t.Fatalf("n = %d, want %d", n, tc.wantN)
			}
			if tc.r.evals == nil || n == tc.n || (tc.idx != nil && n == len(tc.idx)) {
				if !slices.Equal(got, tc.idx) {
					t.Fatalf("idx = %v, want the input %v", got, tc.idx)
				}
				return
			}
			if len(got) != n {
				t.Fatalf("len(idx) = %d, want %d", len(got), n)
			}
			m := tc.n
			if tc.idx != nil {
				m = len(tc.idx)
			}
			seen := map[int]bool{}
			for k, e := range got {
				want := k % m
				if tc.idx != nil {
					want = tc.idx[k%m]
				}
				if e%tc.n != want || e/tc.n != k/m {
					t.Fatalf("entry %d = %d: want subgraph %d, repetition %d", k, e, want, k/m)
				}
				if seen[e] {
					t.Fatalf("entry %d = %d repeats a slot", k, e)
				}
				seen[e] = true
			}
		})
	}
}

// ensure that classProbsOn writes a repeated subgraph (reporter.evalSet's
// entries i + k·n) to its own slot with the subgraph's own probabilities,
// so an estimate may evaluate a few subgraphs many times over.
func TestClassProbsOnRepeated(t *testing.T) {
	g := newToyGraph(120, 7, 6, 0.8, 0.4, 0.8, 4)
	in := g.input(t, 1, 6)
	cfg := fastConfig(t)
	m, err := newModels(&cfg, in.D, false, true, true, false, fasd.NewRand(3))
	if err != nil {
		t.Fatal(err)
	}
	sgs := in.Subgraphs[:23]
	v := originalView(sgs, in.D, nil)
	want := make([][]float32, len(sgs))
	if err := classProbs(context.Background(), m.F, v, in.D, 2, want); err != nil {
		t.Fatal(err)
	}
	rep := &reporter{evals: new([]evalTiming)}
	idx, n := rep.evalSet([]int{4, 0, 17}, len(sgs))
	got := make([][]float32, slotsFor(idx, len(sgs)))
	if err := classProbsOn(context.Background(), m.F, v, idx, in.D, 2, got); err != nil {
		t.Fatal(err)
	}
	for _, e := range idx[:n] {
		if !slices.Equal(got[e], want[e%len(sgs)]) {
			t.Fatalf("slot %d: %v, want subgraph %d's %v", e, got[e], e%len(sgs), want[e%len(sgs)])
		}
	}
	for i := range sgs {
		if i != 4 && i != 0 && i != 17 && got[i] != nil {
			t.Fatalf("subgraph %d not in the set was written", i)
		}
	}
}

func TestLowerQuartile(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{5}, 5},
		{[]float64{3, 1}, 1},
		{[]float64{9, 1, 5, 7, 3}, 3},
		{[]float64{7, 6, 5, 4, 3, 2, 1}, 2},
		{[]float64{8, 1, 2, 9, 3, 4, 5, 6}, 2},
	} {
		if got := lowerQuartile(slices.Clone(tc.xs)); got != tc.want {
			t.Errorf("lowerQuartile(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}
