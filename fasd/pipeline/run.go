package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/nn"
)

// Result is everything one run produced. Models holds FASD's trained
// networks (nil when VariantFASD was not run); the rest is the run record.
type Result struct {
	Config       Config          `json:"-"`
	NumSubgraphs int             `json:"num_subgraphs"`
	MeanNodes    float64         `json:"mean_nodes"`
	MeanEdges    float64         `json:"mean_edges"`
	Variants     []VariantResult `json:"variants"`
	// GSenLoss is g_sen's last-epoch training loss and MeanLSen the mean
	// L_sen per subgraph under the frozen g_sen (before debiasing).
	GSenLoss    Num          `json:"gsen_loss"`
	MeanLSen    Num          `json:"mean_lsen"`
	Score       *ScoreStats  `json:"score,omitempty"`
	ScoreNoFair *ScoreStats  `json:"score_nofair,omitempty"`
	Diagnostics *Diagnostics `json:"diagnostics,omitempty"`
	// Scope is the choice of sample.scope = "auto" (Input.Scope).
	Scope   *ScopeChoice  `json:"scope,omitempty"`
	Timings []StageTiming `json:"timings"`
	Models  *Models       `json:"-"`
}

// Variant returns the result of variant v, or nil.
func (r *Result) Variant(v Variant) *VariantResult {
	for i := range r.Variants {
		if r.Variants[i].Variant == v {
			return &r.Variants[i]
		}
	}
	return nil
}

// Diagnostics are the §14 checks of one run.
type Diagnostics struct {
	// Predictability of s on validation-rooted subgraphs: the frozen g_sen
	// and a fresh probe (g_sen's architecture trained on train-rooted
	// subgraphs of the same kind), original versus FASD-debiased, and (when
	// w/o Fairness ran) on the λ = 0 debiased subgraphs.
	// GSenOrig and GSenDeb are absent when the run trained no g_sen (the
	// configuration did not use it: see needsGSen).
	GSenOrig     *SensScore `json:"gsen_orig,omitempty"`
	GSenDeb      *SensScore `json:"gsen_deb,omitempty"`
	ProbeOrig    SensScore  `json:"probe_orig"`
	ProbeDeb     SensScore  `json:"probe_deb"`
	GSenNoFair   *SensScore `json:"gsen_nofair,omitempty"`
	ProbeNoFair  *SensScore `json:"probe_nofair,omitempty"`
	LossRatio0   *LossRatio `json:"loss_ratio_init"` // untrained networks
	LossRatio    *LossRatio `json:"loss_ratio"`      // trained networks
	Edits        EditStats  `json:"edits"`
	EditsNoFair  *EditStats `json:"edits_nofair,omitempty"`
	HeldOutRoots int        `json:"held_out_roots"`
}

// seeds of one run, all derived from the run seed.
type seeds struct {
	gsenInit, gsenTrain, scoreInit, scoreDraw, fInit, fTrain, probe, heldOut, baseline, fallback uint64
}

func deriveSeeds(s uint64) seeds {
	d := func(p uint64) uint64 { return fasd.DeriveSeed(s, p) }
	return seeds{d(purposeGSenInit), d(purposeGSenTrain), d(purposeScoreInit), d(purposeScoreDraw),
		d(purposeFInit), d(purposeFTrain), d(purposeProbe), d(purposeHeldOut), d(purposeBaseline), d(purposeFallback)}
}

// Run executes one FASD run (§2–§11) on in with cfg, evaluates the
// requested variants on the same subgraphs and seeds, and returns the
// result. It is deterministic for a given config (seed included), input and
// worker count. ctx cancels it between batches.
func Run(ctx context.Context, cfg Config, in *Input, opt *Options) (_ *Result, err error) {
	if opt == nil {
		opt = &Options{}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if _, _, err := debiasOptions(&cfg); err != nil {
		return nil, err
	}
	retune := make([]Config, len(opt.Retune))
	cfgs := []*Config{&cfg}
	for i, r := range opt.Retune {
		c, err := r.Apply(cfg)
		if err != nil {
			return nil, err
		}
		retune[i] = c
		cfgs = append(cfgs, &retune[i])
	}
	guideNet, err := guideNetOf(cfgs...)
	if err != nil {
		return nil, err
	}
	sgs, train, val, test, err := in.validate()
	if err != nil {
		return nil, err
	}
	workers := cfg.workerCount()
	w := nn.NewWorkers[float32](workers)
	defer w.Close()
	rep := &reporter{cb: opt.Callbacks, evals: opt.evals}
	ev := newEvalData(&cfg, in, train, val, test)
	ev.keep = opt.KeepScores
	if opt.Counterfactual {
		x := in.Features
		if x == nil && in.Graph != nil {
			x = in.Graph.X
		}
		if f, ok := findSensFeature(x, in.D, in.Sens); ok {
			ev.flip = &f
		}
	}
	orig := originalView(sgs, in.D, in.Features)
	sd := deriveSeeds(cfg.Seed)
	d := in.D
	res := &Result{Config: cfg, NumSubgraphs: len(sgs), GSenLoss: Num(math.NaN()), MeanLSen: Num(math.NaN()), Scope: in.Scope}
	for _, g := range sgs {
		res.MeanNodes += float64(g.N())
		res.MeanEdges += float64(g.NumEdges())
	}
	res.MeanNodes /= float64(len(sgs))
	res.MeanEdges /= float64(len(sgs))
	all := make([]int, len(sgs))
	var trainRooted, valRooted []int
	for i, g := range sgs {
		all[i] = i
		switch in.Split[g.Root()] {
		case fasd.SplitTrain:
			trainRooted = append(trainRooted, i)
		case fasd.SplitVal:
			valRooted = append(valRooted, i)
		}
	}
	defer func() { res.Timings = rep.timings }()
	pr := newProber(opt, &cfg, sgs, in.Split, d, w, sd.probe)

	// deb and debNF are released (their spills closed) after their last
	// use, or here on an early return.
	var deb, debNF *view
	defer func() {
		if cerr := errors.Join(deb.close(), debNF.close()); cerr != nil && err == nil {
			err = fmt.Errorf("release the debiased features: %w", cerr)
		}
	}()
	var fasdModels *Models
	var fasdRetuned []VariantResult // FASD's --retune rows
	if opt.wants(VariantFASD) || opt.wants(VariantFASDGCN) || opt.wants(VariantFASDProp) {
		var gsen *nn.GCNNet[float32]
		var grads *gradCache
		if needsGSen(&cfg, retune) {
			rep.begin(StageGSen, cfg.Sens.Epochs)
			var gl, ml float64
			if gsen, gl, err = trainSensNet(ctx, &cfg, cfg.Sens, orig, all, d, w, sd.gsenInit, sd.gsenTrain, rep); err != nil {
				return nil, fmt.Errorf("train g_sen: %w", err)
			}
			rep.end()
			res.GSenLoss = Num(gl)

			rep.begin(StageGrads, len(sgs))
			if grads, ml, err = sensGrads(ctx, gsen, orig, d, workers, cfg.Sens.Scope == ScopeTrain,
				cfg.Diffusion.LambdaX > 0, cfg.Diffusion.LambdaA > 0, rep); err != nil {
				return nil, fmt.Errorf("g_sen gradients: %w", err)
			}
			rep.end()
			res.MeanLSen = Num(ml)
		}

		var lr0 *LossRatio
		if opt.Diagnostics {
			m0, err := newModels(&cfg, d, false, true, false, false, fasd.NewRand(sd.scoreInit))
			if err != nil {
				return nil, err
			}
			if lr0, err = scoreLossRatio(ctx, &cfg, m0.ScoreX, m0.ScoreA, orig, grads, heldOut(valRooted, all), d, workers, sd.heldOut); err != nil {
				return nil, fmt.Errorf("loss ratio: %w", err)
			}
		}

		rep.begin(StageScore, ScoreUnits(&cfg, len(sgs)))
		sx, sa, st, err := trainScore(ctx, &cfg, orig, grads, d, w, sd.scoreInit, sd.scoreDraw, rep)
		if err != nil {
			return nil, fmt.Errorf("train score networks: %w", err)
		}
		rep.end()
		res.Score = st
		fasdModels = &Models{Config: cfg, D: d, FeatureHash: FeatureHash(in.FeatureNames), GSen: gsen, ScoreX: sx, ScoreA: sa}
		rounds := guideRounds(&cfg)
		for i := range retune {
			rounds = max(rounds, guideRounds(&retune[i]))
		}
		if rounds > 0 {
			rep.begin(StageGuides, rounds)
			if fasdModels.Guides, err = trainLinearGuides(ctx, orig, d, rounds, guideNet); err != nil {
				return nil, fmt.Errorf("linear guides: %w", err)
			}
			rep.end()
		}

		rep.begin(StageDebias, len(sgs))
		if deb, err = debiasAll(ctx, fasdModels, orig, workers, opt.Scratch, rep); err != nil {
			return nil, fmt.Errorf("debias: %w", err)
		}
		rep.end()
		// The debiased flipped features, for the counterfactual shares of
		// fasd and fasd_gcn (debiased silently: not a stage of its own).
		var debCF *view
		if ev.flip != nil && (opt.wants(VariantFASD) || opt.wants(VariantFASDGCN)) {
			if debCF, err = debiasAll(ctx, fasdModels, ev.flip.view(orig), workers, opt.Scratch, &reporter{}); err != nil {
				return nil, fmt.Errorf("debias for the counterfactual: %w", err)
			}
			defer func() { debCF.close() }() // on an error return; closed below otherwise
		}

		if opt.wants(VariantFASD) {
			rep.begin(StageClassifier, ClassifierUnits(&cfg, len(sgs)))
			f, vr, err := trainClassifier(ctx, &cfg, deb, d, w, ev, VariantFASD, sd.fInit, sd.fTrain, rep)
			if err != nil {
				return nil, fmt.Errorf("train classifier: %w", err)
			}
			rep.end()
			fasdModels.F = f
			fasdModels.Threshold = float64(vr.Threshold)
			if opt.FairProbs != nil {
				rep.begin(StageFairProbs, len(sgs))
				if err := emitFairProbs(ctx, fasdModels, orig, deb, workers, opt.FairProbs, rep); err != nil {
					return nil, fmt.Errorf("f on the debiased subgraphs: %w", err)
				}
				rep.end()
			}
			if debCF != nil {
				cf, err := subgraphCounterfactual(ctx, f, deb, debCF, d, workers, ev, float64(vr.Threshold))
				if err != nil {
					return nil, fmt.Errorf("counterfactual: %w", err)
				}
				vr.Counterfactual = numPtr(cf)
			}
			res.Models = fasdModels
			if vr.Probe, err = pr.score(ctx, rep, deb, string(VariantFASD)); err != nil {
				return nil, err
			}
			res.Variants = append(res.Variants, vr)
			rv, err := runRetune(ctx, fasdModels, VariantFASD, opt.Retune, retune, orig, w, ev, sd, opt.Scratch, rep, pr)
			if err != nil {
				return nil, err
			}
			res.Variants = append(res.Variants, rv...)
			fasdRetuned = rv
		}
		if opt.wants(VariantFASDGCN) {
			if in.Graph == nil {
				return nil, fmt.Errorf("%w: %s needs Input.Graph", ErrInput, VariantFASDGCN)
			}
			rep.begin(StageFASDGCN, cfg.Baseline.Epochs)
			xm, _, err := nodeMeanFeatures(ctx, deb, in.NumNodes, in.Graph.X)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", VariantFASDGCN, err)
			}
			x0 := in.Graph.X
			// The same features from the flipped input, for the
			// counterfactual share.
			var xmCF, x0CF []float32
			if debCF != nil {
				if xmCF, _, err = nodeMeanFeatures(ctx, debCF, in.NumNodes, ev.flip.rows(in.Graph.X, in.D)); err != nil {
					return nil, fmt.Errorf("%s: %w", VariantFASDGCN, err)
				}
				x0CF = ev.flip.rows(x0, in.D)
			}
			if k := cfg.Classifier.Neutralize; k != 0 {
				xm = neutralize(xm, in.D, in.Graph.Edges, in.Sens, k)
				x0 = neutralize(x0, in.D, in.Graph.Edges, in.Sens, k)
				if debCF != nil {
					xmCF = neutralize(xmCF, in.D, in.Graph.Edges, in.Sens, k)
					x0CF = neutralize(x0CF, in.D, in.Graph.Edges, in.Sens, k)
				}
			}
			vr, err := trainFullGraph(ctx, &cfg, in, in.Graph.Edges, xm, xmCF, train, ev, VariantFASDGCN, sd.baseline, rep)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", VariantFASDGCN, err)
			}
			if cfg.Classifier.Fallback {
				vo, err := trainFullGraph(ctx, &cfg, in, in.Graph.Edges, x0, x0CF, train, ev, VariantFASDGCN, sd.baseline, rep)
				if err != nil {
					return nil, fmt.Errorf("%s (original features): %w", VariantFASDGCN, err)
				}
				if fallBack(&vr, &vo) {
					vr, vr.FellBack = vo, true
				}
			}
			rep.end()
			if vr.Probe, err = pr.score(ctx, rep, deb, string(VariantFASD)); err != nil {
				return nil, err
			}
			res.Variants = append(res.Variants, vr)
		}

		if opt.wants(VariantFASDProp) {
			vr, err := trainProp(ctx, &cfg, in, deb, orig, train, ev, VariantFASDProp, StageFASDProp, sd.baseline, rep)
			if err != nil {
				return nil, err
			}
			if vr.Probe, err = pr.score(ctx, rep, deb, string(VariantFASD)); err != nil {
				return nil, err
			}
			res.Variants = append(res.Variants, vr)
		}

		if opt.Diagnostics {
			rep.begin(StageDiagnostics, 1)
			dg := &Diagnostics{LossRatio0: lr0, HeldOutRoots: len(heldOut(valRooted, all))}
			if dg.Edits, err = editStats(orig, deb); err != nil {
				return nil, err
			}
			// Timed apart in an estimate's short run: it covers at most
			// 256 subgraphs, the rest of the stage all of them.
			held := heldOut(valRooted, all)
			if err := rep.timed(len(held), func() (err error) {
				dg.LossRatio, err = scoreLossRatio(ctx, &cfg, sx, sa, orig, grads, held, d, workers, sd.heldOut)
				return err
			}); err != nil {
				return nil, fmt.Errorf("loss ratio: %w", err)
			}
			if gsen != nil {
				o, err := sensScore(ctx, gsen, orig, valRooted, d, workers)
				if err != nil {
					return nil, err
				}
				db, err := sensScore(ctx, gsen, deb, valRooted, d, workers)
				if err != nil {
					return nil, err
				}
				dg.GSenOrig, dg.GSenDeb = &o, &db
			}
			rep.end()
			rep.begin(StageProbe, 2*probeEpochs(&cfg))
			if dg.ProbeOrig, err = probe(ctx, &cfg, orig, trainRooted, valRooted, d, w, sd.probe, rep); err != nil {
				return nil, err
			}
			if dg.ProbeDeb, err = probe(ctx, &cfg, deb, trainRooted, valRooted, d, w, sd.probe, rep); err != nil {
				return nil, err
			}
			rep.end()
			res.Diagnostics = dg
		}
		if err := errors.Join(deb.close(), debCF.close()); err != nil {
			return nil, fmt.Errorf("release the debiased features: %w", err)
		}
		deb, debCF = nil, nil
	}

	// With classifier.fallback_fasd FASD's classifier is checked against
	// the w/o-Diffusion one, which is then trained even when not asked for.
	fasdAt := -1
	if opt.wants(VariantFASD) && FallbackFASD(cfg.Classifier.FallbackFASD) != FallbackOff {
		for i := range res.Variants {
			if res.Variants[i].Variant == VariantFASD {
				fasdAt = i
			}
		}
	}
	if opt.wants(VariantNoDiffusion) || fasdAt >= 0 {
		rep.begin(StageNoDiffusion, ClassifierUnits(&cfg, len(sgs)))
		fb, vr, err := trainClassifier(ctx, &cfg, orig, d, w, ev, VariantNoDiffusion, sd.fInit, sd.fTrain, rep)
		if err != nil {
			return nil, fmt.Errorf("w/o diffusion: %w", err)
		}
		if fasdModels != nil {
			fasdModels.FBase = fb
		}
		rep.end()
		if ev.flip != nil {
			cf, err := subgraphCounterfactual(ctx, fb, orig, ev.flip.view(orig), d, workers, ev, float64(vr.Threshold))
			if err != nil {
				return nil, fmt.Errorf("w/o diffusion counterfactual: %w", err)
			}
			vr.Counterfactual = numPtr(cf)
		}
		fellBack := false
		if fasdAt >= 0 {
			switch FallbackFASD(cfg.Classifier.FallbackFASD) {
			case FallbackCheck:
				fellBack = fallBack(&res.Variants[fasdAt], &vr)
			case FallbackSignificant:
				fellBack = lessFairOnValidation(ev, &res.Variants[fasdAt], &vr, fasd.NewRand(sd.fallback))
			}
		}
		if opt.wants(VariantNoDiffusion) || fellBack {
			if vr.Probe, err = pr.score(ctx, rep, orig, ProbeData); err != nil {
				return nil, err
			}
		}
		if fellBack {
			// The served FASD prediction becomes w/o Diffusion's: f_base
			// on the clean subgraphs (Models.FellBack).
			fv := vr
			fv.Variant, fv.FellBack = VariantFASD, true
			res.Variants[fasdAt] = fv
			fasdModels.FellBack, fasdModels.Threshold = true, float64(vr.Threshold)
		}
		if opt.wants(VariantNoDiffusion) {
			res.Variants = append(res.Variants, vr)
		}
	}

	if opt.wants(VariantNoFairness) {
		var sx *nn.ScoreX[float32]
		var sa *nn.ScoreA[float32]
		shared := fasdModels != nil && fairTermOff(&cfg)
		if shared {
			// With λ_X = λ_A = 0 FASD's score networks were trained
			// without the fairness term, from the same seeds: training
			// them again would give the same networks bit for bit, so
			// w/o Fairness reuses them and differs from FASD only by
			// the guidance.
			sx, sa, res.ScoreNoFair = fasdModels.ScoreX, fasdModels.ScoreA, res.Score
		} else {
			rep.begin(StageScoreNoFair, ScoreUnits(&cfg, len(sgs)))
			var st *ScoreStats
			var err error
			sx, sa, st, err = trainScore(ctx, &cfg, orig, nil, d, w, sd.scoreInit, sd.scoreDraw, rep)
			if err != nil {
				return nil, fmt.Errorf("w/o fairness score networks: %w", err)
			}
			rep.end()
			res.ScoreNoFair = st
		}
		// w/o Fairness: λ = 0 in training and no guidance in debiasing.
		nf := cfg
		nf.Debias.GuideWeight = 0
		mnf := &Models{Config: nf, D: d, ScoreX: sx, ScoreA: sa}
		if fasdModels != nil {
			// Retune settings with guidance use FASD's g_sen here too
			// (guidance on score networks trained without the fairness term).
			mnf.GSen, mnf.Guides = fasdModels.GSen, fasdModels.Guides
		}
		rep.begin(StageDebiasNoFair, len(sgs))
		if debNF, err = debiasAll(ctx, mnf, orig, workers, opt.Scratch, rep); err != nil {
			return nil, fmt.Errorf("w/o fairness debias: %w", err)
		}
		rep.end()
		rep.begin(StageClassNoFair, ClassifierUnits(&cfg, len(sgs)))
		_, vr, err := trainClassifier(ctx, &cfg, debNF, d, w, ev, VariantNoFairness, sd.fInit, sd.fTrain, rep)
		if err != nil {
			return nil, fmt.Errorf("w/o fairness classifier: %w", err)
		}
		rep.end()
		if vr.Probe, err = pr.score(ctx, rep, debNF, string(VariantNoFairness)); err != nil {
			return nil, err
		}
		res.Variants = append(res.Variants, vr)
		var rv []VariantResult
		if shared {
			// The retune settings apply to the same config for both
			// variants, so on shared networks w/o Fairness's retune rows
			// are FASD's, bit for bit: copy them instead of debiasing and
			// training f again.
			for _, r := range fasdRetuned {
				r.Variant = VariantNoFairness + r.Variant[len(VariantFASD):]
				rv = append(rv, r)
			}
		} else if rv, err = runRetune(ctx, mnf, VariantNoFairness, opt.Retune, retune, orig, w, ev, sd, opt.Scratch, rep, pr); err != nil {
			return nil, err
		}
		res.Variants = append(res.Variants, rv...)
		if dg := res.Diagnostics; dg != nil && fasdModels != nil {
			rep.begin(StageProbe, probeEpochs(&cfg))
			es, err := editStats(orig, debNF)
			if err != nil {
				return nil, err
			}
			dg.EditsNoFair = &es
			if fasdModels.GSen != nil {
				gs, err := sensScore(ctx, fasdModels.GSen, debNF, valRooted, d, workers)
				if err != nil {
					return nil, err
				}
				dg.GSenNoFair = &gs
			}
			ps, err := probe(ctx, &cfg, debNF, trainRooted, valRooted, d, w, sd.probe, rep)
			if err != nil {
				return nil, err
			}
			dg.ProbeNoFair = &ps
			rep.end()
		}
		if err := debNF.close(); err != nil {
			return nil, fmt.Errorf("release the debiased features: %w", err)
		}
		debNF = nil
	}

	if opt.wants(VariantGCN) {
		rep.begin(StageBaseline, cfg.Baseline.Epochs)
		vr, err := trainBaseline(ctx, &cfg, in, train, ev, sd.baseline, rep)
		if err != nil {
			return nil, fmt.Errorf("gcn baseline: %w", err)
		}
		rep.end()
		// The GCN reads the original graph: its probe is w/o Diffusion's.
		if vr.Probe, err = pr.score(ctx, rep, orig, ProbeData); err != nil {
			return nil, err
		}
		res.Variants = append(res.Variants, vr)
	}
	if opt.wants(VariantProp) {
		vr, err := trainProp(ctx, &cfg, in, orig, nil, train, ev, VariantProp, StageProp, sd.baseline, rep)
		if err != nil {
			return nil, err
		}
		if vr.Probe, err = pr.score(ctx, rep, orig, ProbeData); err != nil {
			return nil, err
		}
		res.Variants = append(res.Variants, vr)
	}
	if opt.wants(VariantMLP) {
		rep.begin(StageMLP, cfg.Baseline.Epochs)
		vr, err := trainMLP(ctx, &cfg, in, train, ev, sd.baseline, rep)
		if err != nil {
			return nil, fmt.Errorf("mlp baseline: %w", err)
		}
		rep.end()
		if vr.Probe, err = pr.score(ctx, rep, orig, ProbeData); err != nil {
			return nil, err
		}
		res.Variants = append(res.Variants, vr)
	}
	if opt.wants(VariantMajority) {
		vr, err := majority(ev)
		if err != nil {
			return nil, err
		}
		res.Variants = append(res.Variants, vr)
	}
	return res, nil
}

// runRetune evaluates the retuning settings (Options.Retune) on the score
// networks of m: per setting, debias orig again and train a fresh f with the
// run's f seeds, then (with a prober) a fresh probe on them. m's own
// config is left alone.
func runRetune(ctx context.Context, m *Models, base Variant, rs []Retune, cfgs []Config, orig *view,
	w *nn.Workers[float32], ev *evalData, sd seeds, newScratch func() (Scratch, error), rep *reporter, pr *prober) ([]VariantResult, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	rep.begin(StageRetune, len(rs))
	defer rep.end()
	out := make([]VariantResult, 0, len(rs))
	for i := range rs {
		mc := *m
		mc.Config = cfgs[i]
		sub := &reporter{cb: Callbacks{Epoch: rep.cb.Epoch}, stage: rep.stage}
		vr, err := retuneOne(ctx, &mc, Variant(string(base)+"@"+rs[i].Label()), orig, w, ev, sd, newScratch, sub, pr)
		if err != nil {
			return nil, fmt.Errorf("retune %q: %w", rs[i].Label(), err)
		}
		out = append(out, vr)
		rep.progress(i + 1)
	}
	return out, nil
}

// retuneOne debiases orig with m, trains f on the result and probes it.
func retuneOne(ctx context.Context, m *Models, name Variant, orig *view, w *nn.Workers[float32], ev *evalData, sd seeds,
	newScratch func() (Scratch, error), rep *reporter, pr *prober) (_ VariantResult, err error) {
	deb, err := debiasAll(ctx, m, orig, w.N(), newScratch, rep)
	if err != nil {
		return VariantResult{}, fmt.Errorf("debias: %w", err)
	}
	defer func() {
		if cerr := deb.close(); cerr != nil && err == nil {
			err = fmt.Errorf("release the debiased features: %w", cerr)
		}
	}()
	_, vr, err := trainClassifier(ctx, &m.Config, deb, m.D, w, ev, name, sd.fInit, sd.fTrain, rep)
	if err != nil {
		return VariantResult{}, fmt.Errorf("classifier: %w", err)
	}
	es, err := editStats(orig, deb)
	if err != nil {
		return VariantResult{}, err
	}
	vr.Edits = &es
	if vr.Probe, err = pr.score(ctx, nil, deb, string(name)); err != nil {
		return VariantResult{}, err
	}
	return vr, nil
}

// heldOutMax is the most subgraphs the fresh-draw loss ratio covers.
const heldOutMax = 256

// heldOut picks the subgraphs for the fresh-draw loss ratio: the
// validation-rooted ones (all subgraphs if there are none), at most
// heldOutMax.
func heldOut(valRooted, all []int) []int {
	s := valRooted
	if len(s) == 0 {
		s = all
	}
	if len(s) > heldOutMax {
		return s[:heldOutMax]
	}
	return s
}

// SweepPoint is one (N_steps, λ) setting of a sensitivity sweep.
type SweepPoint struct {
	Steps  int           `json:"steps"`
	Lambda float64       `json:"lambda"`
	Result VariantResult `json:"result"`
	Edits  EditStats     `json:"edits"`
}

// Sweep runs the sensitivity analysis of the paper's Figures 2–3 on one
// input: g_sen once (when some λ > 0 or the guidance uses it), the score
// networks once per λ (λ_X = λ_A = λ), and for every N_steps the debiasing
// and f, all with cfg's seed. It returns the points in (λ, steps) order.
// Of opt it reads Callbacks and Scratch (where the debiased features of
// each point are kept); nil opt is the zero Options.
func Sweep(ctx context.Context, cfg Config, in *Input, steps []int, lambdas []float64, opt *Options) ([]SweepPoint, error) {
	if opt == nil {
		opt = &Options{}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sgs, train, val, test, err := in.validate()
	if err != nil {
		return nil, err
	}
	workers := cfg.workerCount()
	w := nn.NewWorkers[float32](workers)
	defer w.Close()
	rep := &reporter{cb: opt.Callbacks}
	ev := newEvalData(&cfg, in, train, val, test)
	orig := originalView(sgs, in.D, in.Features)
	sd := deriveSeeds(cfg.Seed)
	d := in.D
	all := make([]int, len(sgs))
	for i := range all {
		all[i] = i
	}
	fair := slices.ContainsFunc(lambdas, func(l float64) bool { return l > 0 })
	var gsen *nn.GCNNet[float32]
	var grads *gradCache
	if fair || gsenGuided(&cfg) {
		rep.begin(StageGSen, cfg.Sens.Epochs)
		if gsen, _, err = trainSensNet(ctx, &cfg, cfg.Sens, orig, all, d, w, sd.gsenInit, sd.gsenTrain, rep); err != nil {
			return nil, err
		}
		rep.end()
		if grads, _, err = sensGrads(ctx, gsen, orig, d, workers, cfg.Sens.Scope == ScopeTrain, fair, fair, rep); err != nil {
			return nil, err
		}
	}
	var guides []*nn.Param[float32]
	if r := guideRounds(&cfg); r > 0 {
		rep.begin(StageGuides, r)
		if guides, err = trainLinearGuides(ctx, orig, d, r, cfg.Debias.GuideNet); err != nil {
			return nil, fmt.Errorf("linear guides: %w", err)
		}
		rep.end()
	}
	var out []SweepPoint
	for _, lam := range lambdas {
		c := cfg
		c.Diffusion.LambdaX, c.Diffusion.LambdaA = lam, lam
		rep.begin(StageScore, ScoreUnits(&c, len(sgs)))
		g := grads
		if fairTermOff(&c) {
			g = nil
		}
		sx, sa, _, err := trainScore(ctx, &c, orig, g, d, w, sd.scoreInit, sd.scoreDraw, rep)
		if err != nil {
			return nil, fmt.Errorf("λ=%g: %w", lam, err)
		}
		rep.end()
		for _, s := range steps {
			cs := c
			cs.Debias.Steps = s
			if err := cs.Validate(); err != nil {
				return nil, err
			}
			m := &Models{Config: cs, D: d, GSen: gsen, ScoreX: sx, ScoreA: sa, Guides: guides}
			p, err := sweepPoint(ctx, m, orig, w, ev, sd, opt.Scratch, rep)
			if err != nil {
				return nil, fmt.Errorf("λ=%g steps=%d: %w", lam, s, err)
			}
			p.Steps, p.Lambda = s, lam
			out = append(out, p)
		}
	}
	return out, nil
}

// sweepPoint debiases orig with m, trains f on the result and releases the
// debiased features.
func sweepPoint(ctx context.Context, m *Models, orig *view, w *nn.Workers[float32], ev *evalData, sd seeds,
	newScratch func() (Scratch, error), rep *reporter) (_ SweepPoint, err error) {
	rep.begin(StageDebias, len(orig.sgs))
	deb, err := debiasAll(ctx, m, orig, w.N(), newScratch, rep)
	if err != nil {
		return SweepPoint{}, err
	}
	defer func() {
		if cerr := deb.close(); cerr != nil && err == nil {
			err = fmt.Errorf("release the debiased features: %w", cerr)
		}
	}()
	rep.end()
	rep.begin(StageClassifier, ClassifierUnits(&m.Config, len(orig.sgs)))
	_, vr, err := trainClassifier(ctx, &m.Config, deb, m.D, w, ev, VariantFASD, sd.fInit, sd.fTrain, rep)
	if err != nil {
		return SweepPoint{}, err
	}
	rep.end()
	vr.ValCurve = nil
	es, err := editStats(orig, deb)
	if err != nil {
		return SweepPoint{}, err
	}
	return SweepPoint{Result: vr, Edits: es}, nil
}
