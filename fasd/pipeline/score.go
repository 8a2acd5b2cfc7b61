package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/nn"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// TBins is the number of equal-width t bins of [0, 1] used by the
// per-time diagnostics.
const TBins = 5

// gradCache holds the cached fairness gradients per subgraph; a nil gx or
// ga means no gradient for X or A (zero, as for λ = 0).
type gradCache struct {
	gx, ga [][]float32
}

// fairTermOff reports whether the forward diffusion has no fairness term
// (λ_X = λ_A = 0): the score targets then do not depend on g_sen, and score
// networks trained with and without its gradients are the same.
func fairTermOff(cfg *Config) bool {
	return cfg.Diffusion.LambdaX == 0 && cfg.Diffusion.LambdaA == 0
}

// needsGSen reports whether a FASD run with config cfg and the retune
// settings uses g_sen: for the fairness term of the forward diffusion
// (λ > 0) or as the guide of a reverse run (debias.guide_net = "gsen" with a
// positive weight). The default preset uses neither (λ = 0, linear guides),
// so its runs skip g_sen's training and gradients and store no g_sen.
func needsGSen(cfg *Config, retune []Config) bool {
	if !fairTermOff(cfg) || gsenGuided(cfg) {
		return true
	}
	for i := range retune {
		if gsenGuided(&retune[i]) {
			return true
		}
	}
	return false
}

func gsenGuided(cfg *Config) bool {
	return cfg.Debias.GuideWeight > 0 && cfg.Debias.GuideNet == GuideGSen
}

func perturbOptions(cfg *Config, fair bool) fasd.PerturbOptions {
	o := fasd.PerturbOptions{
		SDEX: fasd.VPSDE{BetaMin: cfg.Diffusion.BetaMinX, BetaMax: cfg.Diffusion.BetaMaxX, NumScales: 1000},
		SDEA: fasd.VPSDE{BetaMin: cfg.Diffusion.BetaMinA, BetaMax: cfg.Diffusion.BetaMaxA, NumScales: 1000},
	}
	if fair {
		o.LambdaX, o.LambdaA = cfg.Diffusion.LambdaX, cfg.Diffusion.LambdaA
	}
	// Validate has checked the name; an unknown one keeps the default.
	o.Gamma, _ = fasd.ParseName[fasd.GammaMode](cfg.Diffusion.Gamma)
	return o
}

// input returns subgraph i of v with its cached gradients; buf and abuf
// are the caller's buffers for features v does not hold in memory and for
// the dense adjacency (grown as needed).
func (c *gradCache) input(v *view, i, d int, buf, abuf *[]float32) (fasd.PerturbInput, error) {
	x, err := v.x(i, *buf)
	if err != nil {
		return fasd.PerturbInput{}, err
	}
	if !v.holds(i) {
		*buf = x
	}
	a, err := v.a(i, *abuf)
	if err != nil {
		return fasd.PerturbInput{}, err
	}
	*abuf = a
	in := fasd.PerturbInput{N: v.sgs[i].N(), D: d, X0: x, A0: a}
	if c != nil && c.gx != nil {
		in.GX = c.gx[i]
	}
	if c != nil && c.ga != nil {
		in.GA = c.ga[i]
	}
	return in, nil
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
	x0     []float32 // features of a subgraph the view does not hold
	a0     []float32 // the dense adjacency of a subgraph
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
		in, err := s.grads.input(s.v, i, d, &sc.x0, &sc.a0)
		if err != nil {
			sc.err = err
			return nil
		}
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
	// Schedule is "epochs" or "budget"; Steps the optimizer steps taken and
	// SubgraphSteps the subgraph draws they used.
	Schedule      string `json:"schedule,omitempty"`
	Steps         int    `json:"steps"`
	SubgraphSteps int    `json:"subgraph_steps"`
	// Budget schedule only: the planned subgraph-steps, the held-out
	// subgraphs, the held-out loss (½‖out−target‖² per subgraph, X + A, on
	// fixed draws) at every check, the best one (whose weights were kept)
	// and whether patience stopped training before the budget.
	Budget       int   `json:"budget,omitempty"`
	HeldOut      int   `json:"held_out,omitempty"`
	HeldOutCurve []Num `json:"held_out_curve,omitempty"`
	HeldOutBest  Num   `json:"held_out_best,omitempty"`
	StoppedEarly bool  `json:"stopped_early,omitempty"`
}

// scorePlan is the step schedule of one score training run.
type scorePlan struct {
	train, held []int // subgraph indexes trained on and held out
	steps       int   // optimizer steps
	evalEvery   int   // steps between held-out checks (0: none)
	budget      int   // subgraph-steps planned (budget schedule)
}

// scoreEstimateSteps is the step after which the score stage estimates
// its time (from the steps after the first).
const scoreEstimateSteps = 5

// planScore splits the subgraphs and sizes the run: the paper's epochs, or a
// budget of subgraph-steps with every k-th subgraph held out.
func planScore(sc *ScoreConfig, m int) scorePlan {
	all := make([]int, m)
	for i := range all {
		all[i] = i
	}
	if sc.Schedule != ScoreBudget {
		nb := (m + sc.Batch - 1) / sc.Batch
		return scorePlan{train: all, steps: nb * sc.Epochs}
	}
	p := scorePlan{}
	h := min(256, int(sc.HoldOut*float64(m)))
	if h > 0 && m-h >= 1 {
		k := m / h
		for i := 0; i < m; i++ {
			if i%k == k-1 && len(p.held) < h {
				p.held = append(p.held, i)
			} else {
				p.train = append(p.train, i)
			}
		}
	} else {
		p.train = all
	}
	p.budget = sc.Budget
	if p.budget == 0 {
		p.budget = AutoBudget(m, sc.Batch)
	}
	p.steps = max(1, (p.budget+sc.Batch-1)/sc.Batch)
	if len(p.held) > 0 {
		p.evalEvery = max(1, p.steps/max(1, sc.Evals))
	}
	return p
}

// ScoreUnits is the number of progress units of the score stage for m
// subgraphs: optimizer steps.
func ScoreUnits(cfg *Config, m int) int {
	return planScore(&cfg.Score, m).steps
}

// trainScore trains fresh score networks (initialised from initSeed) on
// the subgraphs of v; grads == nil means λ = 0 (w/o Fairness). Progress is
// reported in optimizer steps.
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
	plan := planScore(&sc, len(v.sgs))
	order := append([]int(nil), plan.train...)
	m := len(order)
	orng := fasd.NewRand(fasd.DeriveSeed(drawSeed, purposeScoreOrder))
	nb := (m + sc.Batch - 1) / sc.Batch
	stats := &ScoreStats{Schedule: string(sc.Schedule), Budget: plan.budget, HeldOut: len(plan.held)}
	var bestX, bestA, liveX, liveA []*nn.Param[float32]
	best := math.Inf(1)
	bad := 0
	var rsX, rsA [TBins]float64
	var rsN [TBins]int
	start := time.Now()
	var first time.Time // the end of the first step
	steps := 0
	var sumX, sumA, gnX, gnA float64
	nInPass := 0
	var heldScr []drawScratch
	check := func() (stop bool, err error) {
		if emaX != nil {
			// Judge the weights that will be used: the EMA weights, swapped
			// in for the check and out again after it.
			if liveX == nil {
				liveX, liveA = cloneParams(px), cloneParams(pa)
			}
			nn.CopyParams(liveX, px)
			nn.CopyParams(liveA, pa)
			emaX.CopyTo(px)
			emaA.CopyTo(pa)
			defer nn.CopyParams(px, liveX)
			defer nn.CopyParams(pa, liveA)
		}
		var l float64
		err = rep.timed(len(plan.held), func() (err error) {
			if heldScr == nil {
				// One set of eval tapes for every check of the stage.
				heldScr = newDrawScratch(sx, sa, w.N())
			}
			l, err = heldOutScoreLoss(ctx, cfg, heldScr, v, grads, plan.held, d, drawSeed)
			return err
		})
		if err != nil {
			return false, err
		}
		stats.HeldOutCurve = append(stats.HeldOutCurve, Num(l))
		if l < best*(1-0.005) || bestX == nil {
			bad = 0
		} else {
			bad++
		}
		if l < best || bestX == nil {
			best = l
			if bestX == nil {
				bestX, bestA = cloneParams(px), cloneParams(pa)
			}
			nn.CopyParams(bestX, px)
			nn.CopyParams(bestA, pa)
		}
		return sc.Patience > 0 && bad >= sc.Patience, nil
	}
	ep := 0
	for steps < plan.steps {
		b := steps % nb
		if b == 0 {
			orng.Shuffle(m, func(i, j int) { order[i], order[j] = order[j], order[i] })
			st.epoch = ep
		}
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
		nInPass++
		stats.SubgraphSteps += len(st.batch)
		// The stage's time from its first steps: the first one carries
		// the warm-up (the tapes' arenas growing, several times a steady
		// step on large graphs), so the rate is that of the steps after
		// it, and only the steps still to come are extrapolated.
		if steps == 1 {
			first = time.Now()
		}
		if k := min(scoreEstimateSteps, plan.steps); steps == k && k > 1 {
			rate := time.Since(first) / time.Duration(k-1)
			rep.estimate(time.Since(start) + rate*time.Duration(plan.steps-k))
		}
		if b == nb-1 || steps == plan.steps {
			// End of a pass over the training subgraphs.
			optX.DecayLR(sc.LRDecay)
			optA.DecayLR(sc.LRDecay)
			lx, la := sumX/float64(nInPass), sumA/float64(nInPass)
			stats.FinalLossX, stats.FinalLossA = Num(lx), Num(la)
			stats.GradNormX, stats.GradNormA = Num(gnX/float64(nInPass)), Num(gnA/float64(nInPass))
			if math.IsNaN(lx) || math.IsNaN(la) || math.IsInf(lx, 0) || math.IsInf(la, 0) {
				return nil, nil, nil, fmt.Errorf("score training pass %d: loss %v / %v: %w", ep, lx, la, fasd.ErrNonFinite)
			}
			rep.epoch(ep, lx+la, math.NaN())
			sumX, sumA, gnX, gnA, nInPass = 0, 0, 0, 0, 0
			ep++
		}
		rep.progress(steps)
		if plan.evalEvery > 0 && (steps%plan.evalEvery == 0 || steps == plan.steps) {
			stop, err := check()
			if err != nil {
				return nil, nil, nil, fmt.Errorf("held-out score loss: %w", err)
			}
			if stop {
				stats.StoppedEarly = steps < plan.steps
				break
			}
		}
	}
	stats.Epochs, stats.Steps = ep, steps
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
	if bestX != nil {
		stats.HeldOutBest = Num(best)
		nn.CopyParams(px, bestX)
		nn.CopyParams(pa, bestA)
	} else if emaX != nil {
		emaX.CopyTo(px)
		emaA.CopyTo(pa)
	}
	return sx, sa, stats, nil
}

func cloneParams(ps []*nn.Param[float32]) []*nn.Param[float32] {
	out := make([]*nn.Param[float32], len(ps))
	for i, p := range ps {
		out[i] = &nn.Param[float32]{Value: tensor.Dense[float32]{Shape: p.Value.Shape, Data: append([]float32(nil), p.Value.Data...)}}
	}
	return out
}

// drawScratch is the per-worker scratch of the held-out evaluations: one
// perturbation draw and the networks' outputs on it.
type drawScratch struct {
	sm         scoreModel
	pert       fasd.Perturbation
	outX, outA []float32
	x0, a0     []float32
}

func newDrawScratch(sx *nn.ScoreX[float32], sa *nn.ScoreA[float32], workers int) []drawScratch {
	scr := make([]drawScratch, workers)
	for i := range scr {
		scr[i].sm = scoreModel{sx: sx, sa: sa, tape: autodiff.NewTape[float32]()}
	}
	return scr
}

// draw perturbs subgraph i of v at time t with rng and runs the networks
// in eval mode on the perturbed state, into sc.pert and sc.outX/outA.
func (sc *drawScratch) draw(popt *fasd.PerturbOptions, grads *gradCache, v *view, i, d int, t float64, rng *rand.Rand) (fasd.PerturbInput, error) {
	in, err := grads.input(v, i, d, &sc.x0, &sc.a0)
	if err != nil {
		return in, err
	}
	if err := fasd.Perturb(popt, &in, t, rng, &sc.pert); err != nil {
		return in, err
	}
	n := in.N
	sc.outX, sc.outA = resizeF(sc.outX, n*d), resizeF(sc.outA, n*n)
	return in, sc.sm.Predict(t, sc.pert.Xt, sc.pert.At, n, d, sc.outX, sc.outA)
}

// heldOutScoreLoss is the score-matching loss of the networks in eval mode
// on the subgraphs idx, one fixed (t, ε) draw per subgraph (the same draws
// at every call, so successive checks compare like with like): the mean
// over subgraphs of ½‖s_θ − T_X‖² + ½‖s_φ − T_A‖².
// scr holds one scratch per worker (newDrawScratch), reused across calls.
func heldOutScoreLoss(ctx context.Context, cfg *Config, scr []drawScratch, v *view, grads *gradCache,
	idx []int, d int, seed uint64) (float64, error) {
	popt := perturbOptions(cfg, grads != nil)
	loss := make([]float64, len(idx))
	err := parallelFor(ctx, len(scr), len(idx), func(w, k int) error {
		sc := &scr[w]
		i := idx[k]
		rng := fasd.NewRand(fasd.DeriveSeed(seed, purposeScoreHeldOut, uint64(i)))
		t := fasd.SampleTime(rng, cfg.Diffusion.EpsT)
		_, err := sc.draw(&popt, grads, v, i, d, t, rng)
		if err != nil {
			return err
		}
		var s float64
		for q, o := range sc.outX {
			e := float64(o) - float64(sc.pert.TX[q])
			s += e * e
		}
		for q, o := range sc.outA {
			e := float64(o) - float64(sc.pert.TA[q])
			s += e * e
		}
		loss[k] = 0.5 * s
		return nil
	})
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, l := range loss {
		sum += l
	}
	return sum / float64(max(1, len(idx))), nil
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
	scr := newDrawScratch(sx, sa, workers)
	err := parallelFor(ctx, workers, len(idx)*TBins, func(w, j int) error {
		k, bin := j/TBins, j%TBins
		sc := &scr[w]
		i := idx[k]
		rng := fasd.NewRand(fasd.DeriveSeed(seed, purposeHeldOut, uint64(i), uint64(bin)))
		t := (float64(bin) + rng.Float64()) / TBins
		t = max(t, cfg.Diffusion.EpsT)
		in, err := sc.draw(&popt, grads, v, i, d, t, rng)
		if err != nil {
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
