package pipeline

import (
	"context"
	"fmt"
	"time"
)

// Estimate is an extrapolated wall time per stage of a full run.
type Estimate struct {
	Stages []StageTiming // Seconds extrapolated to the full run
	Total  time.Duration
	// Took is the wall time the estimate itself needed.
	Took time.Duration
}

// estimateRoots is the number of subgraphs the estimate run uses.
const estimateRoots = 48

// EstimateRun extrapolates the wall time of Run(ctx, cfg, in, opt) from a
// short run of the same code: at most 48 subgraphs (every k-th by root) and
// one or two epochs per stage. Each stage's time is scaled by the ratio of
// full to measured work (subgraphs × epochs). It takes a few seconds and
// is meant to be printed before a long run starts; it also exercises every
// stage, so a configuration that would fail fails here.
func EstimateRun(ctx context.Context, cfg Config, in *Input, opt *Options) (*Estimate, error) {
	start := time.Now()
	if opt == nil {
		opt = &Options{}
	}
	sgs, _, _, _, err := in.validate()
	if err != nil {
		return nil, err
	}
	small := *in
	step := max(1, len(sgs)/estimateRoots)
	small.Subgraphs = nil
	for i := 0; i < len(sgs) && len(small.Subgraphs) < estimateRoots; i += step {
		small.Subgraphs = append(small.Subgraphs, sgs[i])
	}
	m, ms := float64(len(sgs)), float64(len(small.Subgraphs))
	sc := cfg
	type ep struct{ full, short int }
	eps := map[Stage]ep{
		StageGSen:        {cfg.Sens.Epochs, min(cfg.Sens.Epochs, 2)},
		StageScore:       {cfg.Score.Epochs, min(cfg.Score.Epochs, 2)},
		StageScoreNoFair: {cfg.Score.Epochs, min(cfg.Score.Epochs, 2)},
		StageClassifier:  {cfg.Classifier.Epochs, min(cfg.Classifier.Epochs, 2)},
		StageNoDiffusion: {cfg.Classifier.Epochs, min(cfg.Classifier.Epochs, 2)},
		StageClassNoFair: {cfg.Classifier.Epochs, min(cfg.Classifier.Epochs, 2)},
		StageBaseline:    {cfg.Baseline.Epochs, min(cfg.Baseline.Epochs, 5)},
		StageProbe:       {cfg.Sens.Epochs, min(cfg.Sens.Epochs, 2)},
	}
	sc.Sens.Epochs = eps[StageGSen].short
	sc.Score.Epochs = eps[StageScore].short
	sc.Classifier.Epochs = eps[StageClassifier].short
	sc.Baseline.Epochs = eps[StageBaseline].short
	res, err := Run(ctx, sc, &small, &Options{Variants: opt.Variants, Diagnostics: opt.Diagnostics})
	if err != nil {
		return nil, fmt.Errorf("estimate: %w", err)
	}
	est := &Estimate{Took: time.Since(start)}
	for _, t := range res.Timings {
		f := m / ms
		if t.Stage == StageBaseline {
			f = 1 // full graph either way
		}
		if e, ok := eps[t.Stage]; ok && e.short > 0 {
			f *= float64(e.full) / float64(e.short)
		}
		s := StageTiming{Stage: t.Stage, Seconds: t.Seconds * f, Units: t.Units}
		est.Stages = append(est.Stages, s)
		est.Total += time.Duration(s.Seconds * float64(time.Second))
	}
	return est, nil
}
