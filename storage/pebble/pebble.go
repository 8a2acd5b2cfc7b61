package pebble

import (
	"errors"
	"fmt"
	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/internal/engine"
	"log/slog"
	"sync"
	"sync/atomic"

	pebbledb "github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// pebbleStore is the Pebble v2 backend.
type pebbleStore struct {
	db     *pebbledb.DB
	rep    *engine.Reporter
	wo     *pebbledb.WriteOptions
	closed atomic.Bool
	once   sync.Once
	cerr   error
}

// pebbleLogger hands Pebble's messages to the store's reporter: Errorf is
// a background error, Infof routine chatter at debug level. Fatalf reports
// the error and then panics instead of exiting the process, so that the
// host's deferred cleanup and recover still run.
type pebbleLogger struct{ r *engine.Reporter }

func (l pebbleLogger) Infof(format string, args ...any)  { l.r.Debugf(format, args...) }
func (l pebbleLogger) Errorf(format string, args ...any) { l.r.Errorf(format, args...) }
func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf("pebble: fatal: "+format, args...)
	l.r.Report(slog.LevelError, nil, msg)
	panic(msg)
}

// pebbleEvents routes the Pebble events that signal a problem to the
// reporter. Pebble's default for a corruption is Fatalf; here it is an
// error report, and the read that met it fails on its own.
func pebbleEvents(r *engine.Reporter) *pebbledb.EventListener {
	return &pebbledb.EventListener{
		BackgroundError: func(err error) {
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
	db, err := pebbledb.Open(dir, popts)
	if err != nil {
		return nil, err
	}
	wo := pebbledb.Sync
	if o.NoSync {
		wo = pebbledb.NoSync
	}
	return &pebbleStore{db: db, rep: rep, wo: wo}, nil
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
		return nil, err
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
		s.cerr = s.db.Close()
	})
	return s.cerr
}

type pebbleIter struct {
	it     *pebbledb.Iterator
	closed bool
	err    error
}

func (i *pebbleIter) First() bool            { return i.it.First() }
func (i *pebbleIter) SeekGE(k []byte) bool   { return i.it.SeekGE(k) }
func (i *pebbleIter) Next() bool             { return i.it.Next() }
func (i *pebbleIter) Valid() bool            { return i.it.Valid() }
func (i *pebbleIter) Key() []byte            { return i.it.Key() }
func (i *pebbleIter) Value() ([]byte, error) { return i.it.ValueAndErr() }
func (i *pebbleIter) Err() error {
	if i.closed {
		return i.err
	}
	return i.it.Error()
}
func (i *pebbleIter) Close() error {
	if i.closed {
		return i.err
	}
	i.closed = true
	i.err = i.it.Close()
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
		return nil, err
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

func (b *pebbleBatch) Commit() error {
	if b.done {
		return storage.ErrBatchDone
	}
	if b.store.closed.Load() {
		return storage.ErrClosed
	}
	b.done = true
	err := b.b.Commit(b.store.wo)
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
