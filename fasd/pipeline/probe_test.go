package pipeline

import (
	"context"
	"math"
	"testing"

	"github.com/fasd-db/fasd/fasd"
)

// Ensure that the probe's training copies hide exactly the test nodes' s,
// that it trains on train- and validation-rooted subgraphs only and scores
// every test-rooted one, and that the run's subgraphs are left untouched.
func TestProber_Disjoint(t *testing.T) {
	g := newToyGraph(160, 6, 6, 0.8, 0.4, 0.8, 4)
	in := g.input(t, 1, 5)
	sgs, _, _, test, err := in.validate()
	if err != nil {
		t.Fatal(err)
	}
	cfg := fastConfig(t)
	before := 0
	for _, sg := range sgs {
		for _, s := range sg.S {
			if s >= 0 {
				before++
			}
		}
	}
	p := newProber(&Options{Probe: true}, &cfg, sgs, in.Split, in.D, nil, 1)
	if len(p.testIdx) != len(test) || len(p.trainIdx)+len(p.testIdx) != len(sgs) {
		t.Fatalf("%d train, %d test subgraphs of %d (%d test nodes)", len(p.trainIdx), len(p.testIdx), len(sgs), len(test))
	}
	hidden, kept := 0, 0
	for _, i := range p.trainIdx {
		if in.Split[sgs[i].Root()] == fasd.SplitTest {
			t.Fatalf("training subgraph %d is rooted at a test node", i)
		}
		m := p.masked[i]
		for u := range m.S {
			switch {
			case sgs[i].Split[u] == fasd.SplitTest && m.S[u] >= 0:
				t.Fatalf("subgraph %d: test node %d keeps s", i, m.Nodes[u])
			case sgs[i].Split[u] == fasd.SplitTest && sgs[i].S[u] >= 0:
				hidden++
			case m.S[u] != sgs[i].S[u]:
				t.Fatalf("subgraph %d: non-test node %d changed s", i, m.Nodes[u])
			case m.S[u] >= 0:
				kept++
			}
		}
	}
	if hidden == 0 || kept != p.trainN {
		t.Errorf("hidden %d, kept %d, trainN %d", hidden, kept, p.trainN)
	}
	after := 0
	for _, sg := range sgs {
		for _, s := range sg.S {
			if s >= 0 {
				after++
			}
		}
	}
	if after != before {
		t.Errorf("run subgraphs changed: %d known s before, %d after", before, after)
	}
	if newProber(&Options{}, &cfg, sgs, in.Split, in.D, nil, 1) != nil {
		t.Error("prober without Options.Probe")
	}
}

// Ensure that the fresh probe reads s where features leak it and stays
// near chance where s is noise (no memorisation of test nodes, which occur
// in the training subgraphs), that w/o Diffusion and the GCN share one
// probe of the original data, that FASD's probe reads its debiased data,
// and that the scores are deterministic.
func TestRun_Probe(t *testing.T) {
	cfg := fastConfig(t)
	cfg.Seed = 2
	cfg.Sens.Epochs = 40
	for _, c := range []struct {
		name           string
		homophily      float64
		leak           float64
		minAUC, maxAUC float64
	}{
		{"leaky", 0.8, 2.0, 0.8, 1},
		{"noise", 0.5, 0, 0.3, 0.7},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newToyGraph(240, 8, 8, c.homophily, 0, c.leak, 5)
			in := g.input(t, 2, 5)
			var probes int
			opt := &Options{Variants: Variants(), Probe: true, Callbacks: Callbacks{StageStart: func(s Stage, _ int) {
				if s == StageFreshProbe {
					probes++
				}
			}}}
			res, err := Run(context.Background(), cfg, in, opt)
			if err != nil {
				t.Fatal(err)
			}
			if probes != 3 {
				t.Errorf("%d fresh probes trained, want 3 (fasd, original, no_fairness)", probes)
			}
			nd, gcn, fa := res.Variant(VariantNoDiffusion).Probe, res.Variant(VariantGCN).Probe, res.Variant(VariantFASD).Probe
			if nd == nil || gcn == nil || fa == nil || res.Variant(VariantNoFairness).Probe == nil {
				t.Fatal("a variant has no probe score")
			}
			if *nd != *gcn || nd.Data != ProbeData || fa.Data != string(VariantFASD) {
				t.Errorf("no_diffusion %+v, gcn %+v, fasd %+v", nd, gcn, fa)
			}
			if auc := float64(nd.AUC); !(auc >= c.minAUC && auc <= c.maxAUC) || nd.N == 0 || nd.TrainN == 0 {
				t.Errorf("original-data probe %+v, want AUC in [%v, %v]", nd, c.minAUC, c.maxAUC)
			}
			t.Logf("probe AUC: original %.3f, fasd %.3f, no_fairness %.3f (n %d, train %d)", float64(nd.AUC), float64(fa.AUC), float64(res.Variant(VariantNoFairness).Probe.AUC), nd.N, nd.TrainN)
			again, err := Run(context.Background(), cfg, in, &Options{Variants: []Variant{VariantGCN}, Probe: true})
			if err != nil {
				t.Fatal(err)
			}
			if p := again.Variants[0].Probe; p == nil || *p != *gcn {
				t.Errorf("gcn alone: probe %+v, want %+v", p, gcn)
			}
			if math.IsNaN(float64(fa.AUC)) {
				t.Errorf("fasd probe %+v", fa)
			}
		})
	}
}

// Ensure that the time estimate covers every fresh probe (one stage per
// distinct data set) and extrapolates each from its own epochs.
func TestEstimateRun_Probes(t *testing.T) {
	g := newToyGraph(160, 6, 6, 0.8, 0.4, 0.8, 6)
	in := g.input(t, 1, 5)
	cfg := fastConfig(t)
	cfg.Sens.Epochs = 200
	est, err := EstimateRun(context.Background(), cfg, in, &Options{Variants: Variants(), Probe: true})
	if err != nil {
		t.Fatal(err)
	}
	var probes []float64
	for _, s := range est.Stages {
		if s.Stage == StageFreshProbe {
			probes = append(probes, s.Seconds)
		}
	}
	if len(probes) != 3 {
		t.Fatalf("%d fresh-probe stages in the estimate, want 3: %+v", len(probes), est.Stages)
	}
	for i, s := range probes {
		if !(s > 0) {
			t.Errorf("probe %d: estimate %v s", i, s)
		}
	}
}

func TestProbeSample(t *testing.T) {
	for _, n := range []int{0, 1, probeMaxRoots - 1, probeMaxRoots, probeMaxRoots + 1, 3*probeMaxRoots + 7, 40 * probeMaxRoots} {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = 3*i + 1
		}
		got := probeSample(idx)
		if n <= probeMaxRoots {
			if len(got) != n || (n > 0 && &got[0] != &idx[0]) {
				t.Errorf("%d candidates: got %d, want all of them as they are", n, len(got))
			}
			continue
		}
		if len(got) != probeMaxRoots || got[0] != idx[0] {
			t.Fatalf("%d candidates: got %d starting at %d, want %d starting at %d", n, len(got), got[0], probeMaxRoots, idx[0])
		}
		for k := 1; k < len(got); k++ {
			if gap := (got[k] - got[k-1]) / 3; gap < n/probeMaxRoots || gap > (n+probeMaxRoots-1)/probeMaxRoots {
				t.Fatalf("%d candidates: samples %d and %d are %d apart", n, k-1, k, gap)
			}
		}
	}
}
