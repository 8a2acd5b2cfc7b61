package pipeline

import (
	"context"
	"math"
	"testing"

	"github.com/fasd-db/fasd/fasd"
)

// Ensure that Options.FairProbs hands over, for every subgraph in order,
// its clean features and exactly the probabilities of Engine.Debias (with
// the root's debiasing generator) then Engine.Probs on that subgraph
// alone, with the subgraphs' features in memory, in Input.Features and
// spilled to a scratch, with one and two workers, for the reverse SDE
// (predictor–corrector, with noise) and the probability-flow ODE with
// linear or g_sen guidance; and that the fingerprint the hook sees is
// that of the saved and reloaded models.
func TestFairProbs_EqualDebiasThenProbs(t *testing.T) {
	g := newToyGraph(90, 5, 6, 0.8, 0.4, 0.8, 11)
	full := g.input(t, 3, 5)
	for _, c := range []struct {
		name    string
		workers int
		in      *Input
		scratch bool
		tune    func(c *Config)
	}{
		{"features in subgraphs, 1 worker", 1, full, false, nil},
		{"features in Input.Features, 2 workers", 2, withoutX(full, g.x), false, nil},
		{"spilled to a scratch, 2 workers", 2, withoutX(full, g.x), true, nil},
		{"ODE, linear guides, 2 workers", 2, withoutX(full, g.x), false, func(c *Config) {
			c.Debias.Reverse = fasd.ReverseODE.String()
			c.Debias.GuideWeight, c.Debias.GuideSteps, c.Debias.GuideNet, c.Debias.GuideRounds = 2, 2, GuideLinear, 3
		}},
		{"ODE, g_sen guidance, 2 workers", 2, withoutX(full, g.x), false, func(c *Config) {
			c.Debias.Reverse = fasd.ReverseODE.String()
			c.Debias.GuideWeight, c.Debias.GuideSteps, c.Debias.GuideNet = 1, 2, GuideGSen
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := fastConfig(t)
			cfg.Seed = 3
			cfg.Workers = c.workers
			cfg.Sens.Epochs, cfg.Score.Epochs, cfg.Classifier.Epochs = 3, 1, 3
			if c.tune != nil {
				c.tune(&cfg)
			}
			type got struct {
				root     uint32
				x, probs []float32
				fp       string
			}
			var gots []got
			opt := &Options{Variants: []Variant{VariantFASD, VariantNoDiffusion}, FairProbs: func(_ context.Context, m *Models, sg *fasd.Subgraph, x, probs []float32) error {
				fp, err := m.FairFingerprint()
				if err != nil {
					return err
				}
				gots = append(gots, got{sg.Root(), append([]float32(nil), x...), append([]float32(nil), probs...), fp})
				return nil
			}}
			if c.scratch {
				open := 0
				opt.Scratch = func() (Scratch, error) { return &memScratch{open: &open}, nil }
			}
			res, err := Run(context.Background(), cfg, c.in, opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(gots) != len(full.Subgraphs) {
				t.Fatalf("%d calls for %d subgraphs", len(gots), len(full.Subgraphs))
			}
			b, err := res.Models.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			m, err := UnmarshalModels(b)
			if err != nil {
				t.Fatal(err)
			}
			want, err := m.FairFingerprint()
			if err != nil {
				t.Fatal(err)
			}
			e, err := m.NewEngine()
			if err != nil {
				t.Fatal(err)
			}
			for i, sg := range full.Subgraphs {
				gt := gots[i]
				if gt.root != sg.Root() || gt.fp != want {
					t.Fatalf("call %d: root %d fingerprint %.12s, want root %d fingerprint %.12s", i, gt.root, gt.fp, sg.Root(), want)
				}
				n := sg.N()
				for k := range sg.X {
					if math.Float32bits(sg.X[k]) != math.Float32bits(gt.x[k]) {
						t.Fatalf("root %d: clean feature %d differs", sg.Root(), k)
					}
				}
				x, a := make([]float32, n*full.D), make([]float32, n*n)
				if err := e.Debias(sg.X, sg.A, n, fasd.NewRand(fasd.RootSeed(cfg.Seed, fasd.PurposeDebias, sg.Root())), x, a); err != nil {
					t.Fatal(err)
				}
				p := make([]float32, 2*n)
				if err := e.Probs(x, a, n, p); err != nil {
					t.Fatal(err)
				}
				for k := range p {
					if math.Float32bits(p[k]) != math.Float32bits(gt.probs[k]) {
						t.Fatalf("root %d: probability %d is %v, Debias then Probs gives %v", sg.Root(), k, gt.probs[k], p[k])
					}
				}
			}
		})
	}
}
