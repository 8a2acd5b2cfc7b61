package command

import (
	"fmt"
	"strings"

	"github.com/fasd-db/fasd/index/synth"
	"github.com/fasd-db/fasd/internal/progress"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// GenOptions are the flags of fasd gen. Knobs left unset keep the preset's
// value.
type GenOptions struct {
	Out    string
	Preset string
	Gzip   bool
	Config synth.Config // knob values as parsed; only changed flags apply
}

// AddFlags registers the flags of fasd gen.
func (o *GenOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Out, "out", "", "directory to write synth.csv and synth_relationship.txt into (required)")
	fs.StringVar(&o.Preset, "preset", synth.DefaultPreset, "generator preset: "+synth.PresetHelp())
	renameFlag(fs, "preset", "size", "generator setting: "+synth.PresetHelp())
	fs.BoolVar(&o.Gzip, "gzip", false, "gzip both files")
	c := &o.Config
	fs.IntVar(&c.Nodes, "nodes", 0, "number of nodes")
	fs.Float64Var(&c.AvgDegree, "avg-degree", 0, "expected mean degree")
	fs.IntVar(&c.Features, "features", 0, "number of feature columns")
	fs.Float64Var(&c.BinaryFraction, "binary-fraction", 0, "fraction of 0/1 feature columns")
	fs.Float64Var(&c.GroupShare, "group-share", 0, "expected share of sensitive group 1")
	fs.Float64Var(&c.Homophily, "homophily", 0, "edge affinity for the same sensitive group, in (0,1); 0.5 = none")
	fs.Float64Var(&c.LabelHomophily, "label-homophily", 0, "edge affinity for the same label, in (0,1)")
	fs.Float64Var(&c.LabelCorrelation, "label-corr", 0, "correlation of the label with the sensitive group, in [0,1)")
	fs.Float64Var(&c.Signal, "signal", 0, "per-feature effect size of the label")
	fs.Float64Var(&c.Leakage, "leakage", 0, "per-feature effect size of the sensitive attribute (leakage into features)")
	fs.Float64Var(&c.Unlabelled, "unlabelled", 0, "fraction of nodes written unlabelled")
	fs.Float64Var(&c.UnknownSensitive, "unknown-sensitive", 0, "fraction of nodes written with unknown sensitive value")
	fs.Float64Var(&c.Reciprocal, "reciprocal", 0, "fraction of edges written in both directions")
	fs.BoolVar(&c.Separate, "separate", false, "give each feature column one cause: a leak-share fraction carries only the sensitive leak, the rest only the label signal")
	fs.Float64Var(&c.LeakShare, "leak-share", 0, "fraction of leak-only columns with --separate, in [0,1]")
	fs.Uint64Var(&c.Seed, "seed", 0, "generator seed")
}

// config returns the preset's configuration with the changed knobs applied.
func (o *GenOptions) config(fs *pflag.FlagSet) (synth.Config, error) {
	cfg, err := synth.Preset(o.Preset)
	if err != nil {
		return synth.Config{}, &UsageError{Err: err}
	}
	k := &o.Config
	for name, apply := range map[string]func(){
		"nodes": func() { cfg.Nodes = k.Nodes }, "avg-degree": func() { cfg.AvgDegree = k.AvgDegree },
		"features": func() { cfg.Features = k.Features }, "binary-fraction": func() { cfg.BinaryFraction = k.BinaryFraction },
		"group-share": func() { cfg.GroupShare = k.GroupShare }, "homophily": func() { cfg.Homophily = k.Homophily },
		"label-homophily": func() { cfg.LabelHomophily = k.LabelHomophily }, "label-corr": func() { cfg.LabelCorrelation = k.LabelCorrelation },
		"signal": func() { cfg.Signal = k.Signal }, "leakage": func() { cfg.Leakage = k.Leakage },
		"unlabelled": func() { cfg.Unlabelled = k.Unlabelled }, "unknown-sensitive": func() { cfg.UnknownSensitive = k.UnknownSensitive },
		"reciprocal": func() { cfg.Reciprocal = k.Reciprocal }, "seed": func() { cfg.Seed = k.Seed },
		"separate": func() { cfg.Separate = k.Separate }, "leak-share": func() { cfg.LeakShare = k.LeakShare },
	} {
		if fs.Changed(name) {
			apply()
		}
	}
	return cfg, cfg.Validate()
}

func newGenCommand() *cobra.Command {
	o := &GenOptions{}
	cmd := &cobra.Command{
		Use:   "gen --out DIR [--size small|removable|pokec] [knobs]",
		Short: "Write a synthetic biased graph dump (load it with --dataset synth)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Out == "" {
				return usagef("gen: --out DIR is required")
			}
			cfg, err := o.config(cmd.Flags())
			if err != nil {
				return fmt.Errorf("gen: %w", err)
			}
			var bar *progress.Bar
			phase := ""
			files, st, err := synth.Write(cmd.Context(), o.Out, cfg, &synth.Options{
				Gzip: o.Gzip,
				Progress: func(p string, done, total int64) {
					if p != phase {
						if bar != nil {
							bar.Finish()
						}
						phase = p
						bar = progress.New(cmd.ErrOrStderr(), "writing "+p, total, nil)
					}
					bar.Set(done)
				},
			})
			if bar != nil {
				bar.Finish()
			}
			if err != nil {
				return fmt.Errorf("gen: %w", err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "wrote %s and %s\n", files.Nodes, files.Edges)
			fmt.Fprintf(w, "nodes     %d (features %d, %d binary)\n", st.Nodes, st.Features, st.BinaryFeatures)
			fmt.Fprintf(w, "edges     %d undirected (%d lines), same-group fraction %.4f\n", st.Edges, st.EdgeLines, st.Homophily())
			fmt.Fprintf(w, "groups    0: %d  1: %d  unknown: %d\n", st.Groups[0], st.Groups[1], st.UnknownSensitive)
			fmt.Fprintf(w, "labels    0: %d  1: %d  unlabelled: %d\n", st.Labels[0], st.Labels[1], st.Unlabelled)
			if cfg.Separate {
				h := cfg.Header()
				fmt.Fprintf(w, "label-only columns  %s\n", columnNames(h.Features, cfg.LabelColumns()))
				fmt.Fprintf(w, "leak-only columns   %s\n", columnNames(h.Features, cfg.LeakColumns()))
			}
			fmt.Fprintf(w, "load with: fasd load --db DB --dataset synth --dir %s\n", o.Out)
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// columnNames lists the named columns, comma-separated ("none" if empty).
func columnNames(names []string, idx []int) string {
	if len(idx) == 0 {
		return "none"
	}
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = names[j]
	}
	return strings.Join(out, ",")
}
