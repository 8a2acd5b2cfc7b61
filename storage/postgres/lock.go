package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/internal/engine"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// writerLock makes one store handle the only writer of a table.
type writerLock interface {
	// fence queues, at the start of a commit's pipeline, the statements
	// that fail the transaction when the lock is no longer held.
	fence(b *pgx.Batch)
	// release gives the lock up.
	release(ctx context.Context) error
}

// advisoryLock is a PostgreSQL session advisory lock held by the writer
// connection. Every commit runs on that connection, so a commit that
// succeeds was made by the holder: when the session ends (the process
// died, the network dropped it) the server releases the lock and the
// connection is gone, so the old handle cannot commit any more.
type advisoryLock struct {
	conn *pgx.Conn
	key  int64
}

func acquireAdvisory(ctx context.Context, conn *pgx.Conn, loc location) (*advisoryLock, error) {
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", loc.lockKey()).Scan(&ok); err != nil {
		return nil, fmt.Errorf("postgres: writer lock: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: table %s is open in another process or handle (its advisory lock is held); close it or use another fasd_table",
			storage.ErrLocked, loc.name())
	}
	return &advisoryLock{conn: conn, key: loc.lockKey()}, nil
}

func (*advisoryLock) fence(*pgx.Batch) {}

func (l *advisoryLock) release(ctx context.Context) error {
	_, err := l.conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", l.key)
	return err
}

// leaseTTL is how long a lease lives without renewal; the holder renews it
// every leaseTTL/3 and on every commit.
const leaseTTL = 30 * time.Second

// leaseLock is a lease row in the table <table>_writer: (1, token,
// expires). It is taken when absent or expired, renewed by the holder, and
// every commit first checks, in its own transaction, that the row still
// holds this handle's token: a handle that lost its lease (it stalled past
// the expiry and another took over) cannot commit. The check is in the
// data, not in the clocks of the clients: expiry is compared with the
// server's now().
type leaseLock struct {
	pool   *pgxpool.Pool
	table  string
	token  []byte
	ttl    string
	stop   chan struct{}
	done   sync.WaitGroup
	report *engine.Reporter
}

func acquireLease(ctx context.Context, pool *pgxpool.Pool, loc location, rep *engine.Reporter) (*leaseLock, error) {
	l := &leaseLock{pool: pool, table: loc.qualified("_writer"), token: []byte(rand.Text()),
		ttl: fmt.Sprintf("%d milliseconds", leaseTTL.Milliseconds()), stop: make(chan struct{}), report: rep}
	if _, err := pool.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+l.table+
		" (id INT PRIMARY KEY, token BYTEA NOT NULL, expires TIMESTAMPTZ NOT NULL)"); err != nil {
		return nil, fmt.Errorf("postgres: create lease table: %w", err)
	}
	tag, err := pool.Exec(ctx, "INSERT INTO "+l.table+" AS l (id, token, expires) VALUES (1, $1, now() + $2::INTERVAL) "+
		"ON CONFLICT (id) DO UPDATE SET token = excluded.token, expires = excluded.expires WHERE l.expires < now()", l.token, l.ttl)
	if err != nil {
		return nil, fmt.Errorf("postgres: writer lease: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return nil, fmt.Errorf("%w: table %s is open in another process or handle (its writer lease is held and has not expired); close it or use another fasd_table",
			storage.ErrLocked, loc.name())
	}
	l.done.Add(1)
	go l.renew()
	return l, nil
}

// renew extends the lease every third of its lifetime until release.
func (l *leaseLock) renew() {
	defer l.done.Done()
	t := time.NewTicker(leaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), leaseTTL/3)
		tag, err := l.pool.Exec(ctx, "UPDATE "+l.table+" SET expires = now() + $2::INTERVAL WHERE id = 1 AND token = $1 AND expires > now()", l.token, l.ttl)
		cancel()
		switch {
		case err != nil:
			l.report.Warnf("renewing the writer lease of %s: %v", l.table, err)
		case tag.RowsAffected() == 0:
			l.report.Errorf("the writer lease of %s was lost: commits will fail with ErrLocked", l.table)
			return
		}
	}
}

func (l *leaseLock) fence(b *pgx.Batch) {
	b.Queue("UPDATE "+l.table+" SET expires = now() + $2::INTERVAL WHERE id = 1 AND token = $1 AND expires > now()", l.token, l.ttl)
	// 1/0 fails the transaction when the row no longer holds the token.
	b.Queue("SELECT 1 / count(*) FROM "+l.table+" WHERE id = 1 AND token = $1 AND expires > now()", l.token)
}

func (l *leaseLock) release(ctx context.Context) error {
	close(l.stop)
	l.done.Wait()
	_, err := l.pool.Exec(ctx, "DELETE FROM "+l.table+" WHERE id = 1 AND token = $1", l.token)
	return err
}

// fenceFailed reports whether err is the lease check of a commit failing.
func fenceFailed(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "22012" // division_by_zero
}

// sharedLock is the lock of a store opened shared: it holds nothing and
// fences nothing; such a store writes only through CommitIf, whose guard
// key is the fence.
type sharedLock struct{}

func (sharedLock) fence(*pgx.Batch) {}

func (sharedLock) release(context.Context) error { return nil }
