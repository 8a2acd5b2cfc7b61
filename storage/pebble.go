package storage

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// pebbleStore is the Pebble v2 backend.
type pebbleStore struct {
	db     *pebble.DB
	wo     *pebble.WriteOptions
	closed atomic.Bool
	once   sync.Once
	cerr   error
}

// quietLogger drops Pebble's informational messages; errors and fatal
// conditions are kept in the panic value so that nothing exits the process.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: fatal: "+format, args...))
}

func openPebble(dir string, o Options) (Store, error) {
	cache := pebble.NewCache(o.CacheBytes)
	defer cache.Unref()
	popts := &pebble.Options{
		Cache:              cache,
		Logger:             quietLogger{},
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
	return &pebbleStore{db: db, wo: wo}, nil
}

func (s *pebbleStore) Backend() Backend { return Pebble }

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
