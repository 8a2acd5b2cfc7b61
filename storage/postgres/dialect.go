package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// dialect is what differs between the servers this engine speaks to.
// Every other statement of the engine is in the subset PostgreSQL and
// CockroachDB share (bytea/BYTES keys, ON CONFLICT upserts, = ANY($1)
// arrays, unnest of two arrays, ORDER BY … LIMIT pages).
type dialect struct {
	// name is "postgresql" or "cockroachdb".
	name string
	// snapshotAt reports whether a snapshot needs a timestamp read first
	// (CockroachDB: BEGIN AS OF SYSTEM TIME ts); otherwise beginSnapshot
	// is run as it is.
	snapshotAt bool
	// beginSnapshot starts a read-only transaction that reads one
	// consistent state; on CockroachDB it is completed with the timestamp.
	beginSnapshot string
	// asyncCommit makes the writer's commits asynchronous (Options.NoSync);
	// "" when the server has no such setting.
	asyncCommit string
	// lock is the default writer lock: "advisory" (PostgreSQL session
	// advisory locks) or "lease" (a lease row; CockroachDB's advisory-lock
	// functions are no-ops that always succeed, so they cannot be used).
	lock string
}

var (
	postgresDialect = dialect{
		name:          "postgresql",
		beginSnapshot: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
		asyncCommit:   "SET synchronous_commit = off",
		lock:          "advisory",
	}
	cockroachDialect = dialect{
		name:          "cockroachdb",
		snapshotAt:    true,
		beginSnapshot: "BEGIN TRANSACTION AS OF SYSTEM TIME %s",
		lock:          "lease",
	}
)

// detectDialect asks the server what it is.
func detectDialect(ctx context.Context, c *pgx.Conn) (dialect, error) {
	var v string
	if err := c.QueryRow(ctx, "SELECT version()").Scan(&v); err != nil {
		return dialect{}, fmt.Errorf("postgres: server version: %w", err)
	}
	if strings.Contains(v, "CockroachDB") {
		return cockroachDialect, nil
	}
	return postgresDialect, nil
}

// begin starts a snapshot transaction on c: one round trip on PostgreSQL
// (the BEGIN and a first statement that fixes the snapshot, pipelined),
// two on CockroachDB (the cluster's current timestamp, then the BEGIN).
func (d dialect) begin(ctx context.Context, c *pgx.Conn) error {
	if d.snapshotAt {
		var ts string
		if err := c.QueryRow(ctx, "SELECT cluster_logical_timestamp()::STRING").Scan(&ts); err != nil {
			return fmt.Errorf("postgres: snapshot timestamp: %w", err)
		}
		_, err := c.Exec(ctx, fmt.Sprintf(d.beginSnapshot, "'"+ts+"'"))
		return err
	}
	// A REPEATABLE READ transaction takes its snapshot at its first
	// statement, not at BEGIN: the SELECT fixes it now.
	b := &pgx.Batch{}
	b.Queue(d.beginSnapshot)
	b.Queue("SELECT 1")
	return c.SendBatch(ctx, b).Close()
}
