package pipeline

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Estimate is an extrapolated wall time per stage of a full run.
type Estimate struct {
	Stages []StageTiming // Seconds extrapolated to the full run
	Total  time.Duration
	// Took is the wall time the estimate itself needed.
	Took time.Duration
}

// estimateRoots is the minimum number of subgraphs the estimate run uses
// (at least one full score batch is used as well).
const estimateRoots = 48

// estimateEpochs is the number of epochs each training stage runs in the
// estimate; the first one carries the warm-up, the others give the steady
// per-epoch time.
const estimateEpochs = 3

// EstimateRun extrapolates the wall time of Run(ctx, cfg, in, opt) from a
// short run of the same code on a subset of the subgraphs (every k-th by
// root, at least one full score batch) with three epochs per training
// stage: a stage's time is its first epoch plus the steady per-epoch time
// for the remaining epochs, scaled by full/measured subgraphs. It takes a
// few seconds and is meant to be printed before a long run starts; it also
// exercises every stage, so a configuration that would fail fails here.
func EstimateRun(ctx context.Context, cfg Config, in *Input, opt *Options) (*Estimate, error) {
	start := time.Now()
	if opt == nil {
		opt = &Options{}
	}
	sgs, _, _, _, err := in.validate()
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
	m, ms := float64(len(sgs)), float64(len(small.Subgraphs))
	// full is each training stage's length in passes over the subgraphs
	// (epochs): the budget schedule's subgraph-steps count as
	// budget/(trained subgraphs) passes.
	scoreEpochs := float64(cfg.Score.Epochs)
	if cfg.Score.Schedule == ScoreBudget {
		p := planScore(&cfg.Score, len(sgs))
		nb := (len(p.train) + cfg.Score.Batch - 1) / cfg.Score.Batch
		scoreEpochs = float64(p.steps) / float64(nb)
	}
	// Stages with early stopping are expected to stop after about 1.5×
	// their patience (patience epochs after a best epoch that tends to come
	// early), never after more than their epoch cap.
	expect := func(epochs, patience int) float64 {
		if patience > 0 {
			return math.Min(float64(epochs), 1.5*float64(patience))
		}
		return float64(epochs)
	}
	fe := expect(cfg.Classifier.Epochs, cfg.Classifier.Patience)
	full := map[Stage]float64{
		StageGSen: expect(cfg.Sens.Epochs, cfg.Sens.Patience), StageScore: scoreEpochs, StageScoreNoFair: scoreEpochs,
		StageClassifier: fe, StageNoDiffusion: fe, StageClassNoFair: fe,
		StageBaseline:   expect(cfg.Baseline.Epochs, cfg.Baseline.Patience),
		StageProbe:      2 * expect(cfg.Sens.Epochs, cfg.Sens.Patience),
		StageFreshProbe: expect(cfg.Sens.Epochs, cfg.Sens.Patience),
	}
	sc := cfg
	sc.Sens.Epochs = min(cfg.Sens.Epochs, estimateEpochs)
	sc.Sens.Patience = 0
	sc.Classifier.Patience = 0
	sc.Baseline.Patience = 0
	sc.Score.Schedule = ScoreEpochs
	sc.Score.Epochs = min(max(cfg.Score.Epochs, estimateEpochs), estimateEpochs)
	sc.Classifier.Epochs = min(cfg.Classifier.Epochs, estimateEpochs)
	sc.Baseline.Epochs = min(cfg.Baseline.Epochs, estimateEpochs)
	type mark struct {
		start time.Time
		ends  []time.Time
	}
	// One mark per occurrence of a stage (a stage such as fresh_probe can
	// run several times), in the order of res.Timings.
	marks := map[Stage][]*mark{}
	cb := Callbacks{
		StageStart: func(s Stage, _ int) {
			marks[s] = append(marks[s], &mark{start: time.Now()})
		},
		Epoch: func(s Stage, _ int, _, _ float64) {
			if ms := marks[s]; len(ms) > 0 {
				mk := ms[len(ms)-1]
				mk.ends = append(mk.ends, time.Now())
			}
		},
	}
	res, err := Run(ctx, sc, &small, &Options{Variants: opt.Variants, Diagnostics: opt.Diagnostics, Probe: opt.Probe, Callbacks: cb})
	if err != nil {
		return nil, fmt.Errorf("estimate: %w", err)
	}
	est := &Estimate{Took: time.Since(start)}
	seen := map[Stage]int{}
	for _, t := range res.Timings {
		f := m / ms
		if t.Stage == StageBaseline {
			f = 1 // full graph either way
		}
		secs := t.Seconds
		var mk *mark
		if k := seen[t.Stage]; k < len(marks[t.Stage]) {
			mk = marks[t.Stage][k]
		}
		seen[t.Stage]++
		if mk != nil && len(mk.ends) >= 2 && full[t.Stage] > 0 {
			first := mk.ends[0].Sub(mk.start).Seconds()
			per := mk.ends[len(mk.ends)-1].Sub(mk.ends[0]).Seconds() / float64(len(mk.ends)-1)
			secs = first + per*(full[t.Stage]-1)
			if t.Stage == StageProbe {
				// Two probes share the stage: per covers both.
				secs = first + per*(full[t.Stage]-2)
			}
		}
		s := StageTiming{Stage: t.Stage, Seconds: secs * f, Units: t.Units}
		est.Stages = append(est.Stages, s)
		est.Total += time.Duration(s.Seconds * float64(time.Second))
	}
	return est, nil
}
