package badger

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/internal/engine"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	badgerdb "github.com/dgraph-io/badger/v4"
)

// badgerStore is the Badger v4 backend. Reads go through read-only
// transactions, which Badger serves from a consistent snapshot; a Batch is
// one read-write transaction.
type badgerStore struct {
	db     *badgerdb.DB
	rep    *engine.Reporter
	dir    string // "" in memory
	ro     bool
	closed atomic.Bool
	once   sync.Once
	cerr   error
}

// badgerLogger hands Badger's messages to the store's reporter: errors and
// warnings are background problems; Badger's info and debug messages, which
// it writes on every open, are routine chatter at debug level.
type badgerLogger struct{ r *engine.Reporter }

func (l badgerLogger) Errorf(format string, args ...any)   { l.r.Errorf(format, args...) }
func (l badgerLogger) Warningf(format string, args ...any) { l.r.Warnf(format, args...) }
func (l badgerLogger) Infof(format string, args ...any)    { l.r.Debugf(format, args...) }
func (l badgerLogger) Debugf(format string, args ...any)   { l.r.Debugf(format, args...) }

func openBadger(dir string, o storage.Options) (storage.Store, error) {
	rep := engine.NewReporter(storage.Badger, o)
	bo := badgerdb.DefaultOptions(dir).
		WithLogger(badgerLogger{rep}).
		WithSyncWrites(!o.NoSync).
		WithNumVersionsToKeep(1).
		WithBlockCacheSize(o.CacheBytes).
		WithIndexCacheSize(16 << 20).
		WithMemTableSize(memTableBytes).
		WithNumMemtables(3).
		WithValueLogFileSize(256 << 20)
	if o.InMemory {
		bo = bo.WithDir("").WithValueDir("").WithInMemory(true)
	}
	if o.InjectFault != nil {
		return nil, errors.New("storage: fault injection (Options.InjectFault) needs Pebble: Badger has no file-system seam")
	}
	if o.ReadOnly {
		db, err := badgerdb.Open(bo.WithReadOnly(true))
		if err == nil {
			return &badgerStore{db: db, rep: rep, ro: true}, nil
		}
		// Badger wraps the error in text only (y.Wrapf).
		if !errors.Is(err, badgerdb.ErrTruncateNeeded) && !strings.Contains(err.Error(), badgerdb.ErrTruncateNeeded.Error()) {
			return nil, err
		}
		// A store that was not closed cleanly: its log must be truncated,
		// which Badger does only in a writable open (see Options.ReadOnly).
		rep.Debugf("read-only open needs a log truncation: opening writable")
	}
	db, err := badgerdb.Open(bo)
	if err != nil {
		return nil, err
	}
	st := &badgerStore{db: db, rep: rep, ro: o.ReadOnly}
	if !o.InMemory {
		st.dir = dir
	}
	return st, nil
}

// memTableBytes is the memtable size the store opens Badger with.
const memTableBytes = 64 << 20

// spaceGuard is the free space a commit needs besides twice its own size:
// Badger writes its log and its tables through mmap, where a full disk is
// not an error but a SIGBUS that kills the process. A flush writes up to
// one memtable of tables.
const spaceGuard = memTableBytes + 16<<20

// checkSpace fails with a write fault (ENOSPC) when the store's file
// system has less free space than spaceGuard plus twice size.
func (s *badgerStore) checkSpace(size int) error {
	if s.dir == "" {
		return nil
	}
	free, ok := freeBytes(s.dir)
	if !ok {
		return nil
	}
	if need := uint64(spaceGuard + 2*size); free < need {
		return fmt.Errorf("storage: badger: %d bytes free on the file system of %s, a commit needs %d (Badger writes through mmap, where a full disk would kill the process): %w",
			free, s.dir, need, syscall.ENOSPC)
	}
	return nil
}

// closeBound is how long Close waits for Badger once the store has a write
// fault.
const closeBound = 3 * time.Second

func (s *badgerStore) Backend() storage.Backend { return storage.Badger }

func (s *badgerStore) BackgroundCounts() storage.BackgroundCounts { return s.rep.Counts() }

func (s *badgerStore) Get(key []byte) ([]byte, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	txn := s.db.NewTransaction(false)
	defer txn.Discard()
	return badgerGet(txn, key)
}

func badgerGet(txn *badgerdb.Txn, key []byte) ([]byte, error) {
	item, err := txn.Get(key)
	if errors.Is(err, badgerdb.ErrKeyNotFound) {
		return nil, fmt.Errorf("%w: %q", storage.ErrNotFound, key)
	}
	if err != nil {
		return nil, err
	}
	v, err := item.ValueCopy(nil)
	if v == nil && err == nil {
		v = []byte{}
	}
	return v, err
}

func (s *badgerStore) NewIter(lower, upper []byte) (storage.Iterator, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	txn := s.db.NewTransaction(false)
	return newBadgerIter(txn, lower, upper, true), nil
}

func (s *badgerStore) NewSnapshot() (storage.Snapshot, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	return &badgerSnap{txn: s.db.NewTransaction(false), store: s}, nil
}

func (s *badgerStore) NewBatch() storage.Batch {
	if s.closed.Load() {
		return engine.ClosedBatch{}
	}
	return &badgerBatch{txn: s.db.NewTransaction(true), store: s}
}

func (s *badgerStore) Close() error {
	s.once.Do(func() {
		s.closed.Store(true)
		s.cerr = s.rep.Within("close", closeBound, s.db.Close)
		if s.cerr == nil {
			s.cerr = s.rep.Fault()
		}
	})
	return s.cerr
}

type badgerIter struct {
	txn     *badgerdb.Txn
	ownsTxn bool
	it      *badgerdb.Iterator
	lower   []byte
	upper   []byte
	closed  bool
}

func newBadgerIter(txn *badgerdb.Txn, lower, upper []byte, ownsTxn bool) *badgerIter {
	opts := badgerdb.DefaultIteratorOptions
	opts.PrefetchValues = false
	return &badgerIter{
		txn:     txn,
		ownsTxn: ownsTxn,
		it:      txn.NewIterator(opts),
		lower:   append([]byte(nil), lower...),
		upper:   append([]byte(nil), upper...),
	}
}

func (i *badgerIter) inRange() bool {
	if !i.it.Valid() {
		return false
	}
	return len(i.upper) == 0 || bytes.Compare(i.it.Item().Key(), i.upper) < 0
}

func (i *badgerIter) First() bool {
	if len(i.lower) == 0 {
		i.it.Rewind()
	} else {
		i.it.Seek(i.lower)
	}
	return i.inRange()
}

func (i *badgerIter) SeekGE(k []byte) bool {
	if bytes.Compare(k, i.lower) < 0 {
		k = i.lower
	}
	i.it.Seek(k)
	return i.inRange()
}

func (i *badgerIter) Next() bool {
	i.it.Next()
	return i.inRange()
}

func (i *badgerIter) Valid() bool { return !i.closed && i.inRange() }
func (i *badgerIter) Key() []byte { return i.it.Item().Key() }
func (i *badgerIter) Value() ([]byte, error) {
	var out []byte
	err := i.it.Item().Value(func(v []byte) error {
		out = v
		return nil
	})
	if out == nil && err == nil {
		out = []byte{}
	}
	return out, err
}
func (i *badgerIter) Err() error { return nil }

func (i *badgerIter) Close() error {
	if i.closed {
		return nil
	}
	i.closed = true
	i.it.Close()
	if i.ownsTxn {
		i.txn.Discard()
	}
	return nil
}

type badgerSnap struct {
	txn    *badgerdb.Txn
	store  *badgerStore
	closed bool
}

func (s *badgerSnap) Get(key []byte) ([]byte, error) {
	if s.closed || s.store.closed.Load() {
		return nil, storage.ErrClosed
	}
	return badgerGet(s.txn, key)
}

// NewIter on a snapshot. Badger allows one iterator per read transaction at
// a time only for update transactions; read-only ones may hold several.
func (s *badgerSnap) NewIter(lower, upper []byte) (storage.Iterator, error) {
	if s.closed || s.store.closed.Load() {
		return nil, storage.ErrClosed
	}
	return newBadgerIter(s.txn, lower, upper, false), nil
}

func (s *badgerSnap) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if !s.store.closed.Load() {
		s.txn.Discard()
	}
	return nil
}

type badgerBatch struct {
	txn   *badgerdb.Txn
	store *badgerStore
	count int
	size  int
	done  bool
}

func (b *badgerBatch) Set(key, value []byte) error {
	if b.done {
		return storage.ErrBatchDone
	}
	// Badger keeps references until commit: copy.
	k := append([]byte(nil), key...)
	v := append([]byte(nil), value...)
	if err := b.txn.Set(k, v); err != nil {
		if errors.Is(err, badgerdb.ErrTxnTooBig) {
			return fmt.Errorf("%w (%d operations, %d bytes): %w", storage.ErrBatchTooLarge, b.count, b.size, err)
		}
		return err
	}
	b.count++
	b.size += len(k) + len(v)
	return nil
}

func (b *badgerBatch) Delete(key []byte) error {
	if b.done {
		return storage.ErrBatchDone
	}
	k := append([]byte(nil), key...)
	if err := b.txn.Delete(k); err != nil {
		if errors.Is(err, badgerdb.ErrTxnTooBig) {
			return fmt.Errorf("%w (%d operations, %d bytes): %w", storage.ErrBatchTooLarge, b.count, b.size, err)
		}
		return err
	}
	b.count++
	b.size += len(k)
	return nil
}

func (b *badgerBatch) Count() int { return b.count }
func (b *badgerBatch) Len() int   { return b.size }

func (b *badgerBatch) Commit() error {
	if b.done {
		return storage.ErrBatchDone
	}
	if b.store.closed.Load() {
		return storage.ErrClosed
	}
	b.done = true
	defer b.txn.Discard()
	if b.store.ro {
		return storage.ErrReadOnly
	}
	if err := b.store.rep.Fault(); err != nil {
		return err
	}
	if err := b.store.checkSpace(b.size); err != nil {
		b.store.rep.Fail(err)
		b.store.rep.Report(slog.LevelError, err, err.Error())
		return b.store.rep.Fault()
	}
	err := b.txn.Commit()
	if engine.IsWriteFault(err) {
		b.store.rep.Fail(err)
	}
	return err
}

func (b *badgerBatch) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	b.txn.Discard()
	return nil
}

func init() { storage.Register(storage.Badger, openBadger) }
