package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/fasd-db/fasd/internal/progress"
	"github.com/fasd-db/fasd/query"
	"github.com/fasd-db/fasd/runs"
	"github.com/fasd-db/fasd/storage"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// EngineOptions are the flags shared by the query commands.
type EngineOptions struct {
	DB      string
	Workers int
	JSON    bool
	// NoReuse debiases every subgraph, even those fasd train debiased and
	// kept (query.Options.NoReuse).
	NoReuse bool
	// Distributed, when set, makes Materialize and Refresh coordinators
	// of fasd worker processes.
	Distributed *query.Distributed
}

// AddFlags registers the shared flags.
func (o *EngineOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DB, "db", "", "store directory, or postgres:// DSN of a store on PostgreSQL (required)")
	fs.IntVar(&o.Workers, "workers", 0, "goroutines computing subgraphs (0: one per CPU)")
	fs.BoolVar(&o.JSON, "json", false, "print the result as JSON")
}

// openEngine opens the query engine over the existing store in o.DB with
// the latest trained models; progress goes to errOut.
func (o *EngineOptions) openEngine(ctx context.Context, name string, errOut io.Writer) (*query.Engine, *stageBars, error) {
	if o.DB == "" {
		return nil, nil, usagef("%s: --db DIR is required", name)
	}
	if o.Workers < 0 {
		return nil, nil, usagef("%s: --workers must not be negative", name)
	}
	if _, err := os.Stat(o.DB); !storage.IsDSN(o.DB) && errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s: %w at %s", name, ErrNoStore, o.DB)
	}
	bars := &stageBars{w: errOut, bars: map[string]*progress.Bar{}}
	e, err := query.Open(o.DB, &query.Options{Workers: o.Workers, Progress: bars.progress, Distributed: o.Distributed, LoadModel: runs.LoadLatest,
		NoReuse: o.NoReuse, Storage: storageOptions(ctx, &storage.Options{MustExist: true})})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return e, bars, nil
}

// stageBars draws one progress bar per stage of a refresh.
type stageBars struct {
	w    io.Writer
	bars map[string]*progress.Bar
}

func (s *stageBars) progress(stage string, done, total int) {
	crashPoint(stage)
	b, ok := s.bars[stage]
	if !ok {
		b = progress.New(s.w, stage, int64(total), nil)
		s.bars[stage] = b
	}
	b.SetTotal(int64(total))
	b.Set(int64(done))
	if done >= total {
		b.Finish()
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printRefresh(w io.Writer, verb string, rep *query.RefreshReport) {
	fmt.Fprintf(w, "%s %d subgraphs, %d node views in %s (graph version %d, complete %v)\n",
		verb, rep.Subgraphs, rep.Nodes, rep.Duration.Round(time.Millisecond), rep.GraphVersion, rep.Complete)
	if rep.Reused > 0 {
		fmt.Fprintf(w, "%d of the subgraphs classified with the debiasing fasd train kept (not debiased again)\n", rep.Reused)
	}
	t := &rep.Times
	if t.Parts == 0 {
		return
	}
	fmt.Fprintf(w, "  computed here %s, folded %d parts (%d staged) in %s (%s per root), waited %s, node views %s\n",
		t.Compute.Round(time.Millisecond), t.Parts, t.Staged, t.Fold.Round(time.Millisecond),
		perRoot(t.Fold, rep.Subgraphs), t.Wait.Round(time.Millisecond), t.Nodes.Round(time.Millisecond))
}

// perRoot is d divided by n roots, rounded for printing.
func perRoot(d time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return (d / time.Duration(n)).Round(time.Microsecond)
}

// addNoReuseFlag registers --no-reuse.
func (o *EngineOptions) addNoReuseFlag(fs *pflag.FlagSet) {
	fs.BoolVar(&o.NoReuse, "no-reuse", false, "debias every subgraph, even those fasd train debiased and kept (the views are the same; for measuring)")
}

func newMaterializeCommand() *cobra.Command {
	o := &EngineOptions{}
	d := &distFlags{}
	cmd := &cobra.Command{
		Use:   "materialize --db DIR [--workers N] [--distributed] [--no-reuse] [--json]",
		Short: "Build the fair-prediction views (resumable)",
		Long: `Materialize samples, debiases and classifies the subgraph of every root (the
labelled nodes) with the latest trained models and stores per-node averaged
predictions as views in the store. Interrupted (Ctrl-C), it keeps what it
finished; running it again resumes.

The subgraphs fasd train debiased are not debiased again: train keeps f's
probabilities on each of them, and materialize uses them where the subgraph
is still the one train saw (--no-reuse debiases everything; the views are the
same byte for byte).

Progress goes to stderr: a bar per stage on a terminal; redirected to a file
or pipe, a line every 30 s of a stage ("subgraphs 42%  336,000/799,725 ...")
and, after a stage that long, a last one when it ends.

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if d.on {
				o.Distributed = d.options("coordinator")
			}
			e, _, err := o.openEngine(cmd.Context(), "materialize", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, e.Close()) }()
			rep, err := e.Materialize(cmd.Context())
			if err != nil {
				return fmt.Errorf("materialize: %w", err)
			}
			if o.JSON {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			printRefresh(cmd.OutOrStdout(), "materialized", rep)
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	o.addNoReuseFlag(cmd.Flags())
	d.addCoordinatorFlags(cmd)
	return cmd
}

func newRefreshCommand() *cobra.Command {
	o := &EngineOptions{}
	d := &distFlags{}
	cmd := &cobra.Command{
		Use:   "refresh --db DIR [--workers N] [--distributed] [--no-reuse] [--json]",
		Short: "Re-debias the subgraphs that updates made dirty",
		Long: `Refresh re-samples and re-debiases, with the existing models, only the
subgraphs whose sample or content an update may have changed, and updates the
views of the nodes they contain. Retraining stays fasd train.

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if d.on {
				o.Distributed = d.options("coordinator")
			}
			e, _, err := o.openEngine(cmd.Context(), "refresh", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, e.Close()) }()
			rep, err := e.Refresh(cmd.Context())
			if err != nil {
				return fmt.Errorf("refresh: %w", err)
			}
			if o.JSON {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			printRefresh(cmd.OutOrStdout(), "refreshed", rep)
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	o.addNoReuseFlag(cmd.Flags())
	d.addCoordinatorFlags(cmd)
	return cmd
}
