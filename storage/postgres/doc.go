// Package postgres links a PostgreSQL engine into a program as the
// storage backend storage.Postgres: the store is one table of a database
// on a server that speaks the PostgreSQL protocol, so that several
// processes on several machines can open it. Import it for its side
// effect:
//
//	import _ "github.com/fasd-db/fasd/storage/postgres"
//
// and open stores with storage.Open, giving a DSN where a directory would
// go:
//
//	s, err := storage.Open("postgres://fasd@db.example:5432/graphs?fasd_table=nba", nil)
//
// It is the only package of the module that imports pgx
// (github.com/jackc/pgx/v5, with its connection pool pgxpool).
//
// # The DSN
//
// A postgres:// or postgresql:// URL as libpq and pgx read it (host,
// port, user, password, database, sslmode, pool_max_conns, …), plus two
// parameters of this package, removed before the DSN reaches pgx:
//
//   - fasd_table=[schema.]table names the store's table (default
//     fasd_store, in the connection's search path; lower-case letters,
//     digits and _). Several stores share a database by naming different
//     tables; the schema is created if missing.
//   - fasd_lock=advisory|lease chooses the writer lock (default: advisory
//     on PostgreSQL, lease on CockroachDB; see below).
//
// The table is created on first open: (k BYTEA PRIMARY KEY, v BYTEA NOT
// NULL). bytea compares bytewise, shorter first on a common prefix, which
// is bytes.Compare: the table's key order is the seam's.
//
// # How the seam maps to SQL
//
//   - Get is one SELECT; GetMany (storage.MultiGetter) reads any number
//     of keys in one SELECT … WHERE k = ANY($1).
//   - A Batch keeps the last write of each key and commits as one
//     transaction in one round trip: BEGIN, one DELETE … = ANY($1), one
//     INSERT … SELECT unnest($1, $2) ON CONFLICT (k) DO UPDATE, COMMIT,
//     pipelined. Batches have no size bound (storage.HintsOf suggests
//     4 MiB).
//   - A Snapshot is a READ ONLY REPEATABLE READ transaction on a pooled
//     connection of its own, held until Close; Close of the store ends
//     the snapshots still open.
//   - Iterators read pages by key (k ≥ $1 [AND k < $3] ORDER BY k LIMIT
//     $2, then k > last key), 128 rows first and twice as many per page
//     up to 8192. An iterator on a Snapshot reads in its transaction. An
//     iterator on the store reads one consistent state: when its first
//     page is not its last, it starts a snapshot of its own and reads the
//     first page again in it before the caller sees a key. (An iterator
//     on the store that is sought backwards, before the key its first
//     query started at, reads the latest state from there: the seam
//     promises consistency across reads only of snapshots.)
//   - Options.NoSync sets synchronous_commit = off on the writer
//     connection: a crash of the server may lose the latest commits,
//     never part of one. Options.CacheBytes and Options.InMemory do not
//     apply.
//
// # One writer
//
// As with the local engines, one handle has a store open at a time; a
// second Open fails with storage.ErrLocked. On PostgreSQL the handle holds
// a session advisory lock (pg_try_advisory_lock of a hash of the table
// name) on a connection of its own, and every commit runs on that
// connection: a commit that succeeds was made by the holder, and when the
// holder dies the server ends its session and frees the lock at once.
//
// With fasd_lock=lease the handle instead takes a lease row in the table
// <table>_writer, renews it every 10 s (it lives 30 s), and every commit
// checks, inside its own transaction, that the row still holds its token:
// a handle that stalled past its lease while another took over cannot
// commit (storage.ErrLocked). After a crash the store can be reopened
// once the lease has expired.
//
// # Guarded commits and shared handles
//
// CommitIf (storage.CondCommitter) runs BEGIN ISOLATION LEVEL
// SERIALIZABLE, the writer fence and a read of the guard row FOR UPDATE in
// one round trip, compares, then writes and commits (or rolls back and
// reports storage.ErrConflict) in a second. A serialization failure
// (40001, 40P01) aborts the transaction without saying anything about the
// guard — concurrent guarded commits on different keys of one page cause
// them — so CommitIf runs it again, reading the guard afresh, up to five
// times before reporting a conflict; of two sessions that both found the
// guard row absent, the loser's retry finds it present: a conflict. A store opened with
// storage.Options.Shared takes no writer lock, refuses plain commits with
// storage.ErrReadOnly and writes only through CommitIf: the distributed
// workers of the query engine open the store that way beside its writer.
//
// # CockroachDB
//
// The SQL above is in the subset PostgreSQL and CockroachDB share. What
// differs is detected at open (SELECT version()) and kept in one place
// (the dialect type):
//
//   - snapshots: CockroachDB spells them BEGIN TRANSACTION AS OF SYSTEM
//     TIME ts, with ts the cluster_logical_timestamp() read just before;
//   - asynchronous commit: CockroachDB has no synchronous_commit = off;
//     NoSync does nothing there;
//   - the writer lock: CockroachDB's pg_try_advisory_lock is a no-op that
//     always succeeds, so the lease is the default there.
//
// The tests of this package run against PostgreSQL only (CockroachDB is
// not installable where they were written); the lease lock, the part
// CockroachDB depends on, is tested on PostgreSQL with fasd_lock=lease.
package postgres
