package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fasd-db/fasd/storage"
)

// CommitIf commits b in one transaction with a check that key holds want
// (nil: absent): BEGIN, the lock's fence and a read of the guard row FOR
// UPDATE in one round trip, then the writes and COMMIT, or ROLLBACK when
// the guard differs. Every commit of the store runs on the writer
// connection under its mutex, so nothing of this handle interleaves; other
// sessions (a store opened Shared by another process) are kept out by the
// row lock and the SERIALIZABLE isolation: of two sessions that both found
// the guard row absent, one fails, and that is a conflict.
func (s *store) CommitIf(sb storage.Batch, key, want []byte) error {
	b, ok := sb.(*batch)
	if !ok || b.s != s {
		return errors.New("postgres: CommitIf of a batch of another store")
	}
	if b.done {
		return storage.ErrBatchDone
	}
	if s.closed.Load() {
		return storage.ErrClosed
	}
	b.done = true
	ops := b.ops
	b.ops = nil
	ctx := context.Background()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return storage.ErrClosed
	}
	var err error
	for try := 0; ; try++ {
		err = s.commitIf(ctx, ops, key, want)
		if err != nil && s.writer.PgConn().TxStatus() != 'I' {
			if _, rerr := s.writer.Exec(ctx, "ROLLBACK"); rerr != nil {
				err = errors.Join(err, rerr)
				break
			}
		}
		// A serialization failure says nothing about the guard: the
		// server aborted the transaction because another one touched
		// what it read (even another guard key on the same page). Run it
		// again, reading the guard afresh, a few times before calling it
		// a conflict.
		if !serializationFailure(err) || try == commitIfRetries {
			break
		}
		time.Sleep(time.Duration(try+1) * commitIfBackoff)
	}
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, storage.ErrConflict):
		return err
	case errors.As(err, &pe) && serializationFailure(pe):
		return fmt.Errorf("guard %q: concurrent commit (%s, %d tries): %w", key, pe.Code, commitIfRetries+1, storage.ErrConflict)
	case fenceFailed(err):
		return fmt.Errorf("%w: the writer lease of %s was lost (another handle took the store over); nothing was committed", storage.ErrLocked, s.loc.name())
	case err != nil:
		return fmt.Errorf("postgres: guarded commit: %w", err)
	}
	return nil
}

// commitIfRetries is how many times CommitIf runs a transaction again
// after a serialization failure (SQLSTATE 40001 or 40P01), waiting
// commitIfBackoff longer before each.
const (
	commitIfRetries = 5
	commitIfBackoff = 5 * time.Millisecond
)

// serializationFailure reports whether err is the server aborting a
// transaction for a concurrent one (40001 serialization failure, 40P01
// deadlock): nothing was committed and running it again may succeed.
func serializationFailure(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// commitIf runs the guarded transaction; the caller holds wmu and rolls
// back on error.
func (s *store) commitIf(ctx context.Context, ops map[string]op, key, want []byte) error {
	// SERIALIZABLE: two sessions that both find the guard row absent
	// cannot both insert it; the loser fails with 40001, a conflict.
	p := &pgx.Batch{}
	p.Queue("BEGIN ISOLATION LEVEL SERIALIZABLE")
	s.lock.fence(p)
	p.Queue(s.sql.get+" FOR UPDATE", key)
	br := s.writer.SendBatch(ctx, p)
	var got []byte
	var err error
	for i := 0; i < p.Len()-1; i++ {
		if _, err = br.Exec(); err != nil {
			break
		}
	}
	if err == nil {
		err = br.QueryRow().Scan(&got)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			got, err = nil, nil
		case err == nil:
			got = nonNil(got)
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if (got == nil) != (want == nil) || !bytes.Equal(got, want) {
		if _, err := s.writer.Exec(ctx, "ROLLBACK"); err != nil {
			return err
		}
		return fmt.Errorf("guard %q: %w", key, storage.ErrConflict)
	}
	var setK, setV, delK [][]byte
	for k, o := range ops {
		if o.del {
			delK = append(delK, []byte(k))
		} else {
			setK, setV = append(setK, []byte(k)), append(setV, o.v)
		}
	}
	q := &pgx.Batch{}
	if len(delK) > 0 {
		q.Queue(s.sql.del, delK)
	}
	if len(setK) > 0 {
		q.Queue(s.sql.upsert, setK, setV)
	}
	q.Queue("COMMIT")
	return s.writer.SendBatch(ctx, q).Close()
}
