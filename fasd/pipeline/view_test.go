package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fasd-db/fasd/fasd"
)

// memScratch is an in-memory Scratch that counts how many are open.
type memScratch struct {
	mu      sync.Mutex
	b       []byte
	open    *int
	failAt  int // ReadAt fails from this call on (0: never)
	reads   int
	written int64
}

func (s *memScratch) WriteAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(s.b)) {
		s.b = append(s.b, make([]byte, end-int64(len(s.b)))...)
	}
	s.written += int64(len(p))
	return copy(s.b[off:], p), nil
}

func (s *memScratch) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.failAt > 0 && s.reads >= s.failAt {
		return 0, errors.New("scratch device gone")
	}
	if off >= int64(len(s.b)) {
		return 0, io.EOF
	}
	n := copy(p, s.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (s *memScratch) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.open--
	return nil
}

// withoutX returns a copy of in whose subgraphs hold no features: they
// come from Input.Features (the toy graph's node features).
func withoutX(in *Input, x []float32) *Input {
	c := *in
	c.Features = x
	c.Subgraphs = make([]*fasd.Subgraph, len(in.Subgraphs))
	for i, g := range in.Subgraphs {
		s := *g
		s.X = nil
		c.Subgraphs[i] = &s
	}
	return &c
}

// compactA returns in with every subgraph compact (fasd.Subgraph.Compact
// on a copy).
func compactA(in *Input) *Input {
	c := *in
	c.Subgraphs = make([]*fasd.Subgraph, len(in.Subgraphs))
	for i, g := range in.Subgraphs {
		s := *g
		s.Compact()
		c.Subgraphs[i] = &s
	}
	return &c
}

// runRecord is a run's result and model bundle with the timings left out.
func runRecord(t *testing.T, r *Result) string {
	t.Helper()
	c := *r
	c.Timings = nil
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Models != nil {
		m, err := r.Models.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, m...)
	}
	return string(b)
}

// ensure that where the features live does not change a run: subgraphs
// with their own X and the debiased features in memory, or rows gathered
// from Input.Features and the debiased features in a scratch, and dense or
// compact input adjacency, give the same result and models bit for bit, with the fairness term (cached gradients) and without, for every
// variant, the diagnostics, the probes and a retune setting; every scratch
// is closed by the end of the run.
func TestRun_FeatureLayoutsSameResult(t *testing.T) {
	g := newToyGraph(90, 5, 6, 0.8, 0.4, 0.8, 11)
	in := g.input(t, 2, 5)
	for _, lambda := range []float64{0, 0.5} {
		cfg := fastConfig(t)
		cfg.Seed = 2
		cfg.Sens.Epochs, cfg.Score.Epochs, cfg.Classifier.Epochs, cfg.Baseline.Epochs = 3, 1, 3, 3
		cfg.Diffusion.LambdaX, cfg.Diffusion.LambdaA = lambda, lambda
		open, made := 0, 0
		var scratches []*memScratch
		newScratch := func() (Scratch, error) {
			open++
			made++
			s := &memScratch{open: &open}
			scratches = append(scratches, s)
			return s, nil
		}
		opt := func(s func() (Scratch, error)) *Options {
			return &Options{Variants: Variants(), Diagnostics: true, Probe: true,
				Retune: []Retune{{Set: []string{"debias.steps=2"}}}, Scratch: s}
		}
		ref, err := Run(context.Background(), cfg, in, opt(nil))
		if err != nil {
			t.Fatal(err)
		}
		want := runRecord(t, ref)
		for _, c := range []struct {
			name    string
			in      *Input
			scratch func() (Scratch, error)
		}{
			{"features+scratch", withoutX(in, g.x), newScratch},
			{"compact adjacency", compactA(in), nil},
			{"features+scratch+compact adjacency", compactA(withoutX(in, g.x)), newScratch},
		} {
			made = 0
			res, err := Run(context.Background(), cfg, c.in, opt(c.scratch))
			if err != nil {
				t.Fatalf("λ=%g %s: %v", lambda, c.name, err)
			}
			if got := runRecord(t, res); got != want {
				t.Errorf("λ=%g %s: the run differs from the in-memory one", lambda, c.name)
			}
			// FASD, w/o Fairness and one retune each; at λ = 0 w/o
			// Fairness shares FASD's networks and copies its retune row.
			wantMade := 4
			if lambda == 0 {
				wantMade = 3
			}
			if c.scratch != nil && (made != wantMade || open != 0) {
				t.Errorf("λ=%g %s: %d scratches made (want %d), %d left open", lambda, c.name, made, wantMade, open)
			}
		}
		for _, s := range scratches {
			if s.written == 0 || s.reads == 0 {
				t.Errorf("λ=%g: a scratch was written %d bytes and read %d times", lambda, s.written, s.reads)
			}
		}
	}
}

// ensure that a scratch that fails to read fails the run with its error,
// closes every scratch, and that an input with neither features nor X is
// refused.
func TestRun_ScratchErrorsAndMissingFeatures(t *testing.T) {
	g := newToyGraph(100, 5, 6, 0.8, 0.4, 0.8, 12)
	in := g.input(t, 1, 5)
	cfg := fastConfig(t)
	cfg.Sens.Epochs, cfg.Score.Epochs, cfg.Classifier.Epochs = 3, 1, 3
	open := 0
	_, err := Run(context.Background(), cfg, in, &Options{Scratch: func() (Scratch, error) {
		open++
		return &memScratch{open: &open, failAt: 5}, nil
	}})
	if err == nil || !strings.Contains(err.Error(), "scratch device gone") {
		t.Errorf("failing scratch: %v", err)
	}
	if open != 0 {
		t.Errorf("%d scratches left open after the error", open)
	}
	_, err = Run(context.Background(), cfg, in, &Options{Scratch: func() (Scratch, error) { return nil, errors.New("disk full") }})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("scratch that cannot be made: %v", err)
	}
	bad := withoutX(in, nil)
	if _, err := Run(context.Background(), cfg, bad, nil); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "no features") {
		t.Errorf("no features anywhere: %v", err)
	}
	short := withoutX(in, g.x[:len(g.x)-1])
	if _, err := Run(context.Background(), cfg, short, nil); !errors.Is(err, ErrInput) {
		t.Errorf("short Features: %v", err)
	}
}

// ensure that the spill round-trips every bit pattern (NaN payloads,
// signed zeros, subnormals) and refuses wrong lengths.
func TestSpill_RoundTripBits(t *testing.T) {
	sgs := []*fasd.Subgraph{{Nodes: []uint32{0, 1}}, {Nodes: []uint32{2}}}
	open := 1
	p := newSpill(&memScratch{open: &open}, sgs, 3)
	vals := [][]float32{
		{0, float32frombits(0x80000000), float32frombits(0x7fc00001), float32frombits(1), 1.5, -3e38},
		{float32frombits(0xff800000), float32frombits(0x7f800000), 42},
	}
	for i := len(vals) - 1; i >= 0; i-- {
		if err := p.write(i, vals[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range vals {
		got := make([]float32, len(want))
		if err := p.read(i, got); err != nil {
			t.Fatal(err)
		}
		for k := range want {
			if float32bits(got[k]) != float32bits(want[k]) {
				t.Errorf("subgraph %d [%d]: %#x, want %#x", i, k, float32bits(got[k]), float32bits(want[k]))
			}
		}
	}
	if err := p.write(0, make([]float32, 5)); err == nil {
		t.Error("short write accepted")
	}
	if err := p.read(1, make([]float32, 4)); err == nil {
		t.Error("long read accepted")
	}
	if err := p.close(); err != nil || open != 0 {
		t.Errorf("close: %v, %d open", err, open)
	}
}

func float32bits(f float32) uint32     { return math.Float32bits(f) }
func float32frombits(b uint32) float32 { return math.Float32frombits(b) }

// Ensure that a sweep gives the same points with its debiased features
// spilled as in memory, closes every scratch, and trains g_sen only when a
// λ > 0 needs it.
func TestSweep_SpillSameAndGSenOnlyWhenNeeded(t *testing.T) {
	g := newToyGraph(90, 5, 6, 0.8, 0.4, 0.8, 11)
	in := g.input(t, 2, 5)
	cfg := fastConfig(t)
	cfg.Seed = 3
	cfg.Sens.Epochs, cfg.Score.Epochs, cfg.Classifier.Epochs = 3, 1, 3
	for _, lambdas := range [][]float64{{0}, {0, 0.5}} {
		var stages []Stage
		cb := Callbacks{StageStart: func(s Stage, _ int) { stages = append(stages, s) }}
		ref, err := Sweep(context.Background(), cfg, in, []int{1, 2}, lambdas, &Options{Callbacks: cb})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := slices.Contains(stages, StageGSen), lambdas[len(lambdas)-1] > 0; got != want {
			t.Errorf("λ %v: g_sen trained = %v, want %v (stages %v)", lambdas, got, want, stages)
		}
		count := func(s Stage) (n int) {
			for _, x := range stages {
				if x == s {
					n++
				}
			}
			return n
		}
		if count(StageScore) != len(lambdas) || count(StageDebias) != 2*len(lambdas) || count(StageClassifier) != 2*len(lambdas) {
			t.Errorf("λ %v: stages %v, want score once per λ, debias and f once per point", lambdas, stages)
		}
		open, made := 0, 0
		newScratch := func() (Scratch, error) {
			open++
			made++
			return &memScratch{open: &open}, nil
		}
		got, err := Sweep(context.Background(), cfg, withoutX(in, g.x), []int{1, 2}, lambdas, &Options{Scratch: newScratch})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, ref) {
			t.Errorf("λ %v: spilled sweep differs:\n got %+v\nwant %+v", lambdas, got, ref)
		}
		if made != 2*len(lambdas) || open != 0 {
			t.Errorf("λ %v: %d scratches made (want %d), %d left open", lambdas, made, 2*len(lambdas), open)
		}
	}
}
