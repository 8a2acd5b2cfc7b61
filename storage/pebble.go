package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// pebbleStore is the Pebble v2 backend.
type pebbleStore struct {
	db     *pebble.DB
	rep    *reporter
	wo     *pebble.WriteOptions
	closed atomic.Bool
	once   sync.Once
	cerr   error
}

// pebbleLogger hands Pebble's messages to the store's reporter: Errorf is
// a background error, Infof routine chatter at debug level. Fatalf reports
// the error and then panics instead of exiting the process, so that the
// host's deferred cleanup and recover still run.
type pebbleLogger struct{ r *reporter }

func (l pebbleLogger) Infof(format string, args ...any)  { l.r.debugf(format, args...) }
func (l pebbleLogger) Errorf(format string, args ...any) { l.r.errorf(format, args...) }
func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf("pebble: fatal: "+format, args...)
	l.r.report(slog.LevelError, nil, msg)
	panic(msg)
}

// pebbleEvents routes the Pebble events that signal a problem to the
// reporter. Pebble's default for a corruption is Fatalf; here it is an
// error report, and the read that met it fails on its own.
func pebbleEvents(r *reporter) *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			r.report(slog.LevelError, err, err.Error())
		},
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			r.report(slog.LevelError, info.Details, fmt.Sprintf("on-disk corruption in %s: %v", info.Path, info.Details))
		},
		LowDiskSpace: func(info pebble.LowDiskSpaceInfo) {
			r.report(slog.LevelWarn, nil, info.String())
		},
	}
}

func openPebble(dir string, o Options) (Store, error) {
	cache := pebble.NewCache(o.CacheBytes)
	defer cache.Unref()
	rep := newReporter(Pebble, o)
	popts := &pebble.Options{
		Cache:              cache,
		Logger:             pebbleLogger{rep},
		EventListener:      pebbleEvents(rep),
		FormatMajorVersion: pebble.FormatNewest,
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
	db, err := pebble.Open(dir, popts)
	if err != nil {
		return nil, err
	}
	wo := pebble.Sync
	if o.NoSync {
		wo = pebble.NoSync
	}
	return &pebbleStore{db: db, rep: rep, wo: wo}, nil
}

func (s *pebbleStore) Backend() Backend { return Pebble }

func (s *pebbleStore) BackgroundCounts() BackgroundCounts { return s.rep.counts() }

func (s *pebbleStore) Get(key []byte) ([]byte, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	return pebbleGet(s.db, key)
}

func pebbleGet(db *pebble.DB, key []byte) ([]byte, error) {
	v, closer, err := db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), v...)
	return out, closer.Close()
}

func (s *pebbleStore) NewIter(lower, upper []byte) (Iterator, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	return &pebbleIter{it: it}, nil
}

func (s *pebbleStore) NewSnapshot() (Snapshot, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	return &pebbleSnap{snap: s.db.NewSnapshot(), store: s}, nil
}

func (s *pebbleStore) NewBatch() Batch {
	if s.closed.Load() {
		return closedBatch{}
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
	it     *pebble.Iterator
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
	snap   *pebble.Snapshot
	store  *pebbleStore
	closed bool
}

func (s *pebbleSnap) Get(key []byte) ([]byte, error) {
	if s.closed || s.store.closed.Load() {
		return nil, ErrClosed
	}
	v, closer, err := s.snap.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), v...)
	return out, closer.Close()
}

func (s *pebbleSnap) NewIter(lower, upper []byte) (Iterator, error) {
	if s.closed || s.store.closed.Load() {
		return nil, ErrClosed
	}
	it, err := s.snap.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
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
	b     *pebble.Batch
	store *pebbleStore
	done  bool
}

func (b *pebbleBatch) Set(key, value []byte) error {
	if b.done {
		return ErrBatchDone
	}
	return b.b.Set(key, value, nil)
}

func (b *pebbleBatch) Delete(key []byte) error {
	if b.done {
		return ErrBatchDone
	}
	return b.b.Delete(key, nil)
}

func (b *pebbleBatch) Count() int { return int(b.b.Count()) }
func (b *pebbleBatch) Len() int   { return b.b.Len() }

func (b *pebbleBatch) Commit() error {
	if b.done {
		return ErrBatchDone
	}
	if b.store.closed.Load() {
		return ErrClosed
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
