package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/fasd-db/fasd/fasd"
)

// ensure that a small run of every variant finishes with metrics in range,
// reports every stage, and is deterministic for a seed.
func TestRun_AllVariantsDeterministic(t *testing.T) {
	g := newToyGraph(240, 8, 8, 0.8, 0.4, 0.8, 1)
	in := g.input(t, 3, 5)
	cfg := fastConfig(t)
	cfg.Seed = 3
	var stages []Stage
	estimates := map[Stage]time.Duration{}
	opt := &Options{Variants: Variants(), Diagnostics: true, Callbacks: Callbacks{
		StageStart: func(s Stage, _ int) { stages = append(stages, s) },
		Estimate:   func(s Stage, d time.Duration) { estimates[s] = d },
	}}
	r1, err := Run(context.Background(), cfg, in, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(r1.Variants) != 4 {
		t.Fatalf("got %d variants", len(r1.Variants))
	}
	for _, v := range r1.Variants {
		m := v.Test
		if !(m.Acc >= 0 && m.Acc <= 1) || !(m.DP >= 0 && m.DP <= 1) || !(m.EO >= 0 && m.EO <= 1) || v.BestEpoch < 0 {
			t.Errorf("%s: implausible metrics %+v (best epoch %d)", v.Variant, m, v.BestEpoch)
		}
	}
	if _, ok := estimates[StageScore]; !ok {
		t.Errorf("no time estimate for the score stage (got %v)", estimates)
	}
	if len(stages) < 8 {
		t.Errorf("stages reported: %v", stages)
	}
	dg := r1.Diagnostics
	if dg == nil || dg.LossRatio == nil || dg.GSenOrig == nil || dg.GSenOrig.N == 0 {
		t.Fatalf("diagnostics missing: %+v", dg)
	}
	if _, err := json.Marshal(r1); err != nil {
		t.Fatalf("result does not marshal: %v", err)
	}
	// Same seed, same input, same workers: identical metrics.
	r2, err := Run(context.Background(), cfg, in, &Options{Variants: Variants(), Diagnostics: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range r1.Variants {
		a, b := r1.Variants[i], r2.Variants[i]
		if a.Test.Acc != b.Test.Acc || a.Test.DP != b.Test.DP || a.Test.EO != b.Test.EO || a.BestEpoch != b.BestEpoch {
			t.Errorf("%s not deterministic: %+v vs %+v", a.Variant, a.Test, b.Test)
		}
	}
	if r1.Diagnostics.Edits != r2.Diagnostics.Edits {
		t.Errorf("debiasing not deterministic: %+v vs %+v", r1.Diagnostics.Edits, r2.Diagnostics.Edits)
	}
}

// ensure that the model bundle round-trips and that an Engine built from
// the decoded bundle debiases and classifies exactly like the pipeline,
// for f with and without root weights, with the architecture chosen on
// validation, and with each head.
func TestModels_RoundTripSamePath(t *testing.T) {
	for _, c := range []struct {
		arch Arch
		head Head
	}{{ArchGCN, HeadMLP}, {ArchRoot, HeadMLP}, {ArchAuto, HeadMLP}, {ArchGCN, HeadLinear}, {ArchAuto, HeadGCN}} {
		t.Run(string(c.arch)+"/"+string(c.head), func(t *testing.T) { testModelsRoundTrip(t, c.arch, c.head) })
	}
}

func testModelsRoundTrip(t *testing.T, arch Arch, head Head) {
	g := newToyGraph(150, 6, 8, 0.8, 0.4, 0.8, 2)
	in := g.input(t, 5, 5)
	cfg := fastConfig(t)
	cfg.Seed = 5
	cfg.Classifier.Arch = string(arch)
	cfg.Classifier.Head = string(head)
	res, err := Run(context.Background(), cfg, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := res.Models.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	m, err := UnmarshalModels(b)
	if err != nil {
		t.Fatal(err)
	}
	want := arch == ArchRoot
	if arch == ArchAuto {
		want = res.Models.F.Config.Root
		if got := res.Variant(VariantFASD).Arch; got != map[bool]string{false: "gcn", true: "root"}[want] {
			t.Fatalf("auto reports arch %q for f with root weights %v", got, want)
		}
	}
	if got := m.F.Config.Root; got != want {
		t.Fatalf("decoded f has root weights %v, want %v", got, want)
	}
	if got, want := m.F.Config.GCNHead, head == HeadGCN; got != want || len(m.F.Params()) != len(res.Models.F.Params()) {
		t.Fatalf("decoded f: GCN head %v (want %v), %d parameters (trained %d)", got, want, len(m.F.Params()), len(res.Models.F.Params()))
	}
	if m.FeatureHash != FeatureHash(in.FeatureNames) || m.D != in.D || m.Config.TOML() != cfg.TOML() {
		t.Fatalf("header mismatch: %q %d", m.FeatureHash, m.D)
	}
	b2, _ := m.MarshalBinary()
	if !bytes.Equal(b, b2) {
		t.Fatal("re-marshalled bundle differs")
	}
	e1, _ := res.Models.NewEngine()
	e2, _ := m.NewEngine()
	for _, sg := range in.Subgraphs[:10] {
		n := sg.N()
		x1, a1 := make([]float32, n*in.D), make([]float32, n*n)
		x2, a2 := make([]float32, n*in.D), make([]float32, n*n)
		if err := e1.Debias(sg.X, sg.A, n, fasd.NewRand(fasd.RootSeed(cfg.Seed, fasd.PurposeDebias, sg.Root())), x1, a1); err != nil {
			t.Fatal(err)
		}
		if err := e2.Debias(sg.X, sg.A, n, fasd.NewRand(fasd.RootSeed(cfg.Seed, fasd.PurposeDebias, sg.Root())), x2, a2); err != nil {
			t.Fatal(err)
		}
		p1, p2 := make([]float32, 2*n), make([]float32, 2*n)
		if err := e1.Probs(x1, a1, n, p1); err != nil {
			t.Fatal(err)
		}
		if err := e2.Probs(x2, a2, n, p2); err != nil {
			t.Fatal(err)
		}
		for i := range x1 {
			if x1[i] != x2[i] {
				t.Fatalf("root %d: debiased X differs at %d", sg.Root(), i)
			}
		}
		for i := range p1 {
			if p1[i] != p2[i] || math.Abs(float64(p1[i]+p1[i^1])-1) > 1e-6 {
				t.Fatalf("root %d: probs %v vs %v", sg.Root(), p1, p2)
			}
		}
	}
	// Corruption is detected.
	b[len(b)/2] ^= 1
	if _, err := UnmarshalModels(b); !errors.Is(err, ErrModels) {
		t.Fatalf("corrupt bundle: %v", err)
	}
}
