package storage

import (
	"errors"
	"fmt"
	"log/slog"
)

// Sentinel errors. Check them with errors.Is.
var (
	// ErrNotFound is returned by Get when the key is absent.
	ErrNotFound = errors.New("storage: key not found")
	// ErrClosed is returned by any operation on a closed Store.
	ErrClosed = errors.New("storage: store is closed")
	// ErrBackendMismatch is returned by Open when the directory holds a store
	// of the other backend.
	ErrBackendMismatch = errors.New("storage: backend mismatch")
	// ErrFormat is returned by Open when the store records a format version
	// this build does not know.
	ErrFormat = errors.New("storage: unknown format version")
	// ErrNotStore is returned by Open for a non-empty directory that is not a
	// fasd store.
	ErrNotStore = errors.New("storage: not a fasd store")
	// ErrBatchTooLarge is returned by Batch.Set or Batch.Delete when the
	// engine cannot make the batch any larger and still commit it atomically.
	ErrBatchTooLarge = errors.New("storage: batch too large for one atomic commit")
	// ErrBatchDone is returned when a committed or closed batch is used again.
	ErrBatchDone = errors.New("storage: batch already committed or closed")
	// ErrLocked is returned by Open when another process has the store open.
	ErrLocked = errors.New("storage: store is locked")
	// ErrNotLinked is returned by Open for a backend whose engine package
	// the program does not import (see Register).
	ErrNotLinked = errors.New("storage: backend engine not linked into this program")
	// ErrFault is returned by writes (Batch.Commit) once the engine has met
	// a write fault it cannot recover from in this process: a full disk
	// (ENOSPC), an I/O error (EIO), a read-only file system, or a fatal
	// error inside the engine. The store then refuses every further write
	// at once; reads go on. Close and reopen the store once the cause is
	// removed: what was committed before the fault is intact.
	ErrFault = errors.New("storage: write fault (disk full or I/O error), writes refused until the store is reopened")
	// ErrCorrupt marks an engine error that says the store's files are
	// damaged: a checksum mismatch, a file of the store missing or of the
	// wrong size.
	ErrCorrupt = errors.New("storage: store damaged")
	// ErrReadOnly is returned by writes on a store opened with
	// Options.ReadOnly.
	ErrReadOnly = errors.New("storage: store opened read-only")
)

// FileOp names a kind of file operation for Options.InjectFault.
type FileOp string

// The file operations Options.InjectFault is asked about.
const (
	OpCreate FileOp = "create" // creating (or reusing) a file
	OpWrite  FileOp = "write"  // writing to a file (also preallocation)
	OpSync   FileOp = "sync"   // syncing a file or directory
	OpRename FileOp = "rename" // renaming (or linking) a file
)

// FileOps lists the file operations Options.InjectFault is asked about.
var FileOps = []FileOp{OpCreate, OpWrite, OpSync, OpRename}

// Backend names a storage engine.
type Backend string

// The available backends.
const (
	Pebble Backend = "pebble"
	Badger Backend = "badger"
	// Postgres keeps the store in a table of a PostgreSQL database (or a
	// server that speaks its protocol, such as CockroachDB), opened by a
	// DSN instead of a directory (see IsDSN and storage/postgres).
	Postgres Backend = "postgres"
)

// FormatVersion is the storage format this build writes and reads.
const FormatVersion = 1

// Reader reads keys. Implementations: Store (the latest committed state) and
// Snapshot (a fixed state).
type Reader interface {
	// Get returns a copy of the value of key, owned by the caller, or an
	// error wrapping ErrNotFound.
	Get(key []byte) ([]byte, error)
	// NewIter returns an iterator over the keys in [lower, upper) in
	// ascending order. A nil lower means the first key, a nil upper means no
	// upper bound. The iterator starts unpositioned: call First or SeekGE.
	NewIter(lower, upper []byte) (Iterator, error)
}

// Iterator walks keys in ascending order.
//
// Key and Value return slices that stay valid only until the next call that
// moves the iterator or closes it; copy them to keep them.
type Iterator interface {
	// First moves to the first key in range and reports whether there is one.
	First() bool
	// SeekGE moves to the first key ≥ key in range.
	SeekGE(key []byte) bool
	// Next moves to the following key and reports whether there is one.
	Next() bool
	// Valid reports whether the iterator is positioned on a key.
	Valid() bool
	// Key returns the current key.
	Key() []byte
	// Value returns the current value.
	Value() ([]byte, error)
	// Err returns the first error the iterator met, if any.
	Err() error
	// Close releases the iterator. A second call is harmless.
	Close() error
}

// Snapshot is a consistent, immutable view of the store at the moment it was
// taken. It must be closed.
type Snapshot interface {
	Reader
	// Close releases the snapshot. A second call is harmless.
	Close() error
}

// Batch collects writes that Commit applies atomically: after a crash either
// all of them are visible or none. A Batch does not see its own writes
// through Get; read the store instead. Keys and values are copied, so the
// caller may reuse its buffers after Set returns.
type Batch interface {
	// Set stores value under key.
	Set(key, value []byte) error
	// Delete removes key; deleting an absent key is not an error.
	Delete(key []byte) error
	// Count returns the number of operations in the batch.
	Count() int
	// Len returns the approximate size of the batch in bytes.
	Len() int
	// Commit applies the batch durably (synced to disk unless the store was
	// opened with NoSync). The batch cannot be used afterwards.
	Commit() error
	// Close discards an uncommitted batch. A second call, or a call after
	// Commit, is harmless. Meant to be deferred.
	Close() error
}

// Store is an open key-value store.
type Store interface {
	Reader
	// NewBatch starts an atomic write batch.
	NewBatch() Batch
	// NewSnapshot takes a consistent read snapshot.
	NewSnapshot() (Snapshot, error)
	// Backend names the engine behind the store.
	Backend() Backend
	// Close flushes and closes the store. A second call returns nil.
	Close() error
}

// DefaultCacheBytes is the block cache size when Options.CacheBytes is 0.
// It fills as blocks are read, so a small store never uses all of it.
// Blocks are cached uncompressed; when the node records that sampling and
// subgraph building read do not fit, every read goes to the file system:
// materializing a trained 100,000-node graph (88 MB on disk) took 62 s with
// 64 MiB, 31 s with 256 MiB (BenchmarkMaterializeStore).
const DefaultCacheBytes = 256 << 20

// Options configure Open. A nil *Options means all defaults; zero fields
// mean the default.
type Options struct {
	// Backend selects the engine. Empty means: the backend recorded in an
	// existing store, or Pebble for a new one. Naming a backend that differs
	// from the recorded one fails with ErrBackendMismatch.
	Backend Backend
	// InMemory keeps the whole store in memory with the engine's own
	// in-memory file system (Pebble's vfs.NewMem, Badger's InMemory mode);
	// dir is then ignored. Meant for tests and benchmarks.
	InMemory bool
	// NoSync skips the fsync on commit. A crash may then lose the most
	// recent batches (never part of one). Bulk loaders use it and sync at
	// the end through their own completion marker.
	NoSync bool
	// CacheBytes is the engine's block cache size; 0 means
	// DefaultCacheBytes.
	CacheBytes int64
	// Logger receives the engine's own messages: the errors and warnings
	// of its background work (see BackgroundError) at slog.LevelError and
	// slog.LevelWarn, its routine chatter (flushes, compactions, replay on
	// open) at slog.LevelDebug. Nil means slog.Default(), so that a failing
	// flush or compaction is never silent; the default handler drops the
	// debug messages. Pass slog.New(slog.DiscardHandler) to silence the
	// engine; the problems are then still counted and handed to
	// OnBackgroundError.
	Logger *slog.Logger
	// OnBackgroundError, if set, is called with a *BackgroundError for each
	// error and warning an engine reports outside any call. It runs on the
	// engine's goroutines, possibly several at once and while the engine
	// holds its own locks: it must be safe for concurrent use, return
	// quickly and not call back into the store.
	OnBackgroundError func(error)
	// ReadOnly opens an existing store for reading: the engine runs no
	// flush and no compaction and writes nothing (Batch.Commit fails with
	// ErrReadOnly), and Open neither creates the directory nor writes the
	// marker. A missing or empty directory, or a path that is not a
	// directory, fails with ErrNotStore. Badger must truncate the torn end
	// of the log of a store that was not closed cleanly, which needs a
	// writable open: Open then falls back to one (Badger's own flushes and
	// compactions then run as in any writable open, nothing else writes).
	ReadOnly bool
	// Shared opens an existing store on a server (a DSN) without taking its
	// single-writer lock, beside the writer: for processes that read, or
	// write only through CommitIf (distributed workers, serve replicas).
	// Batch.Commit then fails with ErrReadOnly; CommitIf works. Local
	// engines are opened by one process only and refuse it.
	Shared bool
	// MustExist makes Open refuse, with ErrNotStore, a missing or empty
	// directory instead of creating a store there (ReadOnly implies it).
	MustExist bool
	// InjectFault is a test seam for I/O-fault injection. When set, the
	// engine asks it before each file create, write, sync and rename (never
	// before a read); a non-nil error fails that operation with it, as a
	// full disk or a failing device would. Only Pebble has a file-system
	// seam (its vfs): Open of a Badger store with InjectFault set fails.
	InjectFault func(op FileOp, path string) error
}

// withDefaults returns a copy of o (or of the zero Options for nil) with
// every zero field replaced by its default, for a store whose recorded
// backend is recorded ("" for a new store).
func (o *Options) withDefaults(recorded Backend) Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Backend == "" {
		c.Backend = recorded
	}
	if c.Backend == "" {
		c.Backend = Pebble
	}
	if c.CacheBytes == 0 {
		c.CacheBytes = DefaultCacheBytes
	}
	return c
}

// Validate reports every problem with the options.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	var errs []error
	if _, err := ParseBackend(string(o.Backend)); err != nil {
		errs = append(errs, err)
	}
	if o.InMemory && o.Backend == Postgres {
		errs = append(errs, fmt.Errorf("storage: the %s backend has no in-memory mode", Postgres))
	}
	if o.ReadOnly && o.InMemory {
		errs = append(errs, errors.New("storage: ReadOnly and InMemory exclude each other (an in-memory store starts empty)"))
	}
	if o.Shared && o.Backend != "" && o.Backend != Postgres {
		errs = append(errs, fmt.Errorf("storage: Shared needs a store on a server (the %s backend), not %s", Postgres, o.Backend))
	}
	if o.CacheBytes < 0 {
		errs = append(errs, fmt.Errorf("storage: CacheBytes must not be negative, got %d", o.CacheBytes))
	}
	return errors.Join(errs...)
}

// ParseBackend turns a user-supplied name into a Backend.
func ParseBackend(name string) (Backend, error) {
	switch Backend(name) {
	case Pebble, Badger, Postgres:
		return Backend(name), nil
	case "":
		return "", nil
	}
	return "", fmt.Errorf("storage: unknown backend %q (want %q, %q or %q)", name, Pebble, Badger, Postgres)
}

// PrefixEnd returns the smallest key greater than every key with the given
// prefix, for use as an exclusive upper bound, or nil if there is none (the
// prefix is all 0xff bytes).
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}
