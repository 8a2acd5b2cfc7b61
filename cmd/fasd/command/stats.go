package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/storage"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// StatsOptions are the flags of fasd stats.
type StatsOptions struct {
	DB   string
	JSON bool
}

// AddFlags registers the flags of fasd stats.
func (o *StatsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DB, "db", "", "store directory, or postgres:// DSN of a store on PostgreSQL (required)")
	fs.BoolVar(&o.JSON, "json", false, "print the statistics as JSON")
}

// openGraph opens the existing store in dir and the graph in it; close the
// returned store when done.
func openGraph(ctx context.Context, dir string) (storage.Store, *index.Graph, error) {
	return openGraphWith(ctx, dir, &storage.Options{MustExist: true})
}

// openGraphReadOnly is openGraph for the commands that only read: the
// store is opened read-only (storage.Options.ReadOnly), so that nothing is
// written, no flush or compaction runs (a read works on a full disk), and
// a directory that is not a store is refused rather than made one.
func openGraphReadOnly(ctx context.Context, dir string) (storage.Store, *index.Graph, error) {
	return openGraphWith(ctx, dir, &storage.Options{ReadOnly: true})
}

func openGraphWith(ctx context.Context, dir string, o *storage.Options) (storage.Store, *index.Graph, error) {
	if _, err := os.Stat(dir); !storage.IsDSN(dir) && errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w at %s", ErrNoStore, dir)
	}
	s, err := storage.Open(dir, storageOptions(ctx, o))
	if err != nil {
		return nil, nil, err
	}
	g, err := index.Open(s)
	if err != nil {
		return nil, nil, errors.Join(err, s.Close())
	}
	return s, g, nil
}

func newStatsCommand() *cobra.Command {
	o := &StatsOptions{}
	cmd := &cobra.Command{
		Use:   "stats --db DIR [--json]",
		Short: "Summarise the stored graph: nodes, edges, groups, labels, homophily",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if o.DB == "" {
				return usagef("stats: --db DIR is required")
			}
			s, g, err := openGraphReadOnly(cmd.Context(), o.DB)
			if err != nil {
				return fmt.Errorf("stats: %w", err)
			}
			defer func() { err = errors.Join(err, s.Close()) }()
			v, err := g.View()
			if err != nil {
				return fmt.Errorf("stats: %w", err)
			}
			defer v.Close()
			st, err := v.Stats(cmd.Context())
			if err != nil {
				return fmt.Errorf("stats: %w", err)
			}
			return printStats(cmd, st, o.JSON)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func printStats(cmd *cobra.Command, st *index.Stats, asJSON bool) error {
	w := cmd.OutOrStdout()
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	var errs []error
	pr := func(format string, args ...any) {
		_, err := fmt.Fprintf(w, format, args...)
		errs = append(errs, err)
	}
	lc := func(c index.LabelCounts) string {
		return fmt.Sprintf("0: %d  1: %d  unlabelled: %d", c.Y0, c.Y1, c.Unlabelled)
	}
	pr("version    %d\n", st.Version)
	if st.Deleted > 0 {
		pr("nodes      %d (and %d deleted)\n", st.Nodes, st.Deleted)
	} else {
		pr("nodes      %d\n", st.Nodes)
	}
	pr("edges      %d undirected (max degree %d)\n", st.Edges, st.MaxDeg)
	pr("features   %d\n", st.Features)
	pr("isolated   %d\n", st.Isolated)
	pr("groups     0: %d  1: %d  unknown: %d\n", st.Groups.G0, st.Groups.G1, st.Groups.Unknown)
	pr("labels     %s\n", lc(st.Labels))
	pr("  group 0  %s\n", lc(st.LabelsByGroup.G0))
	pr("  group 1  %s\n", lc(st.LabelsByGroup.G1))
	if st.Groups.Unknown > 0 {
		pr("  unknown  %s\n", lc(st.LabelsByGroup.Unknown))
	}
	pr("split      train %d  val %d  test %d\n", st.Splits.Train, st.Splits.Val, st.Splits.Test)
	h := st.Homophily
	pr("homophily  %.4f of %d edges between known groups stay in one group (%d); random mixing would give %.4f\n",
		h.Edge, h.KnownEdges, h.SameGroup, h.Baseline)
	return errors.Join(errs...)
}
