package pipeline

import (
	"context"
	"math"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/nn"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// trainSensNet trains a fresh g_sen-shaped network on the subgraphs idx of
// v for tc.Epochs epochs (§3: BCE summed over the subgraph's nodes with
// known s, mean over the batch; Adam without clipping).
func trainSensNet(ctx context.Context, cfg *Config, tc TrainConfig, v *view, idx []int, d int, w *nn.Workers[float32],
	initSeed, trainSeed uint64, rep *reporter) (*nn.GCNNet[float32], float64, error) {
	arch := gsenArch(cfg, d)
	arch.Dropout = tc.Dropout
	net, err := nn.NewGCNNet[float32](arch, fasd.NewRand(initSeed))
	if err != nil {
		return nil, 0, err
	}
	t := newNetTrainer(net, kindSens, v, d, w.N())
	t.trainScope = tc.Scope == ScopeTrain
	opt := nn.NewAdam(net.Params(), nn.AdamConfig{LR: tc.LR, WeightDecay: tc.WeightDecay})
	var after func(int) (float64, bool, error)
	if tc.Patience > 0 && len(idx) >= 20 {
		// Early stopping: every 10th subgraph (at most 256) is held out,
		// its BCE checked after every epoch, and the best weights kept.
		var fit, held []int
		for k, i := range idx {
			if k%10 == 9 && len(held) < 256 {
				held = append(held, i)
			} else {
				fit = append(fit, i)
			}
		}
		idx = fit
		best, _ := nn.NewGCNNet[float32](arch, fasd.NewRand(initSeed))
		bestLoss := math.Inf(1)
		pat := patience{limit: tc.Patience}
		t.patience = tc.Patience
		after = func(int) (float64, bool, error) {
			var sc SensScore
			err := rep.timed(len(held), func() (err error) {
				sc, err = sensScore(ctx, net, v, held, d, w.N())
				return err
			})
			if err != nil {
				return 0, false, err
			}
			l := float64(sc.Loss)
			improved := l < bestLoss*(1-1e-3)
			if l < bestLoss {
				bestLoss = l
				nn.CopyParams(best.Params(), net.Params())
			}
			return math.NaN(), pat.observe(improved), nil
		}
		defer func() { nn.CopyParams(net.Params(), best.Params()) }()
	}
	loss, err := trainLoop(ctx, w, t, opt, idx, tc.Epochs, tc.Batch, fasd.NewRand(trainSeed), rep, after)
	return net, loss, err
}

// sensGrads computes ∇_X L_sen and ∇_A L_sen of every subgraph of v under
// the frozen g_sen in eval mode (§3), one subgraph at a time (no padding),
// and returns the mean L_sen per subgraph. It caches ∇_X only when keepX and
// ∇_A only when keepA: the cache feeds nothing but the forward SDE's
// fairness term, which is zero for λ = 0, and it is as large as the
// subgraphs themselves.
func sensGrads(ctx context.Context, net *nn.GCNNet[float32], v *view, d, workers int, trainScope, keepX, keepA bool, rep *reporter) (*gradCache, float64, error) {
	m := len(v.sgs)
	c := &gradCache{}
	if keepX {
		c.gx = make([][]float32, m)
	}
	if keepA {
		c.ga = make([][]float32, m)
	}
	losses := make([]float64, m)
	type scratch struct {
		tape         *autodiff.Tape[float32]
		mask, s, wgt []float32
		x, a         []float32
		gx, ga       tensor.Dense[float32]
	}
	scr := make([]scratch, workers)
	for i := range scr {
		scr[i].tape = autodiff.NewTape[float32]()
	}
	err := parallelFor(ctx, workers, m, func(w, i int) error {
		sc := &scr[w]
		g := v.sgs[i]
		n := g.N()
		sc.mask = ones(sc.mask, n)
		sc.s, sc.wgt = resizeF(sc.s, n), resizeF(sc.wgt, n)
		for u := 0; u < n; u++ {
			sc.s[u], sc.wgt[u] = 0, 0
			if g.S[u] >= 0 && (!trainScope || g.Split[u] == fasd.SplitTrain) {
				sc.s[u], sc.wgt[u] = float32(g.S[u]), 1
			}
		}
		xs, err := v.x(i, sc.x)
		if err != nil {
			return err
		}
		if !v.holds(i) {
			sc.x = xs
		}
		as, err := v.a(i, sc.a)
		if err != nil {
			return err
		}
		sc.a = as
		x, a := tensor.FromSlice(xs, 1, n, d), tensor.FromSlice(as, 1, n, n)
		l := net.SensitiveGrads(sc.tape, x, a, sc.mask, sc.s, sc.wgt, &sc.gx, &sc.ga)
		if keepX {
			c.gx[i] = append([]float32(nil), sc.gx.Data...)
		}
		if keepA {
			c.ga[i] = append([]float32(nil), sc.ga.Data...)
		}
		losses[i] = float64(l)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	var sum float64
	for _, l := range losses {
		sum += l
	}
	rep.progress(m)
	return c, sum / float64(m), nil
}

// SensScore is g_sen-style predictability of s over node occurrences.
type SensScore struct {
	Acc  Num `json:"acc"`
	AUC  Num `json:"auc"`
	Loss Num `json:"loss"` // mean L_sen per subgraph (sum over its nodes)
	N    int `json:"n"`    // node occurrences with known s
}

// sensScore scores a g_sen-shaped net on the subgraphs idx of v: accuracy
// (logit > 0 ⇔ s = 1) and ROC AUC over every node occurrence with known s.
func sensScore(ctx context.Context, net *nn.GCNNet[float32], v *view, idx []int, d, workers int) (SensScore, error) {
	logits := make([][]float32, len(idx))
	engines := make([]*Engine, workers)
	bufs, abufs := make([][]float32, workers), make([][]float32, workers)
	for i := range engines {
		engines[i] = &Engine{m: &Models{D: d, GSen: net}, tape: autodiff.NewTape[float32]()}
	}
	err := parallelFor(ctx, workers, len(idx), func(w, k int) error {
		i := idx[k]
		n := v.sgs[i].N()
		logits[k] = make([]float32, n)
		x, err := v.x(i, bufs[w])
		if err != nil {
			return err
		}
		if !v.holds(i) {
			bufs[w] = x
		}
		a, err := v.a(i, abufs[w])
		if err != nil {
			return err
		}
		abufs[w] = a
		return engines[w].SensLogits(x, a, n, logits[k])
	})
	if err != nil {
		return SensScore{}, err
	}
	var scores []float64
	var labels []int8
	correct := 0
	var loss float64
	for k, i := range idx {
		g := v.sgs[i]
		for u := 0; u < g.N(); u++ {
			if g.S[u] < 0 {
				continue
			}
			z := float64(logits[k][u])
			scores = append(scores, z)
			labels = append(labels, g.S[u])
			if (z > 0) == (g.S[u] == 1) {
				correct++
			}
			// BCE on logits: log(1+e^z) − s·z, stably.
			loss += math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))) - float64(g.S[u])*z
		}
	}
	auc, err := fasd.AUC(scores, labels)
	if err != nil {
		return SensScore{}, err
	}
	s := SensScore{AUC: Num(auc), N: len(scores), Acc: Num(math.NaN()), Loss: Num(math.NaN())}
	if len(scores) > 0 {
		s.Acc = Num(float64(correct) / float64(len(scores)))
	}
	if len(idx) > 0 {
		s.Loss = Num(loss / float64(len(idx)))
	}
	return s, nil
}
