package command

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/fasd-db/fasd/query"
	"github.com/fasd-db/fasd/runs"
	"github.com/fasd-db/fasd/storage"
)

// distFlags are the flags of distributed work shared by worker,
// materialize and refresh.
type distFlags struct {
	on    bool
	lease time.Duration
	poll  time.Duration
}

func (d *distFlags) options(owner string) *query.Distributed {
	return &query.Distributed{Owner: owner, LeaseTTL: d.lease, Poll: d.poll}
}

// addCoordinatorFlags registers --distributed and --lease on materialize
// and refresh.
func (d *distFlags) addCoordinatorFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&d.on, "distributed", false, "publish the work as parts for fasd worker processes on the same store and fold what they stage (computing free parts here)")
	cmd.Flags().DurationVar(&d.lease, "lease", 30*time.Second, "with --distributed: how long a part this process claims stays its own")
	cmd.Flags().DurationVar(&d.poll, "poll", 50*time.Millisecond, "with --distributed: wait between two looks for a staged part")
}

func newWorkerCommand() *cobra.Command {
	o := &EngineOptions{}
	d := &distFlags{}
	var once bool
	var name string
	cmd := &cobra.Command{
		Use:   "worker --db postgres://… [--workers N] [--lease 30s] [--once]",
		Short: "Compute parts of a distributed materialize or refresh",
		Long: `Worker opens a store on PostgreSQL beside its writer (without the writer
lock) and computes parts of the materialize or refresh that a coordinator
(fasd materialize --distributed, fasd refresh --distributed) published:
it claims a part by a lease kept in the store, computes the part's
records against the coordinator's graph version and stages them in one
batch guarded by its lease, so a worker whose lease expired stages
nothing. Run as many as you like, on any machine that reaches the
server; stop them with Ctrl-C. With --once it returns when no part is left.
A worker computes only for the models it loaded: when a coordinator
publishes work for other models (fasd train ran since the worker
started), it reopens the store to load the newest models and goes on.

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if !storage.IsDSN(o.DB) {
				return usagef("worker: --db must be a postgres:// DSN (a local store is opened by one process only)")
			}
			ctx := cmd.Context()
			e, err := openShared(ctx, o, d.poll)
			if err != nil {
				return fmt.Errorf("worker: %w", err)
			}
			defer func() {
				if e != nil {
					err = errors.Join(err, e.Close())
				}
			}()
			rep, err := e.Work(ctx, d.options(name), !once)
			// A plan of other models (a fasd train since this worker
			// started): reopen the store, which loads the newest models,
			// and work on.
			for reopened := false; errors.Is(err, query.ErrPlanModels) && !(once && reopened); reopened = true {
				fmt.Fprintf(cmd.ErrOrStderr(), "worker: %v; reopening the store for the newest models\n", err)
				if cerr := e.Close(); cerr != nil {
					return fmt.Errorf("worker: %w", cerr)
				}
				select {
				case <-ctx.Done():
					e = nil
				case <-time.After(d.poll):
				}
				if e == nil {
					return nil
				}
				if e, err = openShared(ctx, o, d.poll); err != nil {
					e = nil
					return fmt.Errorf("worker: %w", err)
				}
				var more *query.WorkReport
				more, err = e.Work(ctx, d.options(name), !once)
				rep = addWork(rep, more)
			}
			if errors.Is(err, context.Canceled) {
				err = nil
			}
			if rep != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "worker: staged %d parts (%d roots in %s, %s per root), lost %d leases\n",
					rep.Parts, rep.Roots, rep.Compute.Round(time.Millisecond), perRoot(rep.Compute, rep.Roots), rep.Lost)
			}
			if err != nil {
				return fmt.Errorf("worker: %w", err)
			}
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().DurationVar(&d.lease, "lease", 30*time.Second, "how long a claimed part stays this worker's without a renewal (renewed every third of it while the worker computes the part)")
	cmd.Flags().DurationVar(&d.poll, "poll", 200*time.Millisecond, "wait between two looks for work")
	cmd.Flags().BoolVar(&once, "once", false, "return when no part is left instead of waiting for more work")
	cmd.Flags().StringVar(&name, "name", "worker", "the owner name in this worker's leases")
	return cmd
}

// openShared opens the engine on a shared store, retrying while the views
// are not yet initialised by a coordinator (the first open writes them,
// which a shared store may not).
func openShared(ctx context.Context, o *EngineOptions, poll time.Duration) (*query.Engine, error) {
	for {
		e, err := query.Open(o.DB, &query.Options{Workers: o.Workers, LoadModel: runs.LoadLatest,
			Storage: storageOptions(ctx, &storage.Options{Shared: true})})
		if !errors.Is(err, storage.ErrReadOnly) {
			return e, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// addWork adds the counts of b to a (either may be nil).
func addWork(a, b *query.WorkReport) *query.WorkReport {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return &query.WorkReport{Parts: a.Parts + b.Parts, Lost: a.Lost + b.Lost, Roots: a.Roots + b.Roots, Compute: a.Compute + b.Compute}
}
