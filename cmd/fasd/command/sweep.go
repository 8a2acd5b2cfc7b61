package command

import (
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/runs"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// SweepOptions are the flags of fasd sweep.
type SweepOptions struct {
	DB      string
	Cfg     ConfigOptions
	Steps   []int
	Lambdas []float64
	Out     string
	Format  string
	Spill   bool
}

// AddFlags registers the flags of fasd sweep.
func (o *SweepOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DB, "db", "", "store directory, or postgres:// DSN of a store on PostgreSQL (required)")
	o.Cfg.AddFlags(fs)
	fs.Uint64Var(&o.Cfg.Seed, "seed", 0, "run seed (overrides the config)")
	fs.IntSliceVar(&o.Steps, "steps", []int{1, 2, 3, 5, 8}, "N_steps values")
	fs.Float64SliceVar(&o.Lambdas, "lambdas", []float64{0, 0.1, 1, 10}, "λ values (λ_X = λ_A)")
	fs.StringVar(&o.Out, "out", "sweep", "output directory for sweep.csv and the plots")
	fs.StringVar(&o.Format, "format", "svg", "plot format: svg or png")
	addSpillFlag(fs, &o.Spill)
}

func newSweepCommand() *cobra.Command {
	o := &SweepOptions{}
	cmd := &cobra.Command{
		Use:   "sweep --db DIR [--profile NAME] [--steps 1,2,3,5,8] [--lambdas 0,0.1,1,10] [--out DIR]",
		Short: "Sensitivity over N_steps and λ: Accuracy-vs-ΔDP/ΔEO plots and CSV",
		Long: `Sweep trains g_sen once, the score networks once per λ, and debiases and
trains f for every N_steps, all with one seed; it writes sweep.csv and the
plots acc_vs_dp and acc_vs_eo (SVG or PNG) into --out, like the paper's
Figures 2 and 3.

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if o.DB == "" {
				return usagef("sweep: --db DIR is required")
			}
			if o.Format != "svg" && o.Format != "png" {
				return usagef("sweep: --format %q, want svg or png", o.Format)
			}
			if len(o.Steps) == 0 || len(o.Lambdas) == 0 {
				return usagef("sweep: need at least one --steps and one --lambdas value")
			}
			cfg, err := o.Cfg.build(cmd)
			if err != nil {
				return err
			}
			for _, s := range o.Steps {
				c := cfg
				c.Debias.Steps = s
				if err := c.Validate(); err != nil {
					return &UsageError{Err: err}
				}
			}
			errOut := cmd.ErrOrStderr()
			fmt.Fprintf(errOut, "# effective config\n%s\n", cfg.TOML())
			fmt.Fprintf(errOut, "sweep: %d λ values × %d N_steps values; score training runs %d times (%s each)\n",
				len(o.Lambdas), len(o.Steps), len(o.Lambdas), scoreScheduleText(&cfg))
			s, g, err := openGraph(cmd.Context(), o.DB)
			if err != nil {
				return fmt.Errorf("sweep: %w", err)
			}
			defer func() { err = errors.Join(err, s.Close()) }()
			sp := &stageProgress{w: errOut}
			pts, err := runs.Sweep(cmd.Context(), g, cfg, o.Steps, o.Lambdas, &pipeline.Options{Callbacks: sp.callbacks(), Scratch: scratchFor(o.Spill)})
			if err != nil {
				return fmt.Errorf("sweep: %w", err)
			}
			if err := os.MkdirAll(o.Out, 0o755); err != nil {
				return fmt.Errorf("sweep: %w", err)
			}
			if err := writeSweepCSV(filepath.Join(o.Out, "sweep.csv"), pts); err != nil {
				return fmt.Errorf("sweep: %w", err)
			}
			for _, m := range []string{"dp", "eo"} {
				if err := plotSweep(filepath.Join(o.Out, "acc_vs_"+m+"."+o.Format), pts, m, o.Lambdas); err != nil {
					return fmt.Errorf("sweep: %w", err)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%-8s %-6s %7s %7s %7s %7s\n", "lambda", "steps", "Acc", "ΔDP", "ΔEO", "‖ΔX‖")
			for _, p := range pts {
				fmt.Fprintf(cmd.OutOrStdout(), "%-8g %-6d %7s %7s %7s %7.4f\n", p.Lambda, p.Steps, pct(p.Result.Test.Acc), pct(p.Result.Test.DP),
					pct(p.Result.Test.EO), float64(p.Edits.FeatureChange))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", o.Out)
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// scoreScheduleText describes one score training of cfg.
func scoreScheduleText(cfg *pipeline.Config) string {
	sc := cfg.Score
	if sc.Schedule != pipeline.ScoreBudget {
		return fmt.Sprintf("%d epochs", sc.Epochs)
	}
	b := "a budget of subgraph-steps sized from the number of subgraphs"
	if sc.Budget > 0 {
		b = fmt.Sprintf("a budget of %d subgraph-steps", sc.Budget)
	}
	if sc.Patience > 0 {
		b += ", with early stopping"
	}
	return b
}

func writeSweepCSV(path string, pts []pipeline.SweepPoint) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	w := csv.NewWriter(f)
	ff := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	_ = w.Write([]string{"lambda", "steps", "acc", "dp", "eo", "val_acc", "best_epoch", "feature_change", "edges_removed", "edges_added"})
	for _, p := range pts {
		r := p.Result
		_ = w.Write([]string{ff(p.Lambda), strconv.Itoa(p.Steps), ff(100 * float64(r.Test.Acc)), ff(100 * float64(r.Test.DP)),
			ff(100 * float64(r.Test.EO)), ff(100 * float64(r.ValAcc)), strconv.Itoa(r.BestEpoch), ff(float64(p.Edits.FeatureChange)),
			strconv.Itoa(p.Edits.EdgesRemoved), strconv.Itoa(p.Edits.EdgesAdded)})
	}
	w.Flush()
	return w.Error()
}

// plotSweep draws Accuracy (y) against ΔDP or ΔEO (x), ×100, one line per λ
// through its N_steps points.
func plotSweep(path string, pts []pipeline.SweepPoint, metric string, lambdas []float64) error {
	p := plot.New()
	name := map[string]string{"dp": "ΔDP (%)", "eo": "ΔEO (%)"}[metric]
	p.Title.Text = "Accuracy vs " + name + " over N_steps"
	p.X.Label.Text = name
	p.Y.Label.Text = "Accuracy (%)"
	var args []any
	for _, lam := range lambdas {
		var xy plotter.XYs
		for _, q := range pts {
			if q.Lambda != lam {
				continue
			}
			x := float64(q.Result.Test.DP)
			if metric == "eo" {
				x = float64(q.Result.Test.EO)
			}
			xy = append(xy, plotter.XY{X: 100 * x, Y: 100 * float64(q.Result.Test.Acc)})
		}
		args = append(args, fmt.Sprintf("λ=%g", lam), xy)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	p.Legend.Top = true
	return p.Save(6*vg.Inch, 4.5*vg.Inch, path)
}
