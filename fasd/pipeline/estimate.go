package pipeline

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fasd-db/fasd/fasd"
)

// Estimate is an extrapolated wall time per stage of a full run, and its
// peak memory.
type Estimate struct {
	// Stages holds, per stage, Seconds extrapolated to the full run,
	// Epochs the expected number of epochs (passes) and MaxSeconds the
	// time if early stopping never ends the stage.
	Stages []StageTiming
	Total  time.Duration
	// MaxTotal is Total with every early-stopping stage at its cap.
	MaxTotal time.Duration
	// PeakBytes is the expected peak resident memory of the process during
	// the run (see EstimateRun); 0 when the platform does not report it.
	PeakBytes int64
	// Took is the wall time the estimate itself needed.
	Took time.Duration
	// Roots is the number of subgraphs the estimate was computed from and
	// TotalRoots the number of the run it extrapolates to: equal for
	// EstimateRun, fewer for EstimateRunSampled.
	Roots, TotalRoots int
}

// estimateRoots is the minimum number of subgraphs the estimate run uses
// (at least one full score batch is used as well).
const estimateRoots = 48

// estimateDebiasRoots is the most subgraphs whose debiasing the estimate
// times apart (debiasPerSubgraph): about half a second of debiasing at the
// paper's sampling on two workers.
const estimateDebiasRoots = 256

// debiasPerSubgraph is the wall time per subgraph of debiasing up to
// estimateDebiasRoots of sgs (spread evenly over them) with m on workers;
// 0 when there are no models (the short run trained no FASD) or no
// subgraphs.
func debiasPerSubgraph(ctx context.Context, m *Models, sgs []*fasd.Subgraph, d int, feat []float32, workers int) (float64, error) {
	if m == nil || len(sgs) == 0 {
		return 0, nil
	}
	step := max(1, len(sgs)/estimateDebiasRoots)
	sub := make([]*fasd.Subgraph, 0, estimateDebiasRoots)
	for i := 0; i < len(sgs) && len(sub) < estimateDebiasRoots; i += step {
		sub = append(sub, sgs[i])
	}
	start := time.Now()
	out, err := debiasAll(ctx, m, originalView(sub, d, feat), workers, nil, &reporter{})
	if err != nil {
		return 0, err
	}
	took := time.Since(start)
	if err := out.close(); err != nil {
		return 0, err
	}
	return took.Seconds() / float64(len(sub)), nil
}

// estimateEpochs is the number of epochs each training stage runs in the
// estimate; the first one carries the warm-up, the lower quartile of the
// others is the steady per-epoch time. An epoch of the short run lasts a
// few milliseconds, and on a shared 2-core VM its first few after a
// stage starts, and any during which a worker is woken from idle, run
// 15–50 % slower than the same epoch inside a long run, which keeps both
// cores busy: with 4 epochs and their median, f's estimate on the
// Bail-sized graph was 1.4–1.8× its run; with 8 and the lower quartile it
// is within 20 % (BENCHMARKS.md, Training).
const estimateEpochs = 8

// expectEpochs is the number of epochs f (the classifier on subgraphs) is
// expected to run with patience: early stopping ends it patience epochs
// after its best epoch, which for f comes within the first few epochs (each
// is hundreds of mini-batch steps), so about fStopFactor × patience, never
// more than the cap.
func expectEpochs(epochs, patience int) float64 {
	if patience > 0 {
		return math.Min(float64(epochs), fStopFactor*float64(patience))
	}
	return float64(epochs)
}

// fStopFactor is f's expected stop as a multiple of its patience. f
// stopped after 1.20–1.30× its patience of 50 on NBA (BENCHMARKS.md,
// Training) and after 1.03–1.07× on the Bail-sized graph (each arm of
// classifier.arch = "auto", FASD's f and w/o Diffusion's); the factor was
// 1.5 before, 15–45 % above those runs.
const fStopFactor = 1.2

// expectEpochsUniform is the expected number of epochs of a stage with cap
// E and patience p whose best epoch B is equally likely anywhere in
// [0, E): it stops at min(E, B + p), whose mean is
//
//	(1/E)·(∫₀^{E−p} (b + p) db + p·E) = E/2 + p − p²/(2E)   (p ≤ E).
//
// It is used for the stages whose validation keeps improving slowly, so
// that their best epoch is not early: the full-graph GCN (one full-batch
// step per epoch at lr 1e-3), g_sen and the probes. With the default
// profile it gives 340 epochs for the GCN (cap 500, patience 100; 415–488
// were run) and 169 for g_sen's schedule (cap 300, patience 20; the fresh
// probe ran 100–195); the former rule, 1.5× patience, gave 150 and 30.
func expectEpochsUniform(epochs, patience int) float64 {
	e, p := float64(epochs), float64(patience)
	if patience <= 0 || p >= e {
		return e
	}
	return e/2 + p - p*p/(2*e)
}

// stageShape describes one stage of the full run for the extrapolation: its
// expected and maximal epochs, the ratio of the subgraphs it trains on to
// those of the estimate run, and per epoch (or check) the subgraphs its
// held-out or validation evaluation covers and the number of checks.
type stageShape struct {
	epochs, maxEpochs float64
	trainScale        float64
	evalN             float64 // subgraphs per check in the full run
	checks, maxChecks float64
}

// EstimateRun extrapolates the wall time of Run(ctx, cfg, in, opt) from a
// short run of the same code on a subset of the subgraphs (every k-th by
// root, at least one full score batch) with estimateEpochs epochs per
// training stage. Each training stage is split into its training epochs
// and its held-out or validation checks (timed separately): its time is
// the steady per-epoch time scaled by the number of subgraphs it trains
// on, times the epochs, plus the first epoch's warm-up and the clean-up
// after the last (not scaled), plus the measured time per evaluated
// subgraph times the subgraphs the full run's checks cover, plus each
// check's bookkeeping (reporter.timedFixed), not scaled.
// Stages with early stopping are counted at their expected number of
// epochs (expectEpochs for f, expectEpochsUniform for the others; the
// score networks at their full budget) and, in MaxSeconds, at their cap.
//
// The peak memory is extrapolated the same way: the process's resident
// size before the estimate (the input included), plus what the short run
// added at its peak, plus what the full run holds per subgraph beyond the
// short run (runBytes: debiased copies, cached gradients), with the
// collector's headroom (GOGC), but no more than the Go memory limit
// (debug.SetMemoryLimit, GOMEMLIMIT) plus the resident memory outside the
// Go heap at the end of the estimate (a store's block cache, warm after
// the sampling) when a limit is set and the live data fit under it: the
// collector then keeps the heap below the limit.
//
// It takes a few seconds and is meant to be printed before a long run
// starts; it also exercises every stage, so a configuration that would
// fail fails here.
func EstimateRun(ctx context.Context, cfg Config, in *Input, opt *Options) (*Estimate, error) {
	return estimateRun(ctx, cfg, in, opt, 0)
}

// EstimateRunSampled is EstimateRun for a run on total subgraphs of which
// in.Subgraphs are a sample (a seeded sample of a few thousand roots, say).
// Per-subgraph
// shapes and times are measured on the sample and extrapolated linearly to
// total: the stages' subgraph counts, the distinct nodes the linear guides
// fit on (at most in.NumNodes) and the per-subgraph memory. The result's
// Roots and TotalRoots say so. With total ≤ len(in.Subgraphs) it is
// EstimateRun.
func EstimateRunSampled(ctx context.Context, cfg Config, in *Input, opt *Options, total int) (*Estimate, error) {
	return estimateRun(ctx, cfg, in, opt, total)
}

func estimateRun(ctx context.Context, cfg Config, in *Input, opt *Options, total int) (*Estimate, error) {
	start := time.Now()
	if opt == nil {
		opt = &Options{}
	}
	sgs, _, val, _, err := in.validate()
	if err != nil {
		return nil, err
	}
	want := max(estimateRoots, cfg.Score.Batch)
	small := *in
	step := max(1, len(sgs)/want)
	small.Subgraphs = nil
	for i := 0; i < len(sgs) && len(small.Subgraphs) < want; i += step {
		small.Subgraphs = append(small.Subgraphs, sgs[i])
	}
	m, ms := len(sgs), len(small.Subgraphs)
	// grow is the factor from the subgraphs at hand to the full run's.
	grow := 1.0
	if total > m {
		grow = float64(total) / float64(m)
		m = total
	}

	sc := cfg
	sc.Sens.Epochs = min(cfg.Sens.Epochs, estimateEpochs)
	if sc.Sens.Patience > 0 {
		// Keep the held-out split and its checks, never stop.
		sc.Sens.Patience = math.MaxInt32
	}
	sc.Classifier.Patience = 0
	sc.Baseline.Patience = 0
	sc.Classifier.Epochs = min(cfg.Classifier.Epochs, estimateEpochs)
	fCover := 0.0
	if cfg.Classifier.Schedule == ClassBudget {
		// Four passes over the short run's subgraphs with a validation
		// check after every step, never stopping. The full run's checks
		// cover the subgraphs that contain its validation sample: those of
		// the subgraphs at hand, grown with them (a sample of roots holds
		// a node in that share of the subgraphs that hold it).
		nb := max(1, (ms+sc.Classifier.Batch-1)/sc.Classifier.Batch)
		sc.Classifier.Budget = estimateEpochs * nb * sc.Classifier.Batch
		sc.Classifier.Evals = estimateEpochs * nb
		sc.Classifier.EvalPatience = 0
		nodes := fValNodes(val, cfg.Classifier.ValCap, fValRand(&cfg))
		fCover = math.Min(float64(m), float64(len(coveringSubgraphs(sgs, nodes, in.NumNodes)))*grow)
	}
	sc.Baseline.Epochs = min(cfg.Baseline.Epochs, estimateEpochs)
	if cfg.Score.Schedule == ScoreBudget {
		// Four passes over the short run's training subgraphs with a
		// held-out check after each, never stopping.
		p := planScore(&sc.Score, ms)
		sc.Score.Budget = estimateEpochs * len(p.train)
		sc.Score.Evals = estimateEpochs * max(1, (len(p.train)+sc.Score.Batch-1)/sc.Score.Batch)
		sc.Score.Patience = 0
	} else {
		sc.Score.Epochs = estimateEpochs
	}
	// The training-rooted subgraphs, which the probes train on.
	mt, mts := trainRootedCount(in, sgs), trainRootedCount(in, small.Subgraphs)
	if grow > 1 {
		mt = int(math.Round(float64(mt) * grow))
	}
	shapes := estimateShapes(&cfg, &sc, m, ms, mt, mts, fCover)

	type mark struct {
		start time.Time
		ends  []time.Time
		eps   []int // the epoch index of each end
	}
	// One mark per occurrence of a stage (a stage such as fresh_probe can
	// run several times), in the order of res.Timings.
	marks := map[Stage][]*mark{}
	cb := Callbacks{
		StageStart: func(s Stage, _ int) {
			marks[s] = append(marks[s], &mark{start: time.Now()})
		},
		Epoch: func(s Stage, ep int, _, _ float64) {
			if ms := marks[s]; len(ms) > 0 {
				mk := ms[len(ms)-1]
				mk.ends = append(mk.ends, time.Now())
				mk.eps = append(mk.eps, ep)
			}
		},
	}
	var evals []evalTiming
	base := residentBytes()
	peak := newPeakSampler(base)
	res, err := Run(ctx, sc, &small, &Options{Variants: opt.Variants, Diagnostics: opt.Diagnostics, Probe: opt.Probe, Scratch: opt.Scratch,
		Callbacks: cb, evals: &evals})
	peakSmall := peak.stop()
	if err != nil {
		return nil, fmt.Errorf("estimate: %w", err)
	}
	// The short run debiases its few subgraphs in about a tenth of a
	// second, and that time scaled by m/ms would carry the whole stage (on
	// the 1M-node graph it gave 22–30 min between back-to-back estimates
	// of a 22-minute stage); the debiasing is timed apart on more of the
	// subgraphs at hand, with the short run's models.
	debPer, err := debiasPerSubgraph(ctx, res.Models, sgs, in.D, in.Features, cfg.workerCount())
	if err != nil {
		return nil, fmt.Errorf("estimate: debias: %w", err)
	}
	est := &Estimate{Roots: len(sgs), TotalRoots: m}
	seen := map[Stage]int{}
	for _, t := range res.Timings {
		var mk *mark
		if k := seen[t.Stage]; k < len(marks[t.Stage]) {
			mk = marks[t.Stage][k]
		}
		seen[t.Stage]++
		s := StageTiming{Stage: t.Stage, Units: t.Units}
		sh, ok := shapes[t.Stage]
		if !ok || mk == nil || len(mk.ends) < 2 {
			// One pass over the subgraphs (gradients, debiasing,
			// diagnostics): linear in their number.
			f := float64(m) / float64(ms)
			switch t.Stage {
			case StageBaseline, StageFASDGCN, StageFASDProp, StageProp, StageMLP, StageRetune:
				f = 1
			case StageGuides:
				// Full-batch fits over the distinct nodes the
				// subgraphs hold (at most guideMaxNodes), not over
				// the subgraphs.
				if gs := guideNodes(small.Subgraphs); gs > 0 {
					full := min(float64(in.NumNodes), float64(guideNodes(sgs))*grow, guideMaxNodes)
					f = full / float64(min(gs, guideMaxNodes))
				}
			}
			sec := t.Seconds * f
			if t.Stage == StageDebias && debPer > 0 {
				sec = debPer * float64(m)
			}
			if t.Stage == StageDiagnostics {
				// The loss ratio's part covers at most heldOutMax
				// subgraphs (timed apart), the rest all of them.
				var lr time.Duration
				lrN := 0
				for _, e := range evals {
					if e.stage == StageDiagnostics {
						lr, lrN = lr+e.d, lrN+e.n
					}
				}
				if lrN > 0 {
					full := heldOutFull(in, sgs, grow)
					sec = max(0, t.Seconds-lr.Seconds())*f + lr.Seconds()*float64(full)/float64(lrN)
				}
			}
			s.Seconds, s.MaxSeconds = sec, sec
		} else {
			end := mk.start.Add(time.Duration(t.Seconds * float64(time.Second)))
			var evalD time.Duration
			evalN := 0
			// train is the wall time in (a, b] less the evaluations that
			// ended in it; a stage whose checks the shape does not model
			// (the probes: their held-out share scales like their
			// training) keeps them in.
			train := func(a, b time.Time) float64 {
				d := b.Sub(a)
				for _, e := range evals {
					if sh.evalN > 0 && e.stage == t.Stage && e.end.After(a) && !e.end.After(b) {
						d -= e.d
					}
				}
				return max(0, d.Seconds())
			}
			var fixedD time.Duration
			fixedN := 0
			for _, e := range evals {
				if sh.evalN > 0 && e.stage == t.Stage && e.end.After(mk.start) && !e.end.After(end) {
					if e.fixed {
						fixedD += e.d
						fixedN++
						continue
					}
					evalD += e.d
					evalN += e.n
				}
			}
			// The stage may train several times one after the other (the
			// two architectures of classifier.arch = "auto", the two
			// probes): each run restarts its epochs at 0. Per run, the
			// steady epoch is the median of its later epochs, so that one
			// epoch slowed by other work on the machine does not scale up
			// into minutes, and the first epoch's excess over it is
			// warm-up (the tapes' arenas growing, the run's set-up), which
			// does not grow with the subgraphs. The stage's steady epoch
			// is the runs' mean: the full run trains each about as long.
			k := len(mk.ends)
			var pers []float64
			warm := 0.0
			for a := 0; a < k; {
				b := a + 1
				for b < k && mk.eps[b] != 0 {
					b++
				}
				from := mk.start
				if a > 0 {
					from = mk.ends[a-1]
				}
				first := train(from, mk.ends[a])
				steady := make([]float64, 0, b-a-1)
				for i := a + 1; i < b; i++ {
					steady = append(steady, train(mk.ends[i-1], mk.ends[i]))
				}
				per := first
				if len(steady) > 0 {
					per = lowerQuartile(steady)
				}
				pers = append(pers, per)
				warm += max(0, first-per)
				a = b
			}
			per := 0.0
			for _, p := range pers {
				per += p / float64(len(pers))
			}
			rest := train(mk.ends[k-1], end) // clean-up after the last epoch
			perEval, perFixed := 0.0, 0.0
			if evalN > 0 {
				perEval = evalD.Seconds() / float64(evalN)
			}
			if fixedN > 0 {
				perFixed = fixedD.Seconds() / float64(fixedN)
			}
			at := func(epochs, checks float64) float64 {
				return warm + rest + per*epochs*sh.trainScale + (perEval*sh.evalN+perFixed)*checks
			}
			s.Seconds, s.MaxSeconds = at(sh.epochs, sh.checks), at(sh.maxEpochs, sh.maxChecks)
			s.Epochs = int(math.Round(sh.epochs))
		}
		est.Stages = append(est.Stages, s)
		est.Total += time.Duration(s.Seconds * float64(time.Second))
		est.MaxTotal += time.Duration(s.MaxSeconds * float64(time.Second))
	}
	if base > 0 {
		extra := float64(runBytesGrown(&cfg, opt, sgs, in.D, grow, in.NumNodes) - runBytes(&cfg, opt, small.Subgraphs, in.D))
		// The subgraphs not sampled are input the full run holds from
		// the start, as the process's size before a full estimate does
		// (no collector headroom: they are allocated before the run).
		input := int64((grow - 1) * float64(inputBytes(sgs)))
		if grow > 1 && in.Features == nil {
			// A sample that carries its own features stands for a run
			// that holds them once, NumNodes×D (fasd train's).
			input += 4 * int64(in.NumNodes) * int64(in.D)
		}
		est.PeakBytes = peakBytes(peakSmall+input, extra, gcHeadroom(), debug.SetMemoryLimit(-1), outsideGoBytes())
	}
	est.Took = time.Since(start)
	return est, nil
}

// heldOutFull is the number of subgraphs the full run's loss ratio covers
// (heldOut), for grow times as many subgraphs shaped like sgs.
func heldOutFull(in *Input, sgs []*fasd.Subgraph, grow float64) int {
	v := 0
	for _, g := range sgs {
		if in.Split[g.Root()] == fasd.SplitVal {
			v++
		}
	}
	if v == 0 {
		v = len(sgs)
	}
	return min(heldOutMax, int(math.Round(float64(v)*grow)))
}

// trainRootedCount is the number of subgraphs of sgs whose root is in the
// training split of in.
func trainRootedCount(in *Input, sgs []*fasd.Subgraph) int {
	n := 0
	for _, g := range sgs {
		if r := int(g.Root()); r < len(in.Split) && in.Split[r] == fasd.SplitTrain {
			n++
		}
	}
	return n
}

// lowerQuartile returns the lower quartile of xs (which it sorts): the
// (n−1)/4-th smallest.
func lowerQuartile(xs []float64) float64 {
	slices.Sort(xs)
	return xs[(len(xs)-1)/4]
}

// estimateShapes returns the extrapolation shape of every training stage,
// for the full config cfg on m subgraphs and the estimate's config sc on ms;
// fCover is the number of subgraphs one validation of f's budget schedule
// evaluates in the full run.
func estimateShapes(cfg, sc *Config, m, ms, mt, mts int, fCover float64) map[Stage]stageShape {
	out := map[Stage]stageShape{}
	// g_sen: with patience, every 10th subgraph (at most 256) is held out
	// and checked after every epoch.
	held := func(n int) int {
		if cfg.Sens.Patience > 0 && n >= 20 {
			return min(256, n/10)
		}
		return 0
	}
	ge := expectEpochsUniform(cfg.Sens.Epochs, cfg.Sens.Patience)
	hm, hs := held(m), held(ms)
	gs := stageShape{epochs: ge, maxEpochs: float64(cfg.Sens.Epochs), trainScale: float64(m-hm) / float64(ms-hs),
		evalN: float64(hm), checks: ge, maxChecks: float64(cfg.Sens.Epochs)}
	out[StageGSen] = gs
	// Score networks: passes over the training subgraphs; the budget
	// schedule's held-out checks (about Evals of them) over its held-out
	// subgraphs. Early stopping may end it sooner; the estimate counts the
	// whole budget.
	pf, ps := planScore(&cfg.Score, m), planScore(&sc.Score, ms)
	nb := float64((len(pf.train) + cfg.Score.Batch - 1) / cfg.Score.Batch)
	passes := float64(pf.steps) / nb
	checks := 0.0
	if pf.evalEvery > 0 {
		checks = math.Ceil(float64(pf.steps) / float64(pf.evalEvery))
	}
	ss := stageShape{epochs: passes, maxEpochs: passes, trainScale: float64(len(pf.train)) / float64(len(ps.train)),
		evalN: float64(len(pf.held)), checks: checks, maxChecks: checks}
	out[StageScore], out[StageScoreNoFair] = ss, ss
	// f: validation accuracy from every subgraph after every epoch.
	fe := expectEpochs(cfg.Classifier.Epochs, cfg.Classifier.Patience)
	fs := stageShape{epochs: fe, maxEpochs: float64(cfg.Classifier.Epochs), trainScale: float64(m) / float64(ms),
		evalN: float64(m), checks: fe, maxChecks: float64(cfg.Classifier.Epochs)}
	if cfg.Classifier.Schedule == ClassBudget {
		// f's budget schedule: optimizer steps, counted in passes over
		// the subgraphs; every check evaluates the subgraphs covering the
		// validation sample, and one last pass evaluates all m (counted
		// as m/fCover more checks).
		p := planClassifier(&cfg.Classifier, m)
		nb := float64((m + cfg.Classifier.Batch - 1) / cfg.Classifier.Batch)
		steps := expectFSteps(&cfg.Classifier, p)
		cover := math.Max(1, fCover)
		checks := math.Ceil(steps / float64(p.evalEvery))
		fs = stageShape{epochs: steps / nb, maxEpochs: float64(p.steps) / nb, trainScale: float64(m) / float64(ms),
			evalN: cover, checks: checks + float64(m)/cover, maxChecks: float64(p.evals) + float64(m)/cover}
	}
	if Arch(cfg.Classifier.Arch) == ArchAuto { // both architectures, one after the other
		fs.epochs, fs.maxEpochs, fs.checks, fs.maxChecks = 2*fs.epochs, 2*fs.maxEpochs, 2*fs.checks, 2*fs.maxChecks
	}
	out[StageClassifier], out[StageNoDiffusion], out[StageClassNoFair] = fs, fs, fs
	// The GCN trains on the full graph either way.
	be := expectEpochsUniform(cfg.Baseline.Epochs, cfg.Baseline.Patience)
	out[StageBaseline] = stageShape{epochs: be, maxEpochs: float64(cfg.Baseline.Epochs), trainScale: 1}
	out[StageFASDGCN], out[StageMLP] = out[StageBaseline], out[StageBaseline]
	out[StageFASDProp], out[StageProp] = out[StageBaseline], out[StageBaseline]
	if cfg.Classifier.Fallback { // a second GCN on the original features
		out[StageFASDGCN] = stageShape{epochs: 2 * be, maxEpochs: 2 * float64(cfg.Baseline.Epochs), trainScale: 1}
	}
	// The probes train on the training-rooted subgraphs less their own
	// held-out share (g_sen's schedule), whose share of a short run's few
	// subgraphs need not be that of the full run.
	pe := expectEpochsUniform(cfg.Sens.Epochs, cfg.Sens.Patience)
	probeScale := float64(min(m, probeMaxRoots)) / float64(min(ms, probeMaxRoots))
	if mt > 0 && mts > 0 {
		mt, mts = min(mt, probeMaxRoots), min(mts, probeMaxRoots)
		probeScale = float64(mt-held(mt)) / float64(max(1, mts-held(mts)))
	}
	out[StageProbe] = stageShape{epochs: 2 * pe, maxEpochs: 2 * float64(cfg.Sens.Epochs), trainScale: probeScale}
	out[StageFreshProbe] = stageShape{epochs: pe, maxEpochs: float64(cfg.Sens.Epochs), trainScale: probeScale}
	return out
}

// runBytes is the largest amount of per-subgraph data a run on sgs holds
// at once beyond its input: FASD's (also fasd_gcn's and fasd_prop's)
// cached fairness gradients (∇_X for λ_X > 0, ∇_A for λ_A > 0) with,
// first, the linear guides' float64 copy
// of the features of the nodes with known s, then its debiased subgraphs
// and one more debiased copy while a retune setting runs; or w/o
// Fairness's debiased subgraphs (plus a retune copy), which come after
// FASD's are released. A debiased copy is its adjacency, compact with
// weights and counted with the input's entries (the default debiasing
// keeps the edge set), plus, unless opt.Scratch takes them, its features;
// the cached ∇_A is dense.
func runBytes(cfg *Config, opt *Options, sgs []*fasd.Subgraph, d int) int64 {
	return runBytesGrown(cfg, opt, sgs, d, 1, math.MaxInt)
}

// runBytesGrown is runBytes for a run of grow times as many subgraphs
// shaped like sgs, whose linear guides fit on at most maxNodes distinct
// nodes (and never on more than guideMaxNodes).
func runBytesGrown(cfg *Config, opt *Options, sgs []*fasd.Subgraph, d int, grow float64, maxNodes int) int64 {
	var x, a, ad int64
	for _, g := range sgs {
		n := int64(g.N())
		x += 4 * n * int64(d)
		a += 4 * n * n
		ad += 8*int64(adjEntries(g)) + sparseAdjSize
	}
	x, a, ad = int64(float64(x)*grow), int64(float64(a)*grow), int64(float64(ad)*grow)
	deb := ad
	if opt.Scratch == nil {
		deb += x
	}
	copies := int64(1)
	if len(opt.Retune) > 0 {
		copies = 2
	}
	var fasdB, noFair int64
	// fasd_gcn and fasd_prop debias every subgraph as fasd does.
	if opt.wants(VariantFASD) || opt.wants(VariantFASDGCN) || opt.wants(VariantFASDProp) {
		var grads, guides int64
		if cfg.Diffusion.LambdaX > 0 {
			grads += x
		}
		if cfg.Diffusion.LambdaA > 0 {
			grads += a
		}
		rounds, width := guideRounds(cfg), guideWidth(cfg.Debias.GuideNet, d)
		for _, r := range opt.Retune {
			if c, err := r.Apply(*cfg); err == nil {
				rounds = max(rounds, guideRounds(&c))
				if guideRounds(&c) > 0 {
					width = max(width, guideWidth(c.Debias.GuideNet, d))
				}
			}
		}
		if rounds > 0 {
			guides = 8 * int64(width) * int64(min(float64(maxNodes), float64(guideNodes(sgs))*grow, guideMaxNodes))
		}
		fasdB = grads + max(guides, copies*deb)
	}
	if opt.wants(VariantNoFairness) {
		noFair = copies * deb
	}
	return max(fasdB, noFair)
}

// inputBytes is the memory the subgraphs sgs hold as input: adjacency
// (dense or compact), node ids, S, Y, split and the slice headers (their
// features are in Input.Features).
func inputBytes(sgs []*fasd.Subgraph) int64 {
	var b int64
	for _, g := range sgs {
		n := int64(g.N())
		b += 4*int64(len(g.A)) + g.Adj.Bytes() + 4*n + 3*n + int64(len(g.Expanded))*4 + 256
	}
	return b
}

// sparseAdjSize is the size of a fasd.SparseAdj value (N and two slice
// headers), which a view holds per subgraph.
const sparseAdjSize = 56

// adjEntries is the number of non-zero entries of g's adjacency.
func adjEntries(g *fasd.Subgraph) int {
	if g.A == nil {
		return g.Adj.Entries()
	}
	c := 0
	for _, v := range g.A {
		if v != 0 {
			c++
		}
	}
	return c
}

// peakBytes is the estimated peak: the short run's peak plus the full
// run's extra live data with the collector's headroom, capped by the Go
// memory limit (math.MaxInt64: none) plus the resident memory outside the
// Go heap (outside: a store's block cache and write buffers, which the
// limit does not see), unless the live data alone exceed that.
func peakBytes(peakSmall int64, extra, headroom float64, limit, outside int64) int64 {
	p := peakSmall + int64(headroom*extra)
	live := peakSmall + int64(extra)
	if limit < math.MaxInt64 && p > limit+outside {
		p = max(limit+outside, live)
	}
	return p
}

// outsideGoBytes returns the process's resident memory that the Go
// runtime does not manage (cgo allocations such as Pebble's block cache
// and memtables): the resident size less the memory the runtime has
// mapped and not released to the OS; 0 where the resident size is not
// known.
func outsideGoBytes() int64 {
	rss, held := residentBytes(), goHeldBytes()
	if rss <= 0 || held < 0 {
		return 0
	}
	return max(0, rss-held)
}

// goHeldBytes returns the memory the Go runtime has mapped and not
// released to the OS; −1 if the runtime does not report it.
func goHeldBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

// gcHeadroom is the factor by which the Go heap may exceed its live size
// before a collection: 1 + GOGC/100.
func gcHeadroom() float64 {
	v := os.Getenv("GOGC")
	if v == "" {
		return 2
	}
	if p, err := strconv.Atoi(v); err == nil && p > 0 {
		return 1 + float64(p)/100
	}
	return 2 // "off" or invalid: count the default's headroom
}

// residentBytes returns the process's resident memory: VmRSS on Linux,
// else the memory the Go runtime holds from the OS and has not released
// (which misses memory allocated outside Go); 0 if neither is available.
func residentBytes() int64 {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				f := strings.Fields(rest)
				if len(f) == 2 && f[1] == "kB" {
					if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
						return kb << 10
					}
				}
			}
		}
	}
	return max(0, goHeldBytes())
}

// peakSampler samples residentBytes every few milliseconds until stop.
type peakSampler struct {
	mu   sync.Mutex
	peak int64
	done chan struct{}
	wg   sync.WaitGroup
}

func newPeakSampler(start int64) *peakSampler {
	p := &peakSampler{peak: start, done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-tick.C:
				p.observe()
			}
		}
	}()
	return p
}

func (p *peakSampler) observe() {
	b := residentBytes()
	p.mu.Lock()
	p.peak = max(p.peak, b)
	p.mu.Unlock()
}

// stop ends the sampling and returns the peak seen.
func (p *peakSampler) stop() int64 {
	close(p.done)
	p.wg.Wait()
	p.observe()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}
