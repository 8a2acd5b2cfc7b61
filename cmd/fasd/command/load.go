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
	SensFeature       bool
	LabelCol          string
	LabelUnlabelled   string
	LabelValues       string
	AllLabelled       bool
	Features, Exclude []string
	Scale             bool
	EdgeIDs           string
	Split             string
	SplitProtocol     string
	SplitSeed         uint64
	LabelNumber       int
	Train, Val        float64
	Replace, Strict   bool
	DropRuns          bool
	AllowSingleClass  bool
	AllowSingleGroup  bool
	AllowNoEdges      bool
	JSON              bool
	BatchBytes        int
	ListPresets       bool
}

// AddFlags registers the flags of fasd load.
func (o *LoadOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DB, "db", "", "store directory (created if missing), or postgres:// DSN of a store on PostgreSQL (its table is created if missing) (required)")
	fs.StringVar(&o.Backend, "backend", "", "storage engine of a new store: pebble (default) or badger")
	fs.StringVar(&o.Preset, "preset", "", "dataset preset (published file names and conventions): "+strings.Join(dump.PresetNames(), ", "))
	renameFlag(fs, "preset", "dataset", "published dataset (its file names and conventions): "+strings.Join(dump.PresetNames(), ", "))
	fs.StringVar(&o.Dir, "dir", "", "directory holding the dataset's files (plain or .gz)")
	fs.BoolVar(&o.ListPresets, "list-presets", false, "print every dataset with its files and conventions, and exit")
	renameFlag(fs, "list-presets", "list-datasets", "print every dataset with its files and conventions, and exit")
	fs.StringVar(&o.Nodes, "nodes", "", "node CSV file (plain or gzip)")
	fs.StringVar(&o.Edges, "edges", "", "edge list file (plain or gzip)")
	fs.StringVar(&o.IDCol, "id-col", "", "node id column (int64)")
	fs.BoolVar(&o.NoID, "no-id", false, "the node file has no id column: the 0-based row index is the id")
	fs.StringVar(&o.SensCol, "sens-col", "", "sensitive attribute column")
	fs.Float64Var(&o.SensThreshold, "sens-threshold", 0, "numeric sensitive mapping: v<0 unknown, v≤T group 0, v>T group 1")
	fs.StringVar(&o.SensValues, "sens-values", "", "sensitive value map, e.g. Male=0,Female=1,?=-1 (overrides --sens-threshold)")
	fs.BoolVar(&o.SensFeature, "sens-feature", false, "keep the sensitive column as a feature too (mapped by --sens-values), as NIFTY does")
	fs.StringVar(&o.LabelCol, "label-col", "", "label column (values ≥1 become 1)")
	fs.StringVar(&o.LabelUnlabelled, "label-unlabelled", "", "label value meaning unlabelled (default -1)")
	fs.StringVar(&o.LabelValues, "label-values", "", "label value map, e.g. 1=1,-1=0 (German credit) or yes=1,no=0,?=-1; numeric keys match by value")
	fs.BoolVar(&o.AllLabelled, "all-labelled", false, "no label value means unlabelled")
	fs.StringSliceVar(&o.Features, "features", nil, "feature columns, in order (default: every other column)")
	fs.StringSliceVar(&o.Exclude, "exclude", nil, "columns to drop from the default feature set")
	fs.BoolVar(&o.Scale, "scale", true, "scale every feature column to [-1,1] (constant column → 0)")
	fs.StringVar(&o.EdgeIDs, "edge-ids", "auto", "edge endpoints are node ids (id), 0-based row indices (row) or auto")
	fs.StringVar(&o.Split, "split", "", "split of the labelled nodes: dig, nifty (per class), fractions, none (default: the dataset's, else dig)")
	fs.StringVar(&o.SplitProtocol, "split-protocol", "", "DIG parameters: nba or pokec (default: the dataset's, else pokec)")
	fs.IntVar(&o.LabelNumber, "label-number", 0, "NIFTY split: at most N/2 training nodes per class (default: the dataset's)")
	fs.Uint64Var(&o.SplitSeed, "split-seed", 20, "split seed")
	fs.Float64Var(&o.Train, "train", 0.5, "training fraction for --split fractions")
	fs.Float64Var(&o.Val, "val", 0.25, "validation fraction for --split fractions")
	fs.BoolVar(&o.Replace, "replace", false, "replace the graph the store holds (also recovers an incomplete load; deletes its views)")
	fs.BoolVar(&o.DropRuns, "drop-runs", false, "with --replace: also delete the trained runs and models of the old graph")
	fs.BoolVar(&o.Strict, "strict", false, "an edge with an unknown endpoint is an error instead of skipped and counted")
	fs.BoolVar(&o.AllowSingleClass, "allow-single-class", false, "load even if the labelled nodes have fewer than two classes")
	fs.BoolVar(&o.AllowSingleGroup, "allow-single-group", false, "load even if the known sensitive values form fewer than two groups")
	fs.BoolVar(&o.AllowNoEdges, "allow-no-edges", false, "load even if no edge is kept")
	fs.BoolVar(&o.JSON, "json", false, "print the load report as JSON")
	fs.IntVar(&o.BatchBytes, "batch-bytes", 0, "bytes per write batch (0: 2 MiB)")
}

// indexOptions turns the flags into index.LoadOptions.
func (o *LoadOptions) indexOptions(fs *pflag.FlagSet) (*index.LoadOptions, error) {
	lo := &index.LoadOptions{Nodes: o.Nodes, Edges: o.Edges, Replace: o.Replace, Strict: o.Strict, BatchBytes: o.BatchBytes,
		AllowSingleClass: o.AllowSingleClass, AllowSingleGroup: o.AllowSingleGroup, AllowNoEdges: o.AllowNoEdges}
	if o.DropRuns && !o.Replace {
		return nil, usagef("--drop-runs needs --replace")
	}
	if o.Replace {
		// The old graph's views go with it; its trained runs only when
		// asked (they took hours to train).
		lo.Drop = []byte{index.PrefixViews}
		if o.DropRuns {
			lo.Drop = append(lo.Drop, index.PrefixRuns)
		}
	}
	so := index.SplitOptions{Mode: index.SplitDIG, Params: split.Pokec}
	if o.Preset != "" {
		p, err := dump.LookupPreset(o.Preset)
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		lo.Spec, lo.Source, so = p.Spec, p.Name, index.PresetSplit(p)
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
		return nil, usagef("--dir needs --dataset (which names the files)")
	}
	if lo.Nodes == "" || lo.Edges == "" {
		return nil, usagef("give --nodes and --edges, or --dataset with --dir")
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
		return nil, usagef("without --dataset, give --id-col NAME or --no-id")
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
	if fs.Changed("sens-feature") {
		sp.SensitiveFeature = o.SensFeature
	}
	if fs.Changed("label-col") {
		sp.Label = dump.LabelSpec{Column: o.LabelCol}
	}
	if o.LabelValues != "" && (fs.Changed("label-unlabelled") || fs.Changed("all-labelled")) {
		return nil, usagef("--label-values excludes --label-unlabelled and --all-labelled (map the unlabelled value to -1 instead, e.g. ?=-1)")
	}
	if fs.Changed("label-unlabelled") {
		sp.Label.Unlabelled, sp.Label.Named = o.LabelUnlabelled, nil
	}
	if fs.Changed("all-labelled") {
		sp.Label.AllLabelled, sp.Label.Named = o.AllLabelled, nil
	}
	if o.LabelValues != "" {
		m, err := dump.ParseNamedMap(o.LabelValues)
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("--label-values: %w", err)}
		}
		sp.Label.Named, sp.Label.Unlabelled, sp.Label.AllLabelled = m, "", false
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
		return nil, usagef("without --dataset, --sens-col and --label-col are required")
	}
	switch o.Split {
	case "":
	case "dig":
		if so.Mode != index.SplitDIG {
			so = index.SplitOptions{Mode: index.SplitDIG, Params: split.Pokec}
		}
	case "nifty":
		so.Mode = index.SplitNIFTY
	case "fractions":
		so.Mode = index.SplitFractions
	case "none":
		so.Mode = index.SplitNoSplit
	default:
		return nil, usagef("--split %q: want dig, nifty, fractions or none", o.Split)
	}
	if fs.Changed("split-protocol") {
		if so.Mode != index.SplitDIG {
			return nil, usagef("--split-protocol applies to the dig split only")
		}
		so.Params, so.Protocol = split.Params{}, o.SplitProtocol
	}
	if fs.Changed("label-number") {
		if so.Mode != index.SplitNIFTY {
			return nil, usagef("--label-number applies to the nifty split only (--split nifty)")
		}
		so.LabelNumber = o.LabelNumber
	}
	if so.Mode == index.SplitNIFTY && so.LabelNumber <= 0 {
		return nil, usagef("--split nifty needs --label-number N > 0 (the published values: 100 for German and Bail, 6000 for Credit, 1000 for Income)")
	}
	so.Seed, so.ZeroSeed = o.SplitSeed, o.SplitSeed == 0
	so.Fractions = split.Fractions{Train: o.Train, Val: o.Val}
	lo.Split = so
	return lo, nil
}

func newLoadCommand() *cobra.Command {
	o := &LoadOptions{}
	cmd := &cobra.Command{
		Use:   "load --db DIR (--dataset NAME [--dir D] | --nodes F --edges F [column flags]) [--replace] [--strict]",
		Short: "Load a graph dump (node CSV + edge list) into a store",
		Long: `Load a graph dump into a store. Everything is validated before the first
write: bad input leaves the store as it was and the error names file:line.
A load that is interrupted leaves the store marked incomplete; reload with
--replace. Loading into a store that holds a graph needs --replace, which
deletes the old graph and its materialized views once the input is valid;
a store with trained runs of the old graph also needs --drop-runs (which
deletes them), else the load fails before writing anything.

--dataset NAME --dir D loads a published dataset: it finds the files by
their published names (plain or .gz) and applies the dataset's conventions
(columns, value maps, kept and dropped columns, split); flags given as well
override them. Datasets: ` + strings.Join(dump.PresetNames(), ", ") + `
(--list-datasets prints their conventions; --preset and --list-presets are
the old spellings, kept for a release).
Any other graph loads by flags: --nodes, --edges, --id-col NAME or --no-id,
--sens-col, --label-col, and as needed --sens-values, --sens-feature,
--label-values, --exclude, --edge-ids, --split.

A node file without data rows is refused; so are, unless allowed with
--allow-single-class, --allow-single-group or --allow-no-edges, labelled
nodes of one class only, known sensitive values of one group only, and a
graph in which no edge is kept (an empty edge file, or an --edge-ids mode
under which no endpoint names a node). A refused load writes nothing.

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.ListPresets {
				return printPresets(cmd.OutOrStdout())
			}
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
				crashPoint(s)
				if s != stage {
					if bar != nil {
						bar.Finish()
					}
					stage = s
					bar = progress.New(cmd.ErrOrStderr(), s, total, nil)
				}
				bar.Set(done)
			}
			s, err := storage.Open(o.DB, storageOptions(cmd.Context(), &storage.Options{Backend: backend, NoSync: true}))
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
	pr("loaded %s (%s, %s) into %s (%s), version %d\n", src, rep.NodesFile, rep.EdgesFile, displayDB(o.DB), b, rep.Version)
	pr("nodes     %d (features %d)\n", rep.Nodes, rep.Features)
	pr("edges     lines %d, kept %d undirected, duplicates %d, self-loops dropped %d, unknown endpoints %d\n",
		e.Lines, e.Kept, e.Duplicates, e.SelfLoops, e.UnknownEndpoints)
	pr("groups    0: %d  1: %d  unknown: %d\n", rep.Groups.G0, rep.Groups.G1, rep.Groups.Unknown)
	pr("labels    0: %d  1: %d  unlabelled: %d\n", rep.Labels.Y0, rep.Labels.Y1, rep.Labels.Unlabelled)
	pr("split     train %d  val %d  test %d  (%s)\n", rep.Splits.Train, rep.Splits.Val, rep.Splits.Test, rep.SplitMethod)
	return errors.Join(errs...)
}
