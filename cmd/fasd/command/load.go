package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/index/split"
	"github.com/fasd-db/fasd/internal/progress"
	"github.com/fasd-db/fasd/query"
	"github.com/fasd-db/fasd/runs"
	"github.com/fasd-db/fasd/storage"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// LoadOptions are the flags of fasd load.
type LoadOptions struct {
	DB, Backend       string
	Preset, Dir       string
	Nodes, Edges      string
	IDCol             string
	NoID              bool
	SensCol           string
	SensThreshold     float64
	SensValues        string
	LabelCol          string
	LabelUnlabelled   string
	AllLabelled       bool
	Features, Exclude []string
	Scale             bool
	EdgeIDs           string
	Split             string
	SplitProtocol     string
	SplitSeed         uint64
	Train, Val        float64
	Replace, Strict   bool
	DropRuns          bool
	JSON              bool
	BatchBytes        int
}

// AddFlags registers the flags of fasd load.
func (o *LoadOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DB, "db", "", "store directory (created if missing) (required)")
	fs.StringVar(&o.Backend, "backend", "", "storage engine of a new store: pebble (default) or badger")
	fs.StringVar(&o.Preset, "preset", "", "dump preset: "+strings.Join(dump.PresetNames(), ", "))
	fs.StringVar(&o.Dir, "dir", "", "directory holding the preset's files (plain or .gz)")
	fs.StringVar(&o.Nodes, "nodes", "", "node CSV file (plain or gzip)")
	fs.StringVar(&o.Edges, "edges", "", "edge list file (plain or gzip)")
	fs.StringVar(&o.IDCol, "id-col", "", "node id column (int64)")
	fs.BoolVar(&o.NoID, "no-id", false, "the node file has no id column: the 0-based row index is the id")
	fs.StringVar(&o.SensCol, "sens-col", "", "sensitive attribute column")
	fs.Float64Var(&o.SensThreshold, "sens-threshold", 0, "numeric sensitive mapping: v<0 unknown, v≤T group 0, v>T group 1")
	fs.StringVar(&o.SensValues, "sens-values", "", "named sensitive mapping, e.g. a=0,b=1,?=-1 (overrides --sens-threshold)")
	fs.StringVar(&o.LabelCol, "label-col", "", "label column (values ≥1 become 1)")
	fs.StringVar(&o.LabelUnlabelled, "label-unlabelled", "", "label value meaning unlabelled (default -1)")
	fs.BoolVar(&o.AllLabelled, "all-labelled", false, "no label value means unlabelled")
	fs.StringSliceVar(&o.Features, "features", nil, "feature columns, in order (default: every other column)")
	fs.StringSliceVar(&o.Exclude, "exclude", nil, "columns to leave out of the default feature set")
	fs.BoolVar(&o.Scale, "scale", true, "scale every feature column to [-1,1] (constant column → 0)")
	fs.StringVar(&o.EdgeIDs, "edge-ids", "auto", "edge endpoints are node ids (id), 0-based row indices (row) or auto")
	fs.StringVar(&o.Split, "split", "dig", "split of the labelled nodes: dig (method.md §1), fractions, none")
	fs.StringVar(&o.SplitProtocol, "split-protocol", "", "DIG parameters: nba or pokec (default: the preset's, else pokec)")
	fs.Uint64Var(&o.SplitSeed, "split-seed", 20, "split seed")
	fs.Float64Var(&o.Train, "train", 0.5, "training fraction for --split fractions")
	fs.Float64Var(&o.Val, "val", 0.25, "validation fraction for --split fractions")
	fs.BoolVar(&o.Replace, "replace", false, "replace the graph the store holds (also recovers an incomplete load; deletes its views)")
	fs.BoolVar(&o.DropRuns, "drop-runs", false, "with --replace: also delete the trained runs and models of the old graph")
	fs.BoolVar(&o.Strict, "strict", false, "an edge with an unknown endpoint is an error instead of skipped and counted")
	fs.BoolVar(&o.JSON, "json", false, "print the load report as JSON")
	fs.IntVar(&o.BatchBytes, "batch-bytes", 0, "bytes per write batch (0: 2 MiB)")
}

// indexOptions turns the flags into index.LoadOptions.
func (o *LoadOptions) indexOptions(fs *pflag.FlagSet) (*index.LoadOptions, error) {
	lo := &index.LoadOptions{Nodes: o.Nodes, Edges: o.Edges, Replace: o.Replace, Strict: o.Strict, BatchBytes: o.BatchBytes}
	if o.DropRuns && !o.Replace {
		return nil, usagef("--drop-runs needs --replace")
	}
	if o.Replace {
		// The old graph's views go with it; its trained runs only when
		// asked (they took hours to train).
		lo.Delete = map[byte]func(storage.Store) error{index.PrefixViews: query.DeleteViews}
		if o.DropRuns {
			lo.Delete[index.PrefixRuns] = runs.DeleteAll
		}
	}
	protocol := "pokec"
	if o.Preset != "" {
		p, err := dump.LookupPreset(o.Preset)
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		lo.Spec, lo.Source, protocol = p.Spec, p.Name, p.Split
		if o.Dir != "" {
			if lo.Nodes == "" {
				if lo.Nodes, err = dump.FindFile(o.Dir, p.NodeFile); err != nil {
					return nil, err
				}
			}
			if lo.Edges == "" {
				if lo.Edges, err = dump.FindFile(o.Dir, p.EdgeFile); err != nil {
					return nil, err
				}
			}
		}
	} else if o.Dir != "" {
		return nil, usagef("--dir needs --preset (which names the files)")
	}
	if lo.Nodes == "" || lo.Edges == "" {
		return nil, usagef("give --nodes and --edges, or --preset with --dir")
	}
	sp := &lo.Spec
	switch {
	case o.NoID && fs.Changed("id-col"):
		return nil, usagef("--id-col and --no-id exclude each other")
	case o.NoID:
		sp.IDColumn = ""
	case fs.Changed("id-col"):
		sp.IDColumn = o.IDCol
	case o.Preset == "":
		return nil, usagef("without --preset, give --id-col NAME or --no-id")
	}
	if fs.Changed("sens-col") {
		sp.Sensitive = dump.SensitiveSpec{Column: o.SensCol}
	}
	if fs.Changed("sens-threshold") {
		sp.Sensitive.Threshold, sp.Sensitive.Named = o.SensThreshold, nil
	}
	if o.SensValues != "" {
		m, err := dump.ParseNamedMap(o.SensValues)
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("--sens-values: %w", err)}
		}
		sp.Sensitive.Named = m
	}
	if fs.Changed("label-col") {
		sp.Label = dump.LabelSpec{Column: o.LabelCol}
	}
	if fs.Changed("label-unlabelled") {
		sp.Label.Unlabelled = o.LabelUnlabelled
	}
	if fs.Changed("all-labelled") {
		sp.Label.AllLabelled = o.AllLabelled
	}
	if fs.Changed("features") {
		sp.Features, sp.Exclude = o.Features, nil
	}
	if fs.Changed("exclude") {
		sp.Exclude, sp.Features = o.Exclude, nil
	}
	if fs.Changed("scale") || o.Preset == "" {
		sp.Scale = o.Scale
	}
	switch o.EdgeIDs {
	case "auto":
		sp.Endpoints = dump.EndpointsAuto
	case "id":
		sp.Endpoints = dump.EndpointsID
	case "row":
		sp.Endpoints = dump.EndpointsRow
	default:
		return nil, usagef("--edge-ids %q: want id, row or auto", o.EdgeIDs)
	}
	if sp.Sensitive.Column == "" || sp.Label.Column == "" {
		return nil, usagef("without --preset, --sens-col and --label-col are required")
	}
	if fs.Changed("split-protocol") {
		protocol = o.SplitProtocol
	}
	lo.Split = index.SplitOptions{Protocol: protocol, Seed: o.SplitSeed, ZeroSeed: o.SplitSeed == 0,
		Fractions: split.Fractions{Train: o.Train, Val: o.Val}}
	switch o.Split {
	case "dig":
		lo.Split.Mode = index.SplitDIG
	case "fractions":
		lo.Split.Mode = index.SplitFractions
	case "none":
		lo.Split.Mode = index.SplitNoSplit
	default:
		return nil, usagef("--split %q: want dig, fractions or none", o.Split)
	}
	return lo, nil
}

func newLoadCommand() *cobra.Command {
	o := &LoadOptions{}
	cmd := &cobra.Command{
		Use:   "load --db DIR (--preset NAME [--dir D] | --nodes F --edges F [column flags]) [--replace] [--strict]",
		Short: "Load a graph dump (node CSV + edge list) into a store",
		Long: `Load a graph dump into a store. Everything is validated before the first
write: bad input leaves the store as it was and the error names file:line.
A load that is interrupted leaves the store marked incomplete; reload with
--replace. Loading into a store that holds a graph needs --replace, which
deletes the old graph and its materialized views once the input is valid;
a store with trained runs of the old graph also needs --drop-runs (which
deletes them), else the load fails before writing anything.

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.DB == "" {
				return usagef("load: --db DIR is required")
			}
			backend, err := storage.ParseBackend(o.Backend)
			if err != nil {
				return &UsageError{Err: err}
			}
			lo, err := o.indexOptions(cmd.Flags())
			if err != nil {
				return fmt.Errorf("load: %w", err)
			}
			var bar *progress.Bar
			stage := ""
			lo.Progress = func(s string, done, total int64) {
				if s != stage {
					if bar != nil {
						bar.Finish()
					}
					stage = s
					bar = progress.New(cmd.ErrOrStderr(), s, total, nil)
				}
				bar.Set(done)
			}
			s, err := storage.Open(o.DB, &storage.Options{Backend: backend, NoSync: true})
			if err != nil {
				return fmt.Errorf("load: %w", err)
			}
			rep, err := index.Load(cmd.Context(), s, lo)
			if bar != nil {
				bar.Finish()
			}
			if cerr := s.Close(); err == nil && cerr != nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("load: %w", err)
			}
			return printLoadReport(cmd, rep, o, s.Backend())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func printLoadReport(cmd *cobra.Command, rep *index.LoadReport, o *LoadOptions, b storage.Backend) error {
	w := cmd.OutOrStdout()
	if o.JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	src := rep.Source
	if src == "" {
		src = "dump"
	}
	e := rep.Edges
	var errs []error
	pr := func(format string, args ...any) {
		_, err := fmt.Fprintf(w, format, args...)
		errs = append(errs, err)
	}
	pr("loaded %s (%s, %s) into %s (%s), version %d\n", src, rep.NodesFile, rep.EdgesFile, o.DB, b, rep.Version)
	pr("nodes     %d (features %d)\n", rep.Nodes, rep.Features)
	pr("edges     lines %d, kept %d undirected, duplicates %d, self-loops dropped %d, unknown endpoints %d\n",
		e.Lines, e.Kept, e.Duplicates, e.SelfLoops, e.UnknownEndpoints)
	pr("groups    0: %d  1: %d  unknown: %d\n", rep.Groups.G0, rep.Groups.G1, rep.Groups.Unknown)
	pr("labels    0: %d  1: %d  unlabelled: %d\n", rep.Labels.Y0, rep.Labels.Y1, rep.Labels.Unlabelled)
	pr("split     train %d  val %d  test %d\n", rep.Splits.Train, rep.Splits.Val, rep.Splits.Test)
	return errors.Join(errs...)
}
