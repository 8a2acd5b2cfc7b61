// Package storage is the key-value seam of fasd: a small ordered key-value
// Store interface with three real engines behind it, Pebble v2 (the
// default) and Badger v4 in a local directory, and PostgreSQL (a table on
// a server, opened by a postgres:// DSN where a directory would go; see
// IsDSN and storage/postgres).
//
// This package holds the interfaces, Open, the store marker and the engine
// registry, and imports no engine: each lives in its own package
// (storage/pebble, storage/badger, storage/postgres) that registers itself when a program
// imports it (see Register), as database/sql drivers do. The layers above
// (the graph index, the query engine, the training runs) therefore depend
// on no engine and on nothing an engine brings in; the programs (the fasd
// command) and the tests link the engines. Open of a backend that is not
// linked fails with ErrNotLinked.
//
// # Concepts
//
// A Store maps byte keys to byte values in lexicographic key order. It offers
// point reads (Get), ordered range iteration over [lower, upper) (NewIter),
// atomic multi-key writes (Batch) and consistent read snapshots (Snapshot).
// Nothing in this package knows what the keys mean: the graph index, the
// trained models and the materialized views define their own key spaces on
// top of it (see the doc of package index for the graph's key layout).
//
// # Key layout owned by this package
//
// Keys whose first byte is 0x00 are reserved for the storage layer itself:
//
//	0x00 "storage/backend"  → backend name, "pebble", "badger" or "postgres"
//	0x00 "storage/format"   → format version, decimal ASCII ("1")
//
// Every other first byte belongs to the layers above. An on-disk store also
// carries a small text file named FASD-STORE in its directory that repeats the
// backend and the format version, so that a directory can be recognised (and
// a mismatching backend refused) before either engine touches its files:
//
//	fasd-store
//	backend=pebble
//	format=1
//
// Opening a directory whose marker names the other backend fails with
// ErrBackendMismatch; an unknown format version fails with ErrFormat; a
// non-empty directory without a marker fails with ErrNotStore. A store on
// a server has no directory and no marker: its metadata keys alone record
// backend and format.
//
// # Batched reads
//
// A reader that needs many keys at once calls GetMany: a store on a
// server reads them in one round trip (it implements MultiGetter), a
// local engine with one Get each, which costs it nothing more.
//
// # Guarded commits
//
// CommitIf commits a batch only if one guard key holds an expected value
// (or is absent), and reports ErrConflict otherwise, committing nothing: the
// compare-and-set that leases and fencing tokens above this layer are built
// on. A store on a server checks and writes in one transaction (it
// implements CondCommitter); a local engine, open in one process only,
// serialises guarded commits with a mutex of the process.
//
// # Concurrency
//
// Get, NewIter and NewSnapshot are safe to call from concurrent goroutines,
// also while a batch commits. A Batch, an Iterator and a Snapshot are each
// used by one goroutine at a time. A reader that wants one consistent view of
// several keys reads through a Snapshot; a writer that wants several keys to
// change together writes one Batch. The layers above run one writer at a
// time; the engines would accept more, but no code here relies on it.
//
// # Background errors
//
// Both engines work outside any call: flushes, compactions, Badger's
// value-log upkeep and cache monitor. A problem found there cannot be
// returned to a caller, so each store reports it in three ways: through
// Options.Logger (slog; errors at slog.LevelError, warnings at
// slog.LevelWarn, with attributes backend and err; nil means slog.Default()),
// through the Options.OnBackgroundError hook as a *BackgroundError, and in
// counters read with BackgroundStats. The engines' routine messages go to
// the same logger at slog.LevelDebug and are neither counted nor hooked.
// The log is rate-limited (a few reports, then at most one per 10 s with
// the number left out); the counters and the hook see every report.
//
// # Write faults
//
// A full disk (ENOSPC, EDQUOT), an I/O error (EIO), a read-only file
// system, or one of Pebble's fatal conditions (its Logger.Fatalf, which
// here reports and returns instead of panicking) puts the store in a
// write-fault state: the write that met it and every later Batch.Commit
// fail with an error wrapping ErrFault, reads go on, and Close returns
// within a few seconds (abandoning an engine that waits on a flush the
// disk keeps failing) with the fault as its error. After one of Pebble's
// fatal conditions Close does not close the engine at all (its state is
// not to be trusted; its teardown can crash a compaction): the engine and
// the directory lock are left to the process's exit. What was committed
// before the fault is intact; reopen the store once space is freed.
// Nothing in this package panics or exits the process on such a fault.
//
// Options.InjectFault is the seam of the I/O-fault tests: Pebble asks it
// before every file create, write, sync and rename (through its vfs).
//
// # Read-only stores
//
// Options.ReadOnly opens an existing store without writing anything: no
// flush, no compaction, no marker, commits fail with ErrReadOnly. The read
// commands of the fasd CLI open their store this way, so that they work
// on a full disk and never turn a wrong directory into a store.
//
// # Caveats
//
// Badger bounds the size of one atomic batch (about 15% of its memtable, a
// few MiB with the options used here). Batch.Set reports ErrBatchTooLarge
// when that bound is hit; bulk writers commit in chunks well below it (see
// Batch.Len), and rely on a higher-level marker for all-or-nothing semantics.
// Pebble has no such bound.
package storage
