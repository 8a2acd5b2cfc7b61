package storage

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
)

// ErrConflict is returned by CommitIf when the guard key did not hold the
// expected value: nothing of the batch was committed.
var ErrConflict = errors.New("storage: guard key changed; batch not committed")

// CondCommitter is implemented by stores that commit a batch guarded by
// one key's value in one atomic step on the engine (the Postgres backend:
// the check and the writes in one transaction). Local engines do not
// implement it; CommitIf falls back to a process-wide mutex there, which is
// atomic because such a store is opened by one process only and every
// guarded write of the process goes through CommitIf.
type CondCommitter interface {
	// CommitIf commits b if the value of key equals want (want nil: key
	// absent) and returns ErrConflict, committing nothing, otherwise. The
	// batch cannot be used afterwards either way.
	CommitIf(b Batch, key, want []byte) error
}

// guardMu serialises the fallback's guarded commits of every store of the
// process: one mutex rather than one per store, so that closed stores
// leave nothing behind; guarded commits (leases) are few.
var guardMu sync.Mutex

// CommitIf commits b only if key holds want (nil: key absent), atomically
// with respect to every other CommitIf on s, and returns ErrConflict
// (wrapped) otherwise. It is the compare-and-set the layers above build
// leases and fences on: a writer that lost its lease finds the guard key
// changed and cannot commit. Keys written by CommitIf should be written
// only through CommitIf, so that the fallback's mutex covers them.
func CommitIf(s Store, b Batch, key, want []byte) error {
	if c, ok := s.(CondCommitter); ok {
		return c.CommitIf(b, key, want)
	}
	guardMu.Lock()
	defer guardMu.Unlock()
	got, err := s.Get(key)
	switch {
	case errors.Is(err, ErrNotFound):
		got = nil
	case err != nil:
		_ = b.Close()
		return fmt.Errorf("storage: guard %q: %w", key, err)
	case got == nil:
		got = []byte{}
	}
	if !sameValue(got, want) {
		_ = b.Close()
		return fmt.Errorf("guard %q: %w", key, ErrConflict)
	}
	return b.Commit()
}

// sameValue compares two values where nil means absent and a non-nil empty
// slice means present and empty.
func sameValue(got, want []byte) bool {
	if (got == nil) != (want == nil) {
		return false
	}
	return bytes.Equal(got, want)
}
