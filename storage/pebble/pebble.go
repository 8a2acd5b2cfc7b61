package pebble

import (
	"errors"
	"fmt"
	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/internal/engine"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pebbledb "github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// pebbleStore is the Pebble v2 backend.
type pebbleStore struct {
	db     *pebbledb.DB
	rep    *engine.Reporter
	wo     *pebbledb.WriteOptions
	ro     bool
	closed atomic.Bool
	once   sync.Once
	cerr   error
}

// pebbleLogger hands Pebble's messages to the store's reporter: Errorf is
// a background error, Infof routine chatter at debug level. Fatalf is
// Pebble's "cannot go on": it reports the error, records it as the
// store's fatal write fault (every later commit fails with
// storage.ErrFault) and never panics. A fatal commit error (the log write
// of a commit failed) returns to the commit, which then fails. Any other
// fatal condition (a MANIFEST it could not write, a broken invariant),
// raised on one of Pebble's own goroutines, parks that goroutine for good:
// Pebble's code after a Fatalf that returns would go on from a state it
// did not expect and can delete a table its MANIFEST still names. Reads
// of the store go on; Close then leaves the engine to the process's exit.
type pebbleLogger struct{ r *engine.Reporter }

func (l pebbleLogger) Infof(format string, args ...any)  { l.r.Debugf(format, args...) }
func (l pebbleLogger) Errorf(format string, args ...any) { l.r.Errorf(format, args...) }
func (l pebbleLogger) Fatalf(format string, args ...any) {
	commit := strings.HasPrefix(format, "pebble: fatal commit error")
	if !strings.HasPrefix(format, "pebble:") {
		format = "pebble: fatal: " + format
	}
	msg := fmt.Sprintf(format, args...)
	var cause error = errors.New(msg)
	for _, a := range args {
		if err, ok := a.(error); ok {
			cause = fmt.Errorf("%s: %w", strings.TrimSuffix(msg, ": "+err.Error()), err)
			break
		}
	}
	l.r.FailFatal(cause)
	l.r.Report(slog.LevelError, cause, msg)
	if !commit {
		select {} // parked: see the type's doc
	}
}

// pebbleEvents routes the Pebble events that signal a problem to the
// reporter. Pebble's default for a corruption is Fatalf; here it is an
// error report, and the read that met it fails on its own. A background
// error that is a write fault (full disk, I/O error) becomes the store's
// write fault: a flush or compaction that cannot write now will not write
// on retry either, and a commit that waits for it would wait forever.
func pebbleEvents(r *engine.Reporter) *pebbledb.EventListener {
	return &pebbledb.EventListener{
		BackgroundError: func(err error) {
			if engine.IsWriteFault(err) {
				r.Fail(err)
			}
			r.Report(slog.LevelError, err, err.Error())
		},
		DataCorruption: func(info pebbledb.DataCorruptionInfo) {
			r.Report(slog.LevelError, info.Details, fmt.Sprintf("on-disk corruption in %s: %v", info.Path, info.Details))
		},
		LowDiskSpace: func(info pebbledb.LowDiskSpaceInfo) {
			r.Report(slog.LevelWarn, nil, info.String())
		},
	}
}

// corrupt marks err with storage.ErrCorrupt when Pebble says the files
// are damaged: its corruption marker (checksum mismatches and the like) or
// a table whose size is not the one its MANIFEST records (Pebble's open
// reports that unmarked).
func corrupt(err error) error {
	if err == nil || errors.Is(err, storage.ErrCorrupt) {
		return err
	}
	if pebbledb.IsCorruptionError(err) || strings.Contains(err.Error(), "object size mismatch") {
		return fmt.Errorf("%w: %w", storage.ErrCorrupt, err)
	}
	return err
}

// recoverFault turns a panic of Pebble's on the calling goroutine whose
// value is a write fault (see engine.IsWriteFault) into the store's write
// fault, returned through *err. Pebble panics where the sync of a
// directory fails (atomicfs.Marker.Move, when it moves the MANIFEST or
// format marker), on the goroutine that asked for the move: Open, a
// commit that rotates the log, Close. Any other panic goes on.
func recoverFault(rep *engine.Reporter, err *error) {
	r := recover()
	if r == nil {
		return
	}
	e, ok := r.(error)
	if !ok || !engine.IsWriteFault(e) {
		panic(r)
	}
	rep.FailFatal(e)
	rep.Report(slog.LevelError, e, "pebble: aborted on a write fault: "+e.Error())
	*err = errors.Join(*err, rep.Fault())
}

// recoverOpen is recoverFault for Open, which turns any other panic of
// Pebble's into an error too: Pebble's clean-up after an open that failed
// on a file fault can itself panic (seen: its file cache's "element has
// outstanding references" after an EIO while opening), and an Open that
// panicked has handed no database to anyone, so nothing is left to
// protect by crashing.
func recoverOpen(rep *engine.Reporter, err *error) {
	r := recover()
	if r == nil {
		return
	}
	if e, ok := r.(error); ok && engine.IsWriteFault(e) {
		rep.FailFatal(e)
		rep.Report(slog.LevelError, e, "pebble: aborted on a write fault: "+e.Error())
		*err = errors.Join(*err, rep.Fault())
		return
	}
	*err = errors.Join(*err, fmt.Errorf("pebble: open failed, and Pebble panicked cleaning up: %v", r))
}

// openRecover opens the Pebble database, turning a write fault's panic
// into an error (see recoverFault) and bounding the wait once a fault is
// reported: after replaying its log Pebble flushes the memtable and waits
// for the flush, which a full disk fails again and again.
func openRecover(rep *engine.Reporter, dir string, popts *pebbledb.Options) (*pebbledb.DB, error) {
	var db *pebbledb.DB
	err := rep.Within("open", closeBound, func() (err error) {
		defer recoverOpen(rep, &err)
		d, err := pebbledb.Open(dir, popts)
		db = d
		return err
	})
	if err != nil {
		return nil, err
	}
	return db, nil
}

// closeBound is how long Close waits for Pebble once the store has a write
// fault.
const closeBound = 3 * time.Second

// faultFS wraps fs so that every create, write, sync and rename first asks
// inject (see storage.Options.InjectFault).
func faultFS(fs vfs.FS, inject func(storage.FileOp, string) error) vfs.FS {
	return errorfs.Wrap(fs, errorfs.InjectorFunc(func(op errorfs.Op) error {
		var k storage.FileOp
		switch op.Kind {
		case errorfs.OpCreate, errorfs.OpReuseForWrite:
			k = storage.OpCreate
		case errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFilePreallocate:
			k = storage.OpWrite
		case errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo:
			k = storage.OpSync
		case errorfs.OpRename, errorfs.OpLink:
			k = storage.OpRename
		default:
			return nil
		}
		return inject(k, op.Path)
	}))
}

func openPebble(dir string, o storage.Options) (storage.Store, error) {
	cache := pebbledb.NewCache(o.CacheBytes)
	defer cache.Unref()
	rep := engine.NewReporter(storage.Pebble, o)
	popts := &pebbledb.Options{
		Cache:              cache,
		Logger:             pebbleLogger{rep},
		EventListener:      pebbleEvents(rep),
		FormatMajorVersion: pebbledb.FormatNewest,
		MemTableSize:       64 << 20,
	}
	// Bloom filters (10 bits per key, about 1 % false positives) on every
	// level: a point Get skips the tables that cannot hold its key, which
	// matters right after a bulk load leaves many overlapping L0 tables.
	// Tables written without a filter are still read correctly.
	for i := range popts.Levels {
		popts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	if o.InMemory {
		popts.FS = vfs.NewMem()
	}
	if o.ReadOnly {
		// No flush, no compaction, no file written; the log of a store
		// that was not closed cleanly is replayed into memory only.
		popts.ReadOnly = true
		popts.ErrorIfNotExists = true
	}
	if o.InjectFault != nil {
		base := popts.FS
		if base == nil {
			base = vfs.Default
		}
		popts.FS = faultFS(base, o.InjectFault)
	}
	db, err := openRecover(rep, dir, popts)
	if o.ReadOnly && errors.Is(err, pebbledb.ErrDBDoesNotExist) {
		rep.Detach()
		return nil, fmt.Errorf("%w: %s has a marker but no Pebble database (its creation did not finish): %w", storage.ErrNotStore, dir, err)
	}
	if err != nil {
		rep.Detach()
		return nil, corrupt(err)
	}
	wo := pebbledb.Sync
	if o.NoSync {
		wo = pebbledb.NoSync
	}
	return &pebbleStore{db: db, rep: rep, wo: wo, ro: o.ReadOnly}, nil
}

func (s *pebbleStore) Backend() storage.Backend { return storage.Pebble }

func (s *pebbleStore) BackgroundCounts() storage.BackgroundCounts { return s.rep.Counts() }

func (s *pebbleStore) Get(key []byte) ([]byte, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	return pebbleGet(s.db, key)
}

func pebbleGet(db *pebbledb.DB, key []byte) ([]byte, error) {
	v, closer, err := db.Get(key)
	if errors.Is(err, pebbledb.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", storage.ErrNotFound, key)
	}
	if err != nil {
		return nil, corrupt(err)
	}
	out := append([]byte(nil), v...)
	return out, closer.Close()
}

func (s *pebbleStore) NewIter(lower, upper []byte) (storage.Iterator, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	it, err := s.db.NewIter(&pebbledb.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	return &pebbleIter{it: it}, nil
}

func (s *pebbleStore) NewSnapshot() (storage.Snapshot, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	return &pebbleSnap{snap: s.db.NewSnapshot(), store: s}, nil
}

func (s *pebbleStore) NewBatch() storage.Batch {
	if s.closed.Load() {
		return engine.ClosedBatch{}
	}
	return &pebbleBatch{b: s.db.NewBatch(), store: s}
}

func (s *pebbleStore) Close() error {
	s.once.Do(func() {
		s.closed.Store(true)
		if s.rep.Fatal() {
			// After a fatal condition Pebble's state is not to be
			// trusted (its Logger.Fatalf returned instead of exiting, or
			// it panicked): its Close can tear down the table cache under
			// a compaction whose accounting the condition broke, which
			// then crashes. Leave the engine and its directory lock to
			// the process's exit: every synced commit is in the files.
			s.cerr = s.rep.Fault()
			return
		}
		s.cerr = s.rep.Within("close", closeBound, func() (err error) {
			defer recoverFault(s.rep, &err)
			return s.db.Close()
		})
		if s.cerr == nil {
			// A store closed after a write fault reports the fault:
			// the last commits may have failed.
			s.cerr = s.rep.Fault()
		}
	})
	return s.cerr
}

type pebbleIter struct {
	it     *pebbledb.Iterator
	closed bool
	err    error
}

func (i *pebbleIter) First() bool          { return i.it.First() }
func (i *pebbleIter) SeekGE(k []byte) bool { return i.it.SeekGE(k) }
func (i *pebbleIter) Next() bool           { return i.it.Next() }
func (i *pebbleIter) Valid() bool          { return i.it.Valid() }
func (i *pebbleIter) Key() []byte          { return i.it.Key() }
func (i *pebbleIter) Value() ([]byte, error) {
	v, err := i.it.ValueAndErr()
	return v, corrupt(err)
}
func (i *pebbleIter) Err() error {
	if i.closed {
		return i.err
	}
	return corrupt(i.it.Error())
}
func (i *pebbleIter) Close() error {
	if i.closed {
		return i.err
	}
	i.closed = true
	i.err = corrupt(i.it.Close())
	return i.err
}

type pebbleSnap struct {
	snap   *pebbledb.Snapshot
	store  *pebbleStore
	closed bool
}

func (s *pebbleSnap) Get(key []byte) ([]byte, error) {
	if s.closed || s.store.closed.Load() {
		return nil, storage.ErrClosed
	}
	v, closer, err := s.snap.Get(key)
	if errors.Is(err, pebbledb.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", storage.ErrNotFound, key)
	}
	if err != nil {
		return nil, corrupt(err)
	}
	out := append([]byte(nil), v...)
	return out, closer.Close()
}

func (s *pebbleSnap) NewIter(lower, upper []byte) (storage.Iterator, error) {
	if s.closed || s.store.closed.Load() {
		return nil, storage.ErrClosed
	}
	it, err := s.snap.NewIter(&pebbledb.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	return &pebbleIter{it: it}, nil
}

func (s *pebbleSnap) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.store.closed.Load() {
		// The DB released every snapshot when it closed.
		return nil
	}
	return s.snap.Close()
}

type pebbleBatch struct {
	b     *pebbledb.Batch
	store *pebbleStore
	done  bool
}

func (b *pebbleBatch) Set(key, value []byte) error {
	if b.done {
		return storage.ErrBatchDone
	}
	return b.b.Set(key, value, nil)
}

func (b *pebbleBatch) Delete(key []byte) error {
	if b.done {
		return storage.ErrBatchDone
	}
	return b.b.Delete(key, nil)
}

func (b *pebbleBatch) Count() int { return int(b.b.Count()) }
func (b *pebbleBatch) Len() int   { return b.b.Len() }

func (b *pebbleBatch) Commit() (err error) {
	defer recoverFault(b.store.rep, &err)
	if b.done {
		return storage.ErrBatchDone
	}
	if b.store.closed.Load() {
		return storage.ErrClosed
	}
	b.done = true
	if b.store.ro {
		return errors.Join(storage.ErrReadOnly, b.b.Close())
	}
	if err := b.store.rep.Fault(); err != nil {
		// Fail fast: Pebble's commit pipeline is unusable after a fatal
		// commit error, and its memtables cannot be flushed.
		return errors.Join(err, b.b.Close())
	}
	err = b.b.Commit(b.store.wo)
	if err == nil {
		// Pebble's fatal commit error goes through Logger.Fatalf, which
		// records the fault and returns, and then Commit returns nil.
		err = b.store.rep.Fault()
	}
	if engine.IsWriteFault(err) {
		b.store.rep.Fail(err)
	}
	return errors.Join(err, b.b.Close())
}

func (b *pebbleBatch) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	return b.b.Close()
}

func init() { storage.Register(storage.Pebble, openPebble) }
