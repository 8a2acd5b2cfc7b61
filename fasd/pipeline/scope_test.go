package pipeline

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd"
)

// scopeGraph is a graph whose label signal lies either in the nodes' own
// features (edges drawn without regard to labels) or in the neighbourhood
// (features nearly pure noise, edges mostly within a class).
func scopeGraph(neighbourhood bool, seed uint64) *Input {
	const n, d, deg = 600, 8, 10
	rng := rand.New(rand.NewPCG(seed, 11))
	in := &Input{NumNodes: n, D: d, Labels: make([]int8, n), Sens: make([]int8, n), Split: make([]fasd.Split, n)}
	x := make([]float32, n*d)
	signal := 1.0
	if neighbourhood {
		signal = 0.15
	}
	for u := 0; u < n; u++ {
		in.Labels[u] = int8(rng.IntN(2))
		in.Sens[u] = int8(rng.IntN(2))
		ys := 2*float64(in.Labels[u]) - 1
		for j := 0; j < d; j++ {
			x[u*d+j] = float32(signal*ys*float64(j%2*2-1) + rng.NormFloat64())
		}
		switch r := rng.Float64(); {
		case r < 0.3:
			in.Split[u] = fasd.SplitTrain
		case r < 0.6:
			in.Split[u] = fasd.SplitVal
		default:
			in.Split[u] = fasd.SplitTest
		}
	}
	var edges [][2]uint32
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			p := float64(deg) / n
			if neighbourhood {
				p = 1.9 * float64(deg) / n
				if in.Labels[u] != in.Labels[v] {
					p = 0.1 * float64(deg) / n
				}
			}
			if rng.Float64() < p {
				edges = append(edges, [2]uint32{uint32(u), uint32(v)})
			}
		}
	}
	in.Graph = &FullGraph{Edges: edges, X: x}
	return in
}

func scopeConfig(t *testing.T) Config {
	t.Helper()
	c, err := Preset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	c.Baseline.Epochs, c.Baseline.Patience = 100, 20
	c.Sample.Scope = string(SampleAuto)
	return c
}

func TestChooseScope(t *testing.T) {
	for _, tc := range []struct {
		name          string
		neighbourhood bool
		wide          bool
	}{
		{"label in the neighbourhood", true, true},
		{"label in the features", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := scopeConfig(t)
			orig := cfg.Sample
			in := scopeGraph(tc.neighbourhood, 1)
			ch, err := ChooseScope(context.Background(), &cfg, in)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", ch)
			if ch.Wide != tc.wide {
				t.Fatalf("wide = %v, want %v (%s)", ch.Wide, tc.wide, ch)
			}
			if ch.Nets != scopeNets {
				t.Errorf("nets = %d, want %d", ch.Nets, scopeNets)
			}
			want := orig
			if tc.wide {
				want = SampleConfig{Mode: wideMode, Depth: wideDepth, Fanout: wideFanout, MaxNodes: wideMaxNodes, Edges: wideEdges}
			}
			want.Scope = string(SampleFixed)
			if cfg.Sample != want {
				t.Errorf("sample config %+v, want %+v", cfg.Sample, want)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("resolved config: %v", err)
			}
			// Resolved, the config asks for no choice: a rerun keeps it.
			again, err := ChooseScope(context.Background(), &cfg, in)
			if again != nil || err != nil {
				t.Errorf("second ChooseScope = %v, %v; want nil, nil", again, err)
			}
		})
	}
}

// The choice reads no test label, and the same seed gives the same choice
// to the last bit.
func TestChooseScope_TestLabelsAndSeed(t *testing.T) {
	in := scopeGraph(true, 2)
	choose := func(in *Input, seed uint64) ScopeChoice {
		cfg := scopeConfig(t)
		cfg.Seed = seed
		ch, err := ChooseScope(context.Background(), &cfg, in)
		if err != nil {
			t.Fatal(err)
		}
		return *ch
	}
	a := choose(in, 5)
	flipped := *in
	flipped.Labels = append([]int8(nil), in.Labels...)
	for u, s := range in.Split {
		if s == fasd.SplitTest {
			flipped.Labels[u] = 1 - flipped.Labels[u]
		}
	}
	a.Seconds = 0
	same := func(b ScopeChoice) bool { b.Seconds = 0; return b == a }
	if b := choose(&flipped, 5); !same(b) {
		t.Errorf("test labels flipped: %+v, want %+v", b, a)
	}
	if b := choose(in, 5); !same(b) {
		t.Errorf("same seed: %+v, want %+v", b, a)
	}
	if b := choose(in, 6); b.GCNAUC == a.GCNAUC && b.MLPAUC == a.MLPAUC {
		t.Errorf("seeds 5 and 6 trained the same networks (%+v)", a)
	}
}

func TestChooseScope_Fixed(t *testing.T) {
	cfg := scopeConfig(t)
	cfg.Sample.Scope = string(SampleFixed)
	before := cfg
	ch, err := ChooseScope(context.Background(), &cfg, &Input{})
	if ch != nil || err != nil || cfg != before {
		t.Errorf("fixed scope: %v, %v, config changed %v", ch, err, cfg != before)
	}
}

func TestChooseScope_Errors(t *testing.T) {
	good := scopeGraph(false, 3)
	noGraph := *good
	noGraph.Graph = nil
	shortX := *good
	shortX.Graph = &FullGraph{Edges: good.Graph.Edges, X: good.Graph.X[:10]}
	noVal := *good
	noVal.Split = make([]fasd.Split, good.NumNodes)
	for u := range noVal.Split {
		noVal.Split[u] = fasd.SplitTrain
	}
	for name, in := range map[string]*Input{"no graph": &noGraph, "short features": &shortX, "no validation node": &noVal} {
		cfg := scopeConfig(t)
		if _, err := ChooseScope(context.Background(), &cfg, in); !errors.Is(err, ErrInput) {
			t.Errorf("%s: err = %v, want ErrInput", name, err)
		}
		if cfg.Sample.Scope != string(SampleAuto) {
			t.Errorf("%s: the config changed on error", name)
		}
	}
}

func TestScopeNetCount(t *testing.T) {
	for _, tc := range []struct{ nval, want int }{
		{1, scopeNets}, {scopeSmallVal, scopeNets}, {2 * scopeSmallVal, scopeNets / 2}, {1 << 30, 1},
	} {
		if got := scopeNetCount(tc.nval); got != tc.want {
			t.Errorf("scopeNetCount(%d) = %d, want %d", tc.nval, got, tc.want)
		}
	}
}
