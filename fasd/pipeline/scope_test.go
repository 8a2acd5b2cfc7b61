package pipeline

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd"
)

// scopeKind says where a scopeGraph's label signal lies.
type scopeKind int

const (
	// labelInFeatures: the nodes' own features carry the label; edges are
	// drawn without regard to labels.
	labelInFeatures scopeKind = iota
	// labelInNeighbourhood: edges mostly within a class, features nearly
	// pure noise, the group independent of the label.
	labelInNeighbourhood
	// labelIsGroup: edges mostly within a class, features nearly pure
	// noise, and the group follows the label (s = y for 90 % of the
	// nodes): the neighbourhood carries the label and the group with it.
	labelIsGroup
)

// scopeGraph is a 600-node graph of the given kind.
func scopeGraph(kind scopeKind, seed uint64) *Input {
	const n, d, deg = 600, 8, 10
	rng := rand.New(rand.NewPCG(seed, 11))
	in := &Input{NumNodes: n, D: d, Labels: make([]int8, n), Sens: make([]int8, n), Split: make([]fasd.Split, n)}
	x := make([]float32, n*d)
	for u := 0; u < n; u++ {
		in.Labels[u] = int8(rng.IntN(2))
		in.Sens[u] = int8(rng.IntN(2))
		if kind == labelIsGroup {
			in.Sens[u] = in.Labels[u]
			if rng.Float64() < 0.1 {
				in.Sens[u] = 1 - in.Labels[u]
			}
		}
		signal := 1.0
		if kind != labelInFeatures {
			signal = 0.15
		}
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
			if kind != labelInFeatures {
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
		name string
		kind scopeKind
		wide bool
	}{
		{"label in the neighbourhood", labelInNeighbourhood, true},
		{"label in the features", labelInFeatures, false},
		// The GCN beats the MLP by far, but by reading the group.
		{"label is the group", labelIsGroup, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := scopeConfig(t)
			orig := cfg.Sample
			in := scopeGraph(tc.kind, 1)
			ch, err := ChooseScope(context.Background(), &cfg, in)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", ch)
			if ch.Wide != tc.wide {
				t.Fatalf("wide = %v, want %v (%s)", ch.Wide, tc.wide, ch)
			}
			// Labels that fail the four-fifths rule refuse the wide scope
			// before any network is trained.
			wantNets := scopeNets
			if tc.kind == labelIsGroup {
				wantNets = 0
				if !math.IsNaN(float64(ch.GCNAUC)) || !math.IsNaN(float64(ch.MLPAUC)) {
					t.Errorf("no network trained, but AUCs %v and %v", ch.GCNAUC, ch.MLPAUC)
				}
			}
			if ch.Nets != wantNets {
				t.Errorf("nets = %d, want %d", ch.Nets, wantNets)
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
	in := scopeGraph(labelInNeighbourhood, 2)
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
	good := scopeGraph(labelInFeatures, 3)
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

func TestLabelRateRatio(t *testing.T) {
	// group 0: labels 1 1 1 0 (rates 3/4 and 1/4); group 1: 1 0 (1/2, 1/2).
	labels := []int8{1, 1, 1, 0, 1, 0, 1, 0}
	sens := []int8{0, 0, 0, 0, 1, 1, -1, 1}
	nan := math.NaN()
	for _, tc := range []struct {
		name  string
		nodes []uint32
		want  float64
	}{
		// class 1: (1/2)/(3/4) = 2/3; class 0: (1/4)/(1/2) = 1/2.
		{"both classes, unknown group skipped", []uint32{0, 1, 2, 3, 4, 5, 6}, 0.5},
		{"equal rates", []uint32{0, 3, 4, 5}, 1},
		{"a class absent from one group", []uint32{0, 1, 4, 5}, 0},
		{"one group only", []uint32{0, 1, 3}, nan},
		{"one class only", []uint32{0, 4}, nan},
		{"no node", nil, nan},
		// Group 1 is {5, 7}: both 0, group 0 both 1.
		{"groups split by the label", []uint32{0, 1, 5, 7}, 0},
	} {
		got := labelRateRatio(tc.nodes, labels, sens)
		if math.IsNaN(tc.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-tc.want) > 1e-12) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
