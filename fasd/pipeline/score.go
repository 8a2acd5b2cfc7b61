package pipeline

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/nn"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// TBins is the number of equal-width t bins of [0, 1] used by the
// per-time diagnostics.
const TBins = 5

// gradCache holds the cached fairness gradients per subgraph (nil slices:
// no fairness term).
type gradCache struct {
	gx, ga [][]float32
}

func perturbOptions(cfg *Config, fair bool) fasd.PerturbOptions {
	o := fasd.PerturbOptions{
		SDEX: fasd.VPSDE{BetaMin: cfg.Diffusion.BetaMinX, BetaMax: cfg.Diffusion.BetaMaxX, NumScales: 1000},
		SDEA: fasd.VPSDE{BetaMin: cfg.Diffusion.BetaMinA, BetaMax: cfg.Diffusion.BetaMaxA, NumScales: 1000},
	}
	if fair {
		o.LambdaX, o.LambdaA = cfg.Diffusion.LambdaX, cfg.Diffusion.LambdaA
	}
	if cfg.Diffusion.Gamma == "linear" {
		o.Gamma = fasd.GammaLinear
	}
	return o
}

func (c *gradCache) input(v *view, i, d int) fasd.PerturbInput {
	in := fasd.PerturbInput{N: v.sgs[i].N(), D: d, X0: v.xs[i], A0: v.as[i]}
	if c != nil {
		in.GX, in.GA = c.gx[i], c.ga[i]
	}
	return in
}

func tBin(t float64) int { return min(TBins-1, max(0, int(t*TBins))) }

// scoreTrainer trains s_θ and s_φ jointly (§5): same batches and draws, two
// losses, two optimisers, per-model clipping, lr decay and EMA.
type scoreTrainer struct {
	cfg    *Config
	sx     *nn.ScoreX[float32]
	sa     *nn.ScoreA[float32]
	v      *view
	grads  *gradCache
	popt   fasd.PerturbOptions
	d      int
	seed   uint64
	epoch  int
	batch  []int
	bstart int // position of batch[0] in the epoch order
	shards []scoreShard
	fn     nn.ShardFunc[float32]
}

type scoreShard struct {
	pad    padBuf
	tx, ta []float32
	pert   fasd.Perturbation
	lx, la float64
	ratioX [TBins]float64
	ratioA [TBins]float64
	ratioN [TBins]int
	err    error
}

func (s *scoreTrainer) shard(sh *nn.Shard[float32]) *autodiff.Var[float32] {
	sc := &s.shards[sh.Index]
	idx := s.batch[sh.Lo:sh.Hi]
	d := s.d
	n := 1
	for _, i := range idx {
		n = max(n, s.v.sgs[i].N())
	}
	b := len(idx)
	sc.pad.n = n
	sc.pad.X.Resize(tensor.S(b, n, d))
	sc.pad.A.Resize(tensor.S(b, n, n))
	clear(sc.pad.X.Data)
	clear(sc.pad.A.Data)
	sc.pad.mask = resizeF(sc.pad.mask, b*n)
	clear(sc.pad.mask)
	sc.tx = resizeF(sc.tx, b*n*d)
	sc.ta = resizeF(sc.ta, b*n*n)
	clear(sc.tx)
	clear(sc.ta)
	for k, i := range idx {
		rng := fasd.NewRand(fasd.DeriveSeed(s.seed, purposeScoreDraw, uint64(s.epoch), uint64(s.bstart+sh.Lo+k)))
		t := fasd.SampleTime(rng, s.cfg.Diffusion.EpsT)
		in := s.grads.input(s.v, i, d)
		if err := fasd.Perturb(&s.popt, &in, t, rng, &sc.pert); err != nil {
			sc.err = err
			return nil
		}
		gn := in.N
		p := &sc.pert
		copy(sc.pad.X.Data[k*n*d:], p.Xt)
		copy(sc.tx[k*n*d:], p.TX)
		for r := 0; r < gn; r++ {
			copy(sc.pad.A.Data[(k*n+r)*n:(k*n+r)*n+gn], p.At[r*gn:(r+1)*gn])
			copy(sc.ta[(k*n+r)*n:(k*n+r)*n+gn], p.TA[r*gn:(r+1)*gn])
			sc.pad.mask[k*n+r] = 1
		}
		if p.GammaX > 0 || p.GammaA > 0 {
			bin := tBin(t)
			sc.ratioX[bin] += p.RatioX
			sc.ratioA[bin] += p.RatioA
			sc.ratioN[bin]++
		}
	}
	tp := sh.Tape
	x, a := tp.Input(sc.pad.X, false), tp.Input(sc.pad.A, false)
	norm := float32(len(s.batch))
	lx := tp.SquaredError(s.sx.Forward(tp, x, a, sc.pad.mask), sc.tx, norm)
	la := tp.SquaredError(s.sa.Forward(tp, x, a, sc.pad.mask), sc.ta, norm)
	sc.lx, sc.la = float64(lx.Value.Data[0]), float64(la.Value.Data[0])
	return tp.Add(lx, la)
}

// ScoreStats summarises score training.
type ScoreStats struct {
	Epochs     int `json:"epochs"`
	FinalLossX Num `json:"final_loss_x"` // mean batch loss of the last epoch
	FinalLossA Num `json:"final_loss_a"`
	// RatioX and RatioA are the mean fairness-to-noise norm ratios
	// ‖γG‖/‖σ_t·ε‖ of the training draws per t bin (NaN: no draw with γ > 0).
	RatioX [TBins]Num `json:"ratio_x"`
	RatioA [TBins]Num `json:"ratio_a"`
	// GradNormX/A are the mean pre-clipping gradient norms of the last epoch.
	GradNormX Num `json:"grad_norm_x"`
	GradNormA Num `json:"grad_norm_a"`
}

// trainScore trains fresh score networks (initialised from initSeed) on
// every subgraph of v; grads == nil means λ = 0 (w/o Fairness).
func trainScore(ctx context.Context, cfg *Config, v *view, grads *gradCache, d int, w *nn.Workers[float32],
	initSeed, drawSeed uint64, rep *reporter) (*nn.ScoreX[float32], *nn.ScoreA[float32], *ScoreStats, error) {
	defer releaseTapes(w)
	irng := fasd.NewRand(initSeed)
	sx, err := nn.NewScoreX[float32](scoreXArch(cfg, d), irng)
	if err != nil {
		return nil, nil, nil, err
	}
	sa, err := nn.NewScoreA[float32](nn.DefaultScoreAConfig(d), irng)
	if err != nil {
		return nil, nil, nil, err
	}
	st := &scoreTrainer{cfg: cfg, sx: sx, sa: sa, v: v, grads: grads, popt: perturbOptions(cfg, grads != nil), d: d,
		seed: drawSeed, shards: make([]scoreShard, w.N())}
	st.fn = st.shard
	sc := cfg.Score
	px, pa := sx.Params(), sa.Params()
	ac := nn.AdamConfig{LR: sc.LR, WeightDecay: sc.WeightDecay}
	optX, optA := nn.NewAdam(px, ac), nn.NewAdam(pa, ac)
	var emaX, emaA *nn.EMA[float32]
	if sc.UseEMA {
		emaX, emaA = nn.NewEMA(px, sc.EMA), nn.NewEMA(pa, sc.EMA)
	}
	m := len(v.sgs)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	orng := fasd.NewRand(fasd.DeriveSeed(drawSeed, purposeScoreOrder))
	nb := (m + sc.Batch - 1) / sc.Batch
	stats := &ScoreStats{Epochs: sc.Epochs}
	var rsX, rsA [TBins]float64
	var rsN [TBins]int
	start := time.Now()
	steps := 0
	for ep := 0; ep < sc.Epochs; ep++ {
		orng.Shuffle(m, func(i, j int) { order[i], order[j] = order[j], order[i] })
		st.epoch = ep
		var sumX, sumA, gnX, gnA float64
		for b := 0; b < nb; b++ {
			if err := ctx.Err(); err != nil {
				return nil, nil, nil, err
			}
			st.bstart = b * sc.Batch
			st.batch = order[st.bstart:min(m, (b+1)*sc.Batch)]
			nn.ZeroGrads(px)
			nn.ZeroGrads(pa)
			w.Step(len(st.batch), nil, st.fn)
			for k := range st.shards {
				sh := &st.shards[k]
				if sh.err != nil {
					return nil, nil, nil, fmt.Errorf("score training: %w", sh.err)
				}
				sumX += sh.lx
				sumA += sh.la
				sh.lx, sh.la = 0, 0
			}
			if sc.GradClip > 0 {
				gnX += nn.ClipGradNorm(px, sc.GradClip)
				gnA += nn.ClipGradNorm(pa, sc.GradClip)
			} else {
				gnX += nn.GradNorm(px)
				gnA += nn.GradNorm(pa)
			}
			optX.Step()
			optA.Step()
			if emaX != nil {
				emaX.Update()
				emaA.Update()
			}
			steps++
			if steps == min(3, nb*sc.Epochs) {
				rep.estimate(time.Since(start) / time.Duration(steps) * time.Duration(nb*sc.Epochs))
			}
		}
		optX.DecayLR(sc.LRDecay)
		optA.DecayLR(sc.LRDecay)
		lx, la := sumX/float64(nb), sumA/float64(nb)
		stats.FinalLossX, stats.FinalLossA = Num(lx), Num(la)
		stats.GradNormX, stats.GradNormA = Num(gnX/float64(nb)), Num(gnA/float64(nb))
		if math.IsNaN(lx) || math.IsNaN(la) || math.IsInf(lx, 0) || math.IsInf(la, 0) {
			return nil, nil, nil, fmt.Errorf("score training epoch %d: loss %v / %v: %w", ep, lx, la, fasd.ErrNonFinite)
		}
		rep.epoch(ep, lx+la, math.NaN())
		rep.progress(ep + 1)
	}
	for k := range st.shards {
		sh := &st.shards[k]
		for b := 0; b < TBins; b++ {
			rsX[b] += sh.ratioX[b]
			rsA[b] += sh.ratioA[b]
			rsN[b] += sh.ratioN[b]
		}
	}
	for b := 0; b < TBins; b++ {
		stats.RatioX[b], stats.RatioA[b] = Num(math.NaN()), Num(math.NaN())
		if rsN[b] > 0 {
			stats.RatioX[b], stats.RatioA[b] = Num(rsX[b]/float64(rsN[b])), Num(rsA[b]/float64(rsN[b]))
		}
	}
	if emaX != nil {
		emaX.CopyTo(px)
		emaA.CopyTo(pa)
	}
	return sx, sa, stats, nil
}

// LossRatio is the held-out score-loss diagnostic of §14 per t bin:
// R = Σ‖out − T‖² / Σ‖T‖² over fresh (t, ε) draws (R < 1 beats the zero
// predictor), and the cosines between out and the fairness part
// −(γ/σ)·G of the target and between out and ε.
type LossRatio struct {
	RX       [TBins]Num `json:"r_x"`
	RA       [TBins]Num `json:"r_a"`
	CosFairX [TBins]Num `json:"cos_fair_x"`
	CosFairA [TBins]Num `json:"cos_fair_a"`
	CosEpsX  [TBins]Num `json:"cos_eps_x"`
	CosEpsA  [TBins]Num `json:"cos_eps_a"`
	Draws    int        `json:"draws"` // per bin
}

// scoreLossRatio evaluates the networks in eval mode on one fresh draw per
// subgraph of idx and t bin (t uniform within the bin).
func scoreLossRatio(ctx context.Context, cfg *Config, sx *nn.ScoreX[float32], sa *nn.ScoreA[float32], v *view, grads *gradCache,
	idx []int, d, workers int, seed uint64) (*LossRatio, error) {
	popt := perturbOptions(cfg, grads != nil)
	// acc[k][bin] holds X: err, tgt, out·fair, |out|², |fair|², out·ε, |ε|²; then the same for A.
	type accum [2][7]float64
	acc := make([][TBins]accum, len(idx))
	type scratch struct {
		sm         scoreModel
		pert       fasd.Perturbation
		outX, outA []float32
	}
	scr := make([]scratch, workers)
	for i := range scr {
		scr[i].sm = scoreModel{sx: sx, sa: sa, tape: autodiff.NewTape[float32]()}
	}
	err := parallelFor(ctx, workers, len(idx)*TBins, func(w, j int) error {
		k, bin := j/TBins, j%TBins
		sc := &scr[w]
		i := idx[k]
		rng := fasd.NewRand(fasd.DeriveSeed(seed, purposeHeldOut, uint64(i), uint64(bin)))
		t := (float64(bin) + rng.Float64()) / TBins
		t = max(t, cfg.Diffusion.EpsT)
		in := grads.input(v, i, d)
		if err := fasd.Perturb(&popt, &in, t, rng, &sc.pert); err != nil {
			return err
		}
		n := in.N
		sc.outX, sc.outA = resizeF(sc.outX, n*d), resizeF(sc.outA, n*n)
		if err := sc.sm.Predict(t, sc.pert.Xt, sc.pert.At, n, d, sc.outX, sc.outA); err != nil {
			return err
		}
		p := &sc.pert
		fill := func(a *[7]float64, out, tgt, eps []float32, gamma, sigma float64, g []float32) {
			gs := gamma / sigma
			for q, o := range out {
				e := float64(o) - float64(tgt[q])
				a[0] += e * e
				a[1] += float64(tgt[q]) * float64(tgt[q])
				a[3] += float64(o) * float64(o)
				a[5] += float64(o) * float64(eps[q])
				a[6] += float64(eps[q]) * float64(eps[q])
				if g != nil && gamma > 0 {
					f := -gs * float64(g[q])
					a[2] += float64(o) * f
					a[4] += f * f
				}
			}
		}
		fill(&acc[k][bin][0], sc.outX, p.TX, p.EpsX, p.GammaX, p.SigmaX, in.GX)
		fill(&acc[k][bin][1], sc.outA, p.TA, p.EpsA, p.GammaA, p.SigmaA, in.GA)
		return nil
	})
	if err != nil {
		return nil, err
	}
	lr := &LossRatio{Draws: len(idx)}
	for bin := 0; bin < TBins; bin++ {
		var s [2][7]float64
		for k := range idx {
			for p := 0; p < 2; p++ {
				for q := 0; q < 7; q++ {
					s[p][q] += acc[k][bin][p][q]
				}
			}
		}
		ratio := func(a [7]float64) (r, cf, ce Num) {
			r, cf, ce = Num(a[0]/a[1]), Num(math.NaN()), Num(a[5]/math.Sqrt(a[3]*a[6]))
			if a[4] > 0 {
				cf = Num(a[2] / math.Sqrt(a[3]*a[4]))
			}
			return
		}
		lr.RX[bin], lr.CosFairX[bin], lr.CosEpsX[bin] = ratio(s[0])
		lr.RA[bin], lr.CosFairA[bin], lr.CosEpsA[bin] = ratio(s[1])
	}
	return lr, nil
}

// compile-time check that the eval wrapper fits the sampler.
var _ fasd.ScoreModel = (*scoreModel)(nil)
