package command

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/fasd-db/fasd/query"
	"github.com/fasd-db/fasd/runs"
	"github.com/fasd-db/fasd/storage"
)

// replicaFlags are serve's flags for a read-only replica.
type replicaFlags struct {
	on   bool
	poll time.Duration
}

// openReplica opens the engine of serve --replica: the store on a server
// opened shared (no writer lock, beside the writer and other replicas),
// the engine read-only, following the writer's refreshes every poll and
// loading the newest saved models (runs.LoadLatest) when the writer's
// views move to them.
func (r *replicaFlags) openReplica(ctx context.Context, o *EngineOptions, log *slog.Logger) (*query.Engine, error) {
	if !storage.IsDSN(o.DB) {
		return nil, usagef("serve: --replica needs --db postgres://… (a local store is opened by one process only)")
	}
	if r.poll <= 0 {
		return nil, usagef("serve: --poll %v: want a positive duration", r.poll)
	}
	if o.Workers < 0 {
		return nil, usagef("serve: --workers must not be negative")
	}
	e, err := query.Open(o.DB, &query.Options{Workers: o.Workers, LoadModel: runs.LoadLatest,
		Storage: storageOptions(ctx, &storage.Options{Shared: true}),
		Replica: &query.Replica{Poll: r.poll, OnError: func(err error) {
			log.Warn("replica: catching up with the writer", "error", err)
		}}})
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return e, nil
}

// replicaNote describes a replica for the start-up message.
func replicaNote(w io.Writer, r *replicaFlags) {
	fmt.Fprintf(w, "read-only replica: follows the writer's refreshes and models every %v; answers not yet caught up are flagged stale\n", r.poll)
}
