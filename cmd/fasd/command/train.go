package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/internal/progress"
	"github.com/fasd-db/fasd/runs"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ConfigOptions are the flags that build a pipeline config: a preset, an
// optional TOML file and dotted-key overrides, applied in that order (the
// seed flag last).
type ConfigOptions struct {
	Preset string
	Config string
	Sets   []string
	Seed   uint64
	// MaxTime refuses a run whose printed estimate exceeds it (0: no
	// limit).
	MaxTime time.Duration
	// MaxMemory refuses a run whose estimated peak memory exceeds it (0:
	// no limit).
	MaxMemory ByteSize
}

// checkLimits returns an error when times runs of the estimate would take
// longer than --max-time or one run would need more memory than
// --max-memory.
func (o *ConfigOptions) checkLimits(est *pipeline.Estimate, times int) error {
	if err := checkMaxTime(est, times, o.MaxTime); err != nil {
		return err
	}
	if o.MaxMemory > 0 && est.PeakBytes > int64(o.MaxMemory) {
		return fmt.Errorf("the memory estimate, %s, exceeds --max-memory %s: nothing was trained; shrink the run (fewer or smaller subgraphs, e.g. --set sample.max_nodes=N, fewer variants) or raise --max-memory",
			ByteSize(est.PeakBytes), o.MaxMemory)
	}
	return nil
}

// checkMaxTime returns an error when times runs of the estimate would take
// longer than max (0: no limit).
func checkMaxTime(est *pipeline.Estimate, times int, max time.Duration) error {
	total := est.Total * time.Duration(times)
	if max <= 0 || total <= max {
		return nil
	}
	return fmt.Errorf("the estimate, %s, exceeds --max-time %s: nothing was trained; shorten the run (e.g. --set score.budget=N, fewer --seeds or variants) or raise --max-time",
		total.Round(time.Second), max)
}

// AddFlags registers the config flags.
func (o *ConfigOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Preset, "preset", pipeline.DefaultPreset, "hyper-parameter preset: "+strings.Join(pipeline.Presets(), ", ")+
		" ("+pipeline.DefaultPreset+": budgeted training sized from the graph, for any graph; the others reproduce the paper)")
	fs.StringVar(&o.Config, "config", "", "TOML file overriding preset values")
	fs.DurationVar(&o.MaxTime, "max-time", 0, "refuse to start when the time estimate exceeds this (e.g. 30m; 0: no limit)")
	fs.Var(&o.MaxMemory, "max-memory", "refuse to start when the estimated peak memory (resident) exceeds this, and keep the Go heap under it (a soft limit; GOMEMLIMIT wins) (e.g. 1GiB, 512MiB, 800MB; 0: no limit)")
	fs.StringArrayVar(&o.Sets, "set", nil, "override one value, key=value (repeatable), e.g. score.epochs=100")
}

// build returns the validated effective config.
func (o *ConfigOptions) build(cmd *cobra.Command) (pipeline.Config, error) {
	if o.Preset == "" {
		o.Preset = pipeline.DefaultPreset
	}
	cfg, err := pipeline.Preset(o.Preset)
	if err != nil {
		return cfg, &UsageError{Err: err}
	}
	if o.Config != "" {
		f, err := os.Open(o.Config)
		if err != nil {
			return cfg, &UsageError{Err: fmt.Errorf("--config: %w", err)}
		}
		err = cfg.LoadTOML(o.Config, f)
		f.Close()
		if err != nil {
			return cfg, &UsageError{Err: err}
		}
	}
	for _, kv := range o.Sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return cfg, usagef("--set %q: want key=value", kv)
		}
		if err := cfg.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return cfg, &UsageError{Err: err}
		}
	}
	if f := cmd.Flags().Lookup("seed"); f != nil && f.Changed {
		cfg.Seed = o.Seed
	}
	if err := cfg.Validate(); err != nil {
		return cfg, &UsageError{Err: err}
	}
	return cfg, nil
}

// stageProgress draws one progress bar per stage on errOut (on a log file
// or pipe, a line every 30 s; nothing on other writers) and prints stage
// times and estimates as plain lines.
type stageProgress struct {
	w      io.Writer
	bar    *progress.Bar
	quiet  bool
	epochs int // epochs (passes) of the current stage so far
}

func (p *stageProgress) callbacks() pipeline.Callbacks {
	return pipeline.Callbacks{
		StageStart: func(s pipeline.Stage, total int) {
			p.bar = progress.New(p.w, string(s), int64(total), nil)
			p.epochs = 0
		},
		Epoch: func(pipeline.Stage, int, float64, float64) { p.epochs++ },
		Progress: func(_ pipeline.Stage, done, _ int) {
			if p.bar != nil {
				p.bar.Set(int64(done))
			}
		},
		Estimate: func(s pipeline.Stage, d time.Duration) {
			if p.bar != nil && p.bar.Enabled() {
				return // the bar shows its own ETA
			}
			if !p.quiet {
				fmt.Fprintf(p.w, "  %s: about %s\n", s, d.Round(time.Second))
			}
		},
		StageEnd: func(s pipeline.Stage, d time.Duration) {
			crashPoint(string(s))
			if p.bar != nil {
				// A bar that logs gets no last line: the stage's own
				// line below says it.
				if p.bar.Enabled() {
					p.bar.Finish()
				}
				p.bar = nil
			}
			if !p.quiet {
				if p.epochs > 0 {
					fmt.Fprintf(p.w, "  %-18s done in %s (%d epochs)\n", s, d.Round(10*time.Millisecond), p.epochs)
				} else {
					fmt.Fprintf(p.w, "  %-18s done in %s\n", s, d.Round(10*time.Millisecond))
				}
			}
		},
	}
}

func printEstimate(w io.Writer, est *pipeline.Estimate, times int) {
	// With several runs (fasd eval's seeds) every line is the sum over
	// them, and the header says so: the per-stage progress lines that
	// follow are per run.
	what := "time estimate"
	if times > 1 {
		what = fmt.Sprintf("time estimate for %d runs (each line: %d × one run)", times, times)
	}
	from := "a short run of every stage"
	if est.Roots < est.TotalRoots {
		from = fmt.Sprintf("extrapolated from %d of %d roots, a short run of every stage", est.Roots, est.TotalRoots)
	}
	fmt.Fprintf(w, "%s (%s, %s):\n", what, from, est.Took.Round(100*time.Millisecond))
	secs := func(x float64) time.Duration {
		return roundEstimate(time.Duration(x*float64(time.Second)) * time.Duration(times))
	}
	for _, s := range est.Stages {
		line := fmt.Sprintf("  %-18s %s", s.Stage, secs(s.Seconds))
		if s.MaxSeconds > s.Seconds*1.01 {
			if s.Epochs > 0 {
				line += fmt.Sprintf(" (about %d epochs with early stopping; at most %s)", s.Epochs, secs(s.MaxSeconds))
			} else { // less than half a pass (f's budget schedule on a large graph)
				line += fmt.Sprintf(" (with early stopping; at most %s)", secs(s.MaxSeconds))
			}
		}
		fmt.Fprintln(w, line)
	}
	total := fmt.Sprintf("  %-18s %s", "total", roundEstimate(est.Total*time.Duration(times)))
	if est.MaxTotal > est.Total*101/100 {
		total += fmt.Sprintf(" (at most %s)", roundEstimate(est.MaxTotal*time.Duration(times)))
	}
	fmt.Fprintln(w, total)
	if est.PeakBytes > 0 {
		fmt.Fprintf(w, "  %-18s %s\n", "peak memory", ByteSize(est.PeakBytes))
	}
}

// budgetHintAfter is how long f's stages must be estimated to take, in
// all, before printBudgetHint suggests f's budget schedule.
const budgetHintAfter = time.Hour

// printBudgetHint prints a hint after the estimate when f trains by full
// passes (classifier.schedule = "epochs") and f's stages (f and the
// ablations' classifiers) take at least budgetHintAfter and half of the
// run: the budget schedule is then the lever, at a cost in accuracy on
// some graphs that the hint names (RESULTS.md), which is why it is an
// option and not chosen silently.
func printBudgetHint(w io.Writer, est *pipeline.Estimate, cfg *pipeline.Config) {
	if cfg.Classifier.Schedule != pipeline.ClassEpochs || est.TotalRoots == 0 {
		return
	}
	var f float64
	for _, s := range est.Stages {
		switch s.Stage {
		case pipeline.StageClassifier, pipeline.StageNoDiffusion, pipeline.StageClassNoFair:
			f += s.Seconds
		}
	}
	if f < budgetHintAfter.Seconds() || f < est.Total.Seconds()/2 {
		return
	}
	m := est.TotalRoots
	b := pipeline.ClassifierBudget(m, cfg.Classifier.Batch, cfg.Classifier.Epochs)
	fmt.Fprintf(w, "  hint: f's stages are %s of this, each pass visiting all %d subgraphs; "+
		"--set classifier.schedule=budget trains f for %d subgraph-steps (%.1f passes) with early stopping instead "+
		"(an option: it has cost accuracy on some graphs; docs/results/studies.md, \"f's budget schedule\")\n",
		roundEstimate(time.Duration(f*float64(time.Second))), m, b, float64(b)/float64(m))
}

// roundEstimate rounds a printed estimate to whole seconds, or to a tenth
// of a second below 10 s, so that short stages (most of an NBA run) can be
// compared with the measured times that follow.
func roundEstimate(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// TrainOptions are the flags of fasd train.
type TrainOptions struct {
	DB          string
	Cfg         ConfigOptions
	Variants    []string
	Diagnostics bool
	NoSave      bool
	Spill       bool
	JSON        bool
	// EstimateOnly prints the time estimate and stops before the run.
	EstimateOnly bool
}

// AddFlags registers the flags of fasd train.
func (o *TrainOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DB, "db", "", "store directory, or postgres:// DSN of a store on PostgreSQL (required)")
	o.Cfg.AddFlags(fs)
	fs.Uint64Var(&o.Cfg.Seed, "seed", 0, "run seed (overrides the config)")
	fs.StringSliceVar(&o.Variants, "variants", []string{string(pipeline.VariantFASD), string(pipeline.VariantNoDiffusion)}, "variants to evaluate: "+variantList(pipeline.Variants()))
	fs.BoolVar(&o.Diagnostics, "diagnostics", true, "compute the §14 diagnostics")
	addSpillFlag(fs, &o.Spill)
	fs.BoolVar(&o.NoSave, "no-save", false, "do not persist models and run record")
	fs.BoolVar(&o.JSON, "json", false, "print the run record as JSON")
	fs.BoolVar(&o.EstimateOnly, "estimate-only", false, "print the time estimate and stop (it samples 2000 seeded roots and extrapolates to all of them)")
}

var errEstimateOnly = errors.New("estimate only")

// addSpillFlag registers --spill.
func addSpillFlag(fs *pflag.FlagSet, spill *bool) {
	fs.BoolVar(spill, "spill", true, "keep the debiased features in a temporary file (in $TMPDIR, removed at once) instead of memory; "+
		"same results, less memory on large graphs (--spill=false keeps them in memory)")
}

// scratchFor returns the pipeline's scratch for --spill.
func scratchFor(spill bool) func() (pipeline.Scratch, error) {
	if !spill {
		return nil
	}
	return runs.TempScratch("")
}

// variantList lists the variant names for help text and errors.
func variantList(known []pipeline.Variant) string {
	var names []string
	for _, v := range known {
		names = append(names, string(v))
	}
	return strings.Join(names, ", ")
}

// parseVariants maps names to variants among known.
func parseVariants(names []string, known []pipeline.Variant) ([]pipeline.Variant, error) {
	var out []pipeline.Variant
	for _, n := range names {
		ok := false
		for _, v := range known {
			if string(v) == n {
				out, ok = append(out, v), true
			}
		}
		if !ok {
			return nil, usagef("unknown variant %q (known: %s)", n, variantList(known))
		}
	}
	return out, nil
}

func newTrainCommand() *cobra.Command {
	o := &TrainOptions{}
	cmd := &cobra.Command{
		Use:   "train --db DIR [--profile NAME] [--seed S] [--config F.toml] [--set key=val ...]",
		Short: "Train FASD (g_sen, score networks, debiasing, classifier) and store the models",
		Long: `Train runs the FASD pipeline on the stored graph: it samples one subgraph per
labelled node, trains g_sen, the fairness-aware score networks and the
classifier on the debiased subgraphs, evaluates Acc, ΔDP and ΔEO on the test
nodes, and stores the models and a run record in the store (see runs.Save).
The effective config is printed first, then a time estimate from a short run
of every stage.

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if o.DB == "" {
				return usagef("train: --db DIR is required")
			}
			cfg, err := o.Cfg.build(cmd)
			if err != nil {
				return err
			}
			variants, err := parseVariants(o.Variants, pipeline.Variants())
			if err != nil {
				return err
			}
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			fmt.Fprintf(errOut, "# effective config\n%s\n", cfg.TOML())
			defer o.Cfg.applyMaxMemory(cmd.Context(), errOut)()
			s, g, err := openGraph(cmd.Context(), o.DB)
			if err != nil {
				return fmt.Errorf("train: %w", err)
			}
			defer func() { err = errors.Join(err, s.Close()) }()
			sp := &stageProgress{w: errOut}
			ctx, cancel := context.WithCancelCause(cmd.Context())
			defer cancel(nil)
			rec, res, err := runs.Train(ctx, g, cfg, &runs.TrainOptions{
				Variants: variants, Diagnostics: o.Diagnostics, NoSave: o.NoSave, Callbacks: sp.callbacks(), Scratch: scratchFor(o.Spill),
				EstimateOnly: o.EstimateOnly,
				Choosing: func(ch *pipeline.ScopeChoice) {
					fmt.Fprintf(errOut, "scope: choosing (the labels' group-rate ratio %.2f allows the wide scope): "+
						"training %s on the full graph…\n", float64(ch.LabelRatio), ch.NetsPhrase())
				},
				Sampled: func(in *pipeline.Input, d time.Duration) {
					if in.Scope != nil {
						fmt.Fprintf(errOut, "scope: %s\n", in.Scope)
					}
					fmt.Fprintf(errOut, "sampled %d subgraphs in %s", len(in.Subgraphs), d.Round(time.Millisecond))
					if in.Scope != nil && in.Scope.Nets > 0 {
						fmt.Fprint(errOut, " (the scope choice included)")
					}
					fmt.Fprintln(errOut)
				},
				Estimated: func(est *pipeline.Estimate) {
					printEstimate(errOut, est, 1)
					printBudgetHint(errOut, est, &cfg)
					if err := o.Cfg.checkLimits(est, 1); err != nil {
						cancel(err)
						return
					}
					if o.EstimateOnly {
						cancel(errEstimateOnly)
					}
				},
			})
			if o.EstimateOnly && errors.Is(context.Cause(ctx), errEstimateOnly) {
				return nil
			}
			if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, errEstimateOnly) {
				return fmt.Errorf("train: %w", cause)
			}
			if err != nil {
				return fmt.Errorf("train: %w", err)
			}
			if o.JSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rec)
			}
			printRun(out, rec, res)
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func pct(x pipeline.Num) string {
	if math.IsNaN(float64(x)) {
		return "NaN"
	}
	return fmt.Sprintf("%.2f", 100*float64(x))
}

func printRun(w io.Writer, rec *runs.Record, res *pipeline.Result) {
	if rec.ID != 0 {
		fmt.Fprintf(w, "run %d (seed %d, graph version %d, models %d bytes)\n", rec.ID, rec.Seed, rec.GraphVersion, rec.ModelBytes)
	} else {
		fmt.Fprintf(w, "run not saved (seed %d, graph version %d)\n", rec.Seed, rec.GraphVersion)
	}
	fmt.Fprintf(w, "subgraphs %d, mean %.1f nodes, %.1f edges\n\n", res.NumSubgraphs, res.MeanNodes, res.MeanEdges)
	fmt.Fprintf(w, "%-14s %7s %7s %7s %7s  %s\n", "variant", "Acc", "ΔDP", "ΔEO", "valAcc", "epoch")
	for _, v := range res.Variants {
		fmt.Fprintf(w, "%-14s %7s %7s %7s %7s  %d\n", v.Variant, pct(v.Test.Acc), pct(v.Test.DP), pct(v.Test.EO), pct(v.ValAcc), v.BestEpoch)
	}
	for _, v := range res.Variants {
		if v.FellBack && v.Variant == pipeline.VariantFASD {
			fmt.Fprintf(w, "\nfasd fell back to w/o Diffusion (classifier.fallback_fasd = %q): the validation nodes did not\n"+
				"show the debiased classifier fair enough, so the models serve w/o Diffusion's classifier on the\n"+
				"clean subgraphs.\n", res.Config.Classifier.FallbackFASD)
		}
	}
	fmt.Fprintf(w, "\nper group (s=0 | s=1): acc, positive rate, TPR\n")
	for _, v := range res.Variants {
		g0, g1 := v.Test.Groups[0], v.Test.Groups[1]
		fmt.Fprintf(w, "%-14s %s %s %s | %s %s %s\n", v.Variant, pct(g0.Acc), pct(g0.PosRate), pct(g0.TPR), pct(g1.Acc), pct(g1.PosRate), pct(g1.TPR))
	}
	if dg := res.Diagnostics; dg != nil {
		fmt.Fprintf(w, "\ndiagnostics (validation-rooted subgraphs)\n")
		if dg.GSenOrig != nil && dg.GSenDeb != nil {
			fmt.Fprintf(w, "  g_sen frozen: acc %s → %s, AUC %.3f → %.3f, L_sen %.3f → %.3f\n", pct(dg.GSenOrig.Acc), pct(dg.GSenDeb.Acc),
				dg.GSenOrig.AUC, dg.GSenDeb.AUC, dg.GSenOrig.Loss, dg.GSenDeb.Loss)
		}
		fmt.Fprintf(w, "  fresh probe:  acc %s → %s, AUC %.3f → %.3f\n", pct(dg.ProbeOrig.Acc), pct(dg.ProbeDeb.Acc), dg.ProbeOrig.AUC, dg.ProbeDeb.AUC)
		e := dg.Edits
		fmt.Fprintf(w, "  edits: ‖X̃−X‖/‖X‖ %.4f (rmse %.4f); edges kept %d, removed %d, added %d of %d\n",
			e.FeatureChange, e.FeatureRMSE, e.EdgesKept, e.EdgesRemoved, e.EdgesAdded, e.EdgesOrig)
		if dg.LossRatio != nil {
			fmt.Fprintf(w, "  held-out R per t bin  X: %v  A: %v\n", fmtBins(dg.LossRatio.RX[:]), fmtBins(dg.LossRatio.RA[:]))
		}
		switch {
		case res.Score == nil:
		case res.Config.Diffusion.LambdaX == 0 && res.Config.Diffusion.LambdaA == 0:
			// With λ = 0 (the default profile) the forward SDE carries no
			// fairness term: every bin would print NaN.
			fmt.Fprintf(w, "  ‖γG‖/‖σε‖: none (diffusion.lambda_x = lambda_a = 0: no fairness term in the forward SDE)\n")
		default:
			fmt.Fprintf(w, "  ‖γG‖/‖σε‖ per t bin   X: %v  A: %v\n", fmtBins(res.Score.RatioX[:]), fmtBins(res.Score.RatioA[:]))
		}
	}
	fmt.Fprintf(w, "\nstage times\n")
	for _, t := range res.Timings {
		fmt.Fprintf(w, "  %-18s %9.2fs\n", t.Stage, t.Seconds)
	}
}

func fmtBins(v []pipeline.Num) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.3g", float64(x))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
