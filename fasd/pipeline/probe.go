package pipeline

import (
	"context"
	"fmt"
	"math"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/nn"
)

// StageFreshProbe trains and scores one fresh probe of Options.Probe
// (epochs); it runs once per distinct data set a variant was trained on.
const StageFreshProbe Stage = "fresh_probe"

// ProbeData is ProbeScore.Data for variants trained on the original
// subgraphs (w/o Diffusion, and the plain GCN, which reads the original
// graph: its probe is w/o Diffusion's).
const ProbeData = "original"

// ProbeScore measures how much of the sensitive attribute a variant's
// training data still holds (Options.Probe): a fresh g_sen-shaped network,
// trained from scratch on that data, predicts s of the test nodes.
//
// The probe learns from the subgraphs rooted at train and validation nodes,
// with the s values of test nodes hidden (test nodes may occur there as
// neighbours, with their features but without their s), and is scored once
// per test node at the root of the node's own subgraph. The scored nodes
// therefore never carried a training target: the probe cannot memorise
// them, it must read s from the features and structure. An AUC of 0.5 means
// nothing of s is left to a probe of this kind.
type ProbeScore struct {
	// Data names the subgraphs the probe read: ProbeData for the original
	// ones, otherwise the variant whose debiased subgraphs they are (for
	// example "fasd", "no_fairness" or "fasd@<retune>").
	Data string `json:"data"`
	// AUC is the ROC AUC of the probe's logit for s = 1 over the test roots
	// with known s (null when one group is absent).
	AUC Num `json:"auc"`
	// Acc is the fraction of those roots with (logit > 0) = (s = 1).
	Acc Num `json:"acc"`
	// N is the number of test roots scored; TrainN the number of node
	// occurrences (train- and validation-rooted subgraphs, test nodes
	// excluded) whose s the probe was trained on.
	N      int `json:"n"`
	TrainN int `json:"train_n"`
}

// prober trains the fresh probes of one run. All probes of a run share the
// subgraphs, the split and the seeds, so that the variants' probe scores are
// paired; the original subgraphs (data ProbeData: w/o Diffusion and the GCN)
// are scored once.
type prober struct {
	cfg      *Config
	masked   []*fasd.Subgraph // training copies: test nodes' s hidden
	trainIdx []int            // train- and validation-rooted subgraphs (probeSample)
	testIdx  []int            // test-rooted subgraphs
	d        int
	w        *nn.Workers[float32]
	seed     uint64
	trainN   int
	orig     *ProbeScore // the score of data ProbeData, once computed
}

// newProber returns the run's prober, or nil (every score a no-op) when
// opt.Probe is off. sgs are the run's subgraphs sorted by root.
func newProber(opt *Options, cfg *Config, sgs []*fasd.Subgraph, split []fasd.Split, d int, w *nn.Workers[float32], seed uint64) *prober {
	if !opt.Probe {
		return nil
	}
	p := &prober{cfg: cfg, masked: make([]*fasd.Subgraph, len(sgs)), d: d, w: w, seed: seed}
	for i, g := range sgs {
		p.masked[i] = g
		switch split[g.Root()] {
		case fasd.SplitTest:
			p.testIdx = append(p.testIdx, i)
		case fasd.SplitTrain, fasd.SplitVal:
			p.trainIdx = append(p.trainIdx, i)
		}
	}
	p.trainIdx = probeSample(p.trainIdx)
	for _, i := range p.trainIdx {
		g := sgs[i]
		c := *g
		c.S = append([]int8(nil), g.S...)
		for u := range c.S {
			if c.Split[u] == fasd.SplitTest {
				c.S[u] = -1
			}
			if c.S[u] >= 0 {
				p.trainN++
			}
		}
		p.masked[i] = &c
	}
	return p
}

// score trains a fresh probe on v (a view over the run's subgraphs) and
// scores it on the test roots; data labels the result, and data ProbeData
// must mean the original subgraphs (scored once per run). rep, if not nil,
// gets a StageFreshProbe stage. A nil prober returns nil.
func (p *prober) score(ctx context.Context, rep *reporter, v *view, data string) (*ProbeScore, error) {
	if p == nil {
		return nil, nil
	}
	if data == ProbeData && p.orig != nil {
		c := *p.orig
		return &c, nil
	}
	out, err := p.train(ctx, rep, v, data)
	if err != nil {
		return nil, err
	}
	if data == ProbeData {
		p.orig = out
	}
	c := *out
	return &c, nil
}

func (p *prober) train(ctx context.Context, rep *reporter, v *view, data string) (*ProbeScore, error) {
	out := &ProbeScore{Data: data, AUC: Num(math.NaN()), Acc: Num(math.NaN()), TrainN: p.trainN}
	epochs := probeEpochs(p.cfg)
	if len(p.trainIdx) == 0 || len(p.testIdx) == 0 || p.trainN == 0 || epochs == 0 {
		return out, nil
	}
	if rep == nil {
		rep = &reporter{}
	}
	rep.begin(StageFreshProbe, epochs)
	mv := v.withSubgraphs(p.masked)
	tc := probeSchedule(p.cfg)
	tc.Scope = ScopeAll // the masked copies already hide the test nodes' s
	net, _, err := trainSensNet(ctx, p.cfg, tc, mv, p.trainIdx, p.d, p.w, fasd.DeriveSeed(p.seed, 3), fasd.DeriveSeed(p.seed, 4), rep)
	if err != nil {
		return nil, fmt.Errorf("fresh probe on %s: %w", data, err)
	}
	scores, labels, err := rootLogits(ctx, net, v, p.testIdx, p.d, p.w.N())
	if err != nil {
		return nil, fmt.Errorf("fresh probe on %s: %w", data, err)
	}
	rep.end()
	out.N = len(scores)
	if len(scores) > 0 {
		correct := 0
		for i, z := range scores {
			if (z > 0) == (labels[i] == 1) {
				correct++
			}
		}
		out.Acc = Num(float64(correct) / float64(len(scores)))
	}
	auc, err := fasd.AUC(scores, labels)
	if err != nil {
		return nil, fmt.Errorf("fresh probe on %s: %w", data, err)
	}
	out.AUC = Num(auc)
	return out, nil
}

// rootLogits runs net on the subgraphs idx of v and returns its logit at
// each root with known s, and those s values.
func rootLogits(ctx context.Context, net *nn.GCNNet[float32], v *view, idx []int, d, workers int) ([]float64, []int8, error) {
	logits := make([]float32, len(idx))
	engines := make([]*Engine, workers)
	bufs, xbufs, abufs := make([][]float32, workers), make([][]float32, workers), make([][]float32, workers)
	for i := range engines {
		engines[i] = &Engine{m: &Models{D: d, GSen: net}, tape: autodiff.NewTape[float32]()}
	}
	err := parallelFor(ctx, workers, len(idx), func(w, k int) error {
		i := idx[k]
		n := v.sgs[i].N()
		bufs[w] = resizeF(bufs[w], n)
		x, err := v.x(i, xbufs[w])
		if err != nil {
			return err
		}
		if !v.holds(i) {
			xbufs[w] = x
		}
		a, err := v.a(i, abufs[w])
		if err != nil {
			return err
		}
		abufs[w] = a
		if err := engines[w].SensLogits(x, a, n, bufs[w]); err != nil {
			return err
		}
		logits[k] = bufs[w][0]
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var scores []float64
	var labels []int8
	for k, i := range idx {
		if s := v.sgs[i].S[0]; s >= 0 {
			scores = append(scores, float64(logits[k]))
			labels = append(labels, s)
		}
	}
	return scores, labels, nil
}

// probeMaxRoots is the most subgraphs a probe trains on. A run with more
// candidates (train- and validation-rooted subgraphs for a fresh probe,
// train-rooted ones for a diagnostic probe) trains the probe on an evenly
// spaced sample of this size, so that a probe costs the same on any larger
// graph: 16,384 subgraphs hold some 300,000 node occurrences with their s
// on graphs like the generated ones (20 nodes per subgraph), ample for a
// network of g_sen's size to read whatever s the data holds. Runs with
// fewer train on all of them, as before the cap.
const probeMaxRoots = 1 << 14

// probeSample returns the subgraphs of idx a probe trains on: idx itself
// when it has at most probeMaxRoots, else an evenly spaced sample of that
// many (the first one included).
func probeSample(idx []int) []int {
	if len(idx) <= probeMaxRoots {
		return idx
	}
	out := make([]int, 0, probeMaxRoots)
	for q, i := range idx {
		if evenlyKept(q, len(idx), probeMaxRoots) {
			out = append(out, i)
		}
	}
	return out
}

// probeEpochs is the training length of every probe: g_sen's.
func probeEpochs(cfg *Config) int { return cfg.Sens.Epochs }

// probeSchedule is the probes' training schedule: g_sen's with lr at least
// 1e-3, since a probe sees fewer subgraphs than g_sen.
func probeSchedule(cfg *Config) TrainConfig {
	tc := cfg.Sens
	tc.LR = max(tc.LR, 1e-3)
	return tc
}

// probe trains a fresh g_sen-shaped network on the train-rooted subgraphs
// of v (at most probeMaxRoots of them, probeSample) and scores it on every node occurrence of the validation-rooted ones
// (the §14 diagnostic, next to the frozen g_sen's score on the same
// occurrences: debiasing is adversarial to g_sen specifically).
func probe(ctx context.Context, cfg *Config, v *view, trainIdx, valIdx []int, d int, w *nn.Workers[float32], seed uint64, rep *reporter) (SensScore, error) {
	if len(trainIdx) == 0 || len(valIdx) == 0 {
		return SensScore{AUC: Num(math.NaN()), Acc: Num(math.NaN()), Loss: Num(math.NaN())}, nil
	}
	tc := probeSchedule(cfg)
	// Epoch reports go to the probe stage; progress is not reported (two
	// probes share the stage).
	sub := &reporter{cb: Callbacks{Epoch: rep.cb.Epoch}, stage: rep.stage}
	net, _, err := trainSensNet(ctx, cfg, tc, v, probeSample(trainIdx), d, w, fasd.DeriveSeed(seed, 1), fasd.DeriveSeed(seed, 2), sub)
	if err != nil {
		return SensScore{}, fmt.Errorf("probe: %w", err)
	}
	return sensScore(ctx, net, v, valIdx, d, w.N())
}
