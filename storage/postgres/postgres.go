package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/internal/engine"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// defaultMaxConns bounds the pool when the DSN does not (pool_max_conns):
// every open snapshot, and every store iterator longer than one page,
// holds a connection until it is closed.
const defaultMaxConns = 32

// store is a storage.Store on one table.
type store struct {
	loc     location
	d       dialect
	pool    *pgxpool.Pool
	rep     *engine.Reporter
	sql     statements
	closed  atomic.Bool
	once    sync.Once
	cerr    error
	wmu     sync.Mutex // serializes commits on writer
	writer  *pgx.Conn  // the connection every commit runs on
	lock    writerLock
	shared  bool // opened without the writer lock (Options.Shared)
	openMu  sync.Mutex
	openTxs map[*snapshot]struct{} // closed with the store
}

// statements are the SQL of one table.
type statements struct {
	get, getMany, upsert, del string
	// page[bounded][exclusive] reads one page of keys from $1 (≥, or >
	// when exclusive), below $3 when bounded, at most $2 rows.
	page [2][2]string
}

func newStatements(t string) statements {
	s := statements{
		get:     "SELECT v FROM " + t + " WHERE k = $1",
		getMany: "SELECT k, v FROM " + t + " WHERE k = ANY($1::BYTEA[])",
		upsert: "INSERT INTO " + t + " (k, v) SELECT * FROM unnest($1::BYTEA[], $2::BYTEA[]) " +
			"ON CONFLICT (k) DO UPDATE SET v = excluded.v",
		del: "DELETE FROM " + t + " WHERE k = ANY($1::BYTEA[])",
	}
	for b, upper := range []string{"", " AND k < $3"} {
		for x, op := range []string{">=", ">"} {
			s.page[b][x] = "SELECT k, v FROM " + t + " WHERE k " + op + " $1" + upper + " ORDER BY k LIMIT $2"
		}
	}
	return s
}

// open is the storage.OpenFunc of the backend: dsn is the DSN Open was
// given.
func open(dsn string, o storage.Options) (_ storage.Store, err error) {
	loc, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(loc.conn)
	if err != nil {
		return nil, fmt.Errorf("postgres: DSN: %w", err)
	}
	if u, perr := url.Parse(loc.conn); perr == nil && !u.Query().Has("pool_max_conns") {
		cfg.MaxConns = defaultMaxConns
	}
	ctx := context.Background()
	s := &store{loc: loc, rep: engine.NewReporter(storage.Postgres, o), sql: newStatements(loc.qualified("")),
		openTxs: map[*snapshot]struct{}{}}
	s.writer, err = pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.writer.Close(ctx))
			if s.pool != nil {
				s.pool.Close()
			}
		}
	}()
	if s.d, err = detectDialect(ctx, s.writer); err != nil {
		return nil, err
	}
	if loc.schema != "" {
		if _, err := s.writer.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS "`+loc.schema+`"`); err != nil {
			return nil, fmt.Errorf("postgres: create schema %s: %w", loc.schema, err)
		}
	}
	if _, err := s.writer.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+loc.qualified("")+" (k BYTEA PRIMARY KEY, v BYTEA NOT NULL)"); err != nil {
		return nil, fmt.Errorf("postgres: create table %s: %w", loc.name(), err)
	}
	if o.NoSync && s.d.asyncCommit != "" {
		if _, err := s.writer.Exec(ctx, s.d.asyncCommit); err != nil {
			return nil, fmt.Errorf("postgres: asynchronous commit: %w", err)
		}
	}
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("postgres: pool: %w", err)
	}
	lock := loc.lock
	if lock == "" {
		lock = s.d.lock
	}
	s.shared = o.Shared
	switch {
	case o.Shared:
		s.lock = sharedLock{}
	case lock == "advisory":
		s.lock, err = acquireAdvisory(ctx, s.writer, loc)
	default:
		s.lock, err = acquireLease(ctx, s.pool, loc, s.rep)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *store) Backend() storage.Backend { return storage.Postgres }

func (s *store) BackgroundCounts() storage.BackgroundCounts { return s.rep.Counts() }

// Dialect names the server the store talks to: "postgresql" or
// "cockroachdb".
func (s *store) Dialect() string { return s.d.name }

func (s *store) Get(key []byte) ([]byte, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	return get(context.Background(), s.pool, s.sql.get, key)
}

func (s *store) GetMany(keys [][]byte) ([][]byte, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	return getMany(context.Background(), s.pool, s.sql.getMany, keys)
}

// querier is a pool or a connection.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func get(ctx context.Context, q querier, sql string, key []byte) ([]byte, error) {
	var v []byte
	err := q.QueryRow(ctx, sql, nonNil(key)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: %q", storage.ErrNotFound, key)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get: %w", err)
	}
	return nonNil(v), nil
}

func getMany(ctx context.Context, q querier, sql string, keys [][]byte) ([][]byte, error) {
	vals := make([][]byte, len(keys))
	if len(keys) == 0 {
		return vals, nil
	}
	at := make(map[string][]int, len(keys))
	arg := make([][]byte, 0, len(keys))
	for i, k := range keys {
		if _, dup := at[string(k)]; !dup {
			arg = append(arg, nonNil(k))
		}
		at[string(k)] = append(at[string(k)], i)
	}
	rows, err := q.Query(ctx, sql, arg)
	if err != nil {
		return nil, fmt.Errorf("postgres: get many: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("postgres: get many: %w", err)
		}
		v = nonNil(v)
		for j, i := range at[string(k)] {
			if j > 0 {
				v = append([]byte{}, v...)
			}
			vals[i] = v
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: get many: %w", err)
	}
	return vals, nil
}

// nonNil maps nil to an empty slice: pgx sends a nil []byte as NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func (s *store) NewIter(lower, upper []byte) (storage.Iterator, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	return newIter(s, nil, lower, upper), nil
}

func (s *store) NewSnapshot() (storage.Snapshot, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	return s.snapshot()
}

// snapshot acquires a connection and starts a read-only snapshot
// transaction on it.
func (s *store) snapshot() (*snapshot, error) {
	ctx := context.Background()
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: snapshot: %w", err)
	}
	if err := s.d.begin(ctx, c.Conn()); err != nil {
		c.Release() // a connection left in a transaction is closed by the pool
		return nil, fmt.Errorf("postgres: snapshot: %w", err)
	}
	snap := &snapshot{s: s, conn: c}
	s.openMu.Lock()
	defer s.openMu.Unlock()
	if s.closed.Load() {
		snap.release()
		return nil, storage.ErrClosed
	}
	s.openTxs[snap] = struct{}{}
	return snap, nil
}

func (s *store) NewBatch() storage.Batch {
	if s.closed.Load() {
		return engine.ClosedBatch{}
	}
	return &batch{s: s, ops: map[string]op{}}
}

func (s *store) Close() error {
	s.once.Do(func() {
		s.closed.Store(true)
		s.openMu.Lock()
		open := s.openTxs
		s.openTxs = nil
		s.openMu.Unlock()
		for snap := range open {
			snap.mu.Lock()
			snap.release()
			snap.mu.Unlock()
		}
		ctx := context.Background()
		s.wmu.Lock()
		defer s.wmu.Unlock()
		s.cerr = s.lock.release(ctx)
		s.cerr = errors.Join(s.cerr, s.writer.Close(ctx))
		s.pool.Close()
	})
	return s.cerr
}

// snapshot is a read-only transaction on a connection of its own.
type snapshot struct {
	s    *store
	mu   sync.Mutex // the connection runs one query at a time
	conn *pgxpool.Conn
}

// release ends the transaction and returns the connection (the pool
// closes a connection released inside a transaction). Callers hold mu.
func (t *snapshot) release() {
	if t.conn == nil {
		return
	}
	ctx := context.Background()
	if _, err := t.conn.Exec(ctx, "ROLLBACK"); err != nil {
		t.s.rep.Debugf("postgres: end snapshot: %v", err)
	}
	t.conn.Release()
	t.conn = nil
}

func (t *snapshot) Get(key []byte) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn == nil {
		return nil, storage.ErrClosed
	}
	return get(context.Background(), t.conn, t.s.sql.get, key)
}

func (t *snapshot) GetMany(keys [][]byte) ([][]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn == nil {
		return nil, storage.ErrClosed
	}
	return getMany(context.Background(), t.conn, t.s.sql.getMany, keys)
}

func (t *snapshot) NewIter(lower, upper []byte) (storage.Iterator, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn == nil {
		return nil, storage.ErrClosed
	}
	return newIter(t.s, t, lower, upper), nil
}

// page reads one page in the snapshot.
func (t *snapshot) page(sql string, args []any) (keys, vals [][]byte, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn == nil {
		return nil, nil, storage.ErrClosed
	}
	return readPage(context.Background(), t.conn, sql, args)
}

func (t *snapshot) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn == nil {
		return nil
	}
	t.s.openMu.Lock()
	delete(t.s.openTxs, t)
	t.s.openMu.Unlock()
	t.release()
	return nil
}

// op is one pending write: a value, or a delete.
type op struct {
	v   []byte
	del bool
}

// batch collects writes; the last write of a key wins, as it would if
// they were applied in order.
type batch struct {
	s     *store
	ops   map[string]op
	count int
	size  int
	done  bool
}

func (b *batch) Set(key, value []byte) error {
	if b.done {
		return storage.ErrBatchDone
	}
	b.ops[string(key)] = op{v: append([]byte{}, value...)}
	b.count++
	b.size += len(key) + len(value) + 8
	return nil
}

func (b *batch) Delete(key []byte) error {
	if b.done {
		return storage.ErrBatchDone
	}
	b.ops[string(key)] = op{del: true}
	b.count++
	b.size += len(key) + 8
	return nil
}

func (b *batch) Count() int { return b.count }
func (b *batch) Len() int   { return b.size }

// Commit runs the batch as one transaction on the writer connection, in
// one round trip: BEGIN, the lock's fence, one DELETE of every deleted
// key, one upsert of every set key, COMMIT, pipelined.
func (b *batch) Commit() error {
	if b.done {
		return storage.ErrBatchDone
	}
	s := b.s
	if s.closed.Load() {
		return storage.ErrClosed
	}
	if s.shared {
		b.done, b.ops = true, nil
		return fmt.Errorf("%w: %s is open shared (without the writer lock); only guarded commits write", storage.ErrReadOnly, s.loc.name())
	}
	b.done = true
	var setK, setV, delK [][]byte
	for k, o := range b.ops {
		if o.del {
			delK = append(delK, []byte(k))
		} else {
			setK, setV = append(setK, []byte(k)), append(setV, o.v)
		}
	}
	b.ops = nil
	p := &pgx.Batch{}
	p.Queue("BEGIN")
	s.lock.fence(p)
	if len(delK) > 0 {
		p.Queue(s.sql.del, delK)
	}
	if len(setK) > 0 {
		p.Queue(s.sql.upsert, setK, setV)
	}
	p.Queue("COMMIT")
	ctx := context.Background()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return storage.ErrClosed
	}
	err := s.writer.SendBatch(ctx, p).Close()
	if err != nil && s.writer.PgConn().TxStatus() != 'I' {
		if _, rerr := s.writer.Exec(ctx, "ROLLBACK"); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	switch {
	case fenceFailed(err):
		return fmt.Errorf("%w: the writer lease of %s was lost (another handle took the store over); nothing was committed", storage.ErrLocked, s.loc.name())
	case err != nil:
		return fmt.Errorf("postgres: commit: %w", err)
	}
	return nil
}

func (b *batch) Close() error {
	b.done = true
	b.ops = nil
	return nil
}

func init() { storage.Register(storage.Postgres, open) }
