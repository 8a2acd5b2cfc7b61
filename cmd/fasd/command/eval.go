package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/runs"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// EvalOptions are the flags of fasd eval.
type EvalOptions struct {
	DB        string
	Cfg       ConfigOptions
	Seeds     int
	FirstSeed uint64
	Ablations bool
	JSON      bool
	Retune    string
	Variants  []string
}

// AddFlags registers the flags of fasd eval.
func (o *EvalOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DB, "db", "", "store directory (required)")
	o.Cfg.AddFlags(fs)
	fs.IntVar(&o.Seeds, "seeds", 5, "number of runs (seeds first-seed, first-seed+1, …)")
	fs.Uint64Var(&o.FirstSeed, "first-seed", 0, "seed of the first run")
	fs.BoolVar(&o.Ablations, "ablations", false, "also run w/o Diffusion, w/o Fairness and the plain GCN")
	fs.BoolVar(&o.JSON, "json", false, "print the table as JSON")
	fs.StringSliceVar(&o.Variants, "variants", nil, "variants to evaluate instead of fasd (or all four with --ablations): fasd, no_diffusion, no_fairness, gcn")
	fs.StringVar(&o.Retune, "retune", "", "extra debiasing settings evaluated on each run's trained score networks without retraining them:\n"+
		"settings separated by ';', each a comma-separated list of debias.* assignments\n"+
		"(e.g. 'debias.dt_rev=0.05;debias.dt_rev=0.05,debias.steps=10'); reported as variants fasd@… (and no_fairness@… with --ablations)")
}

// EvalStat is one metric of one variant over the runs, ×100.
type EvalStat struct {
	Mean    float64   `json:"mean"`
	Std     float64   `json:"std"`
	PerSeed []float64 `json:"per_seed"`
}

// EvalVariant are the metrics of one variant.
type EvalVariant struct {
	Name string   `json:"name"`
	Acc  EvalStat `json:"acc"`
	DP   EvalStat `json:"dp"`
	EO   EvalStat `json:"eo"`
}

// EvalReport is the output of fasd eval --json: metrics ×100, mean and
// population std over the seeds, plus every seed's value.
type EvalReport struct {
	Preset   string        `json:"preset"`
	Seeds    []uint64      `json:"seeds"`
	Config   string        `json:"config"`
	Variants []EvalVariant `json:"variants"`
	Seconds  float64       `json:"seconds"`
}

// jsonNum maps NaN to a JSON-safe value (null via pointer semantics is not
// needed: NaN only arises with empty groups, reported as -1).
func safe(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return -1
	}
	return x
}

func stat(v []float64) EvalStat {
	s := fasd.Summarize(v)
	out := EvalStat{Mean: safe(s.Mean), Std: safe(s.Std)}
	for _, x := range v {
		out.PerSeed = append(out.PerSeed, safe(x))
	}
	return out
}

func newEvalCommand() *cobra.Command {
	o := &EvalOptions{}
	cmd := &cobra.Command{
		Use:   "eval --db DIR --preset NAME [--seeds 5] [--ablations] [--json]",
		Short: "Evaluate FASD over several seeds (Table 1: Acc, ΔDP, ΔEO ×100, mean (std))",
		Long: `Eval runs the pipeline once per seed (nothing is stored) and prints Acc, ΔDP
and ΔEO on the test nodes ×100 as mean (population std), like the paper's
Table 1, with per-seed values. With --ablations it also runs w/o Diffusion,
w/o Fairness and a plain full-graph 2-layer GCN on the same subgraphs and
seeds. A time estimate is printed before the runs start.

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if o.DB == "" {
				return usagef("eval: --db DIR is required")
			}
			if o.Seeds < 1 {
				return usagef("eval: --seeds %d, want ≥ 1", o.Seeds)
			}
			cfg, err := o.Cfg.build(cmd)
			if err != nil {
				return err
			}
			variants := []pipeline.Variant{pipeline.VariantFASD}
			if o.Ablations {
				variants = pipeline.Variants()
			}
			if len(o.Variants) > 0 {
				if o.Ablations {
					return usagef("eval: --variants and --ablations exclude each other")
				}
				if variants, err = parseVariants(o.Variants); err != nil {
					return err
				}
			}
			var retune []pipeline.Retune
			if o.Retune != "" {
				if retune, err = pipeline.ParseRetune(o.Retune); err != nil {
					return usagef("eval: --retune: %v", err)
				}
				// Fail now, not after the first run's score training.
				for _, r := range retune {
					if _, err := r.Apply(cfg); err != nil {
						return usagef("eval: --retune: %v", err)
					}
				}
			}
			report := append([]pipeline.Variant(nil), variants...)
			for _, v := range []pipeline.Variant{pipeline.VariantFASD, pipeline.VariantNoFairness} {
				if !slices.Contains(variants, v) {
					continue
				}
				for _, r := range retune {
					report = append(report, pipeline.Variant(string(v)+"@"+r.Label()))
				}
			}
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			fmt.Fprintf(errOut, "# effective config\n%s\n", cfg.TOML())
			s, g, err := openGraph(o.DB)
			if err != nil {
				return fmt.Errorf("eval: %w", err)
			}
			defer func() { err = errors.Join(err, s.Close()) }()
			start := time.Now()
			rep := EvalReport{Preset: cfg.Preset, Config: cfg.TOML()}
			vals := map[pipeline.Variant][3][]float64{}
			for k := 0; k < o.Seeds; k++ {
				c := cfg
				c.Seed = o.FirstSeed + uint64(k)
				rep.Seeds = append(rep.Seeds, c.Seed)
				fmt.Fprintf(errOut, "seed %d (%d of %d)\n", c.Seed, k+1, o.Seeds)
				sp := &stageProgress{w: errOut}
				topt := &runs.TrainOptions{Variants: variants, NoSave: true, Retune: retune, Callbacks: sp.callbacks()}
				if k == 0 {
					topt.Estimated = func(est *pipeline.Estimate) { printEstimate(errOut, est, o.Seeds) }
				}
				_, res, err := runs.Train(cmd.Context(), g, c, topt)
				if err != nil {
					return fmt.Errorf("eval seed %d: %w", c.Seed, err)
				}
				for _, v := range res.Variants {
					a := vals[v.Variant]
					a[0] = append(a[0], 100*float64(v.Test.Acc))
					a[1] = append(a[1], 100*float64(v.Test.DP))
					a[2] = append(a[2], 100*float64(v.Test.EO))
					vals[v.Variant] = a
					fmt.Fprintf(errOut, "  %-14s acc %s dp %s eo %s\n", v.Variant, pct(v.Test.Acc), pct(v.Test.DP), pct(v.Test.EO))
				}
			}
			rep.Seconds = time.Since(start).Seconds()
			for _, v := range report {
				a := vals[v]
				rep.Variants = append(rep.Variants, EvalVariant{Name: string(v), Acc: stat(a[0]), DP: stat(a[1]), EO: stat(a[2])})
			}
			if o.JSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			printEvalTable(out, &rep)
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func printEvalTable(w io.Writer, r *EvalReport) {
	fmt.Fprintf(w, "preset %s, seeds %v (×100, mean (population std))\n\n", r.Preset, r.Seeds)
	width := 14
	for _, v := range r.Variants {
		width = max(width, len(v.Name))
	}
	fmt.Fprintf(w, "%-*s %-15s %-15s %-15s\n", width, "variant", "Acc", "ΔDP", "ΔEO")
	ms := func(s EvalStat) string { return fmt.Sprintf("%.2f (%.2f)", s.Mean, s.Std) }
	for _, v := range r.Variants {
		fmt.Fprintf(w, "%-*s %-15s %-15s %-15s\n", width, v.Name, ms(v.Acc), ms(v.DP), ms(v.EO))
	}
	fmt.Fprintf(w, "\nper seed (Acc/ΔDP/ΔEO)\n")
	for _, v := range r.Variants {
		fmt.Fprintf(w, "%-*s", width, v.Name)
		for i := range v.Acc.PerSeed {
			fmt.Fprintf(w, "  %.1f/%.1f/%.1f", v.Acc.PerSeed[i], v.DP.PerSeed[i], v.EO.PerSeed[i])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\ntotal %.1fs\n", r.Seconds)
}
