package query

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/fasd-db/fasd/storage"
)

// Leases on parts of a distributed materialize or refresh live in the store
// itself, under the views' prefix (see doc.go, "Distributed work"):
//
//	famLease part:u32 → generation:u64 | deadline:i64 (unix ns) | owner
//
// A worker claims a part with a guarded commit (storage.CommitIf) that
// expects the lease value it read: absent, or expired by its deadline. The
// claim raises the generation, so every later claim of the part carries a
// larger one. Whatever the holder then writes for the part it writes in a
// batch guarded by its own lease value, generation included: a holder
// whose lease expired and was claimed again finds the value changed and
// commits nothing (ErrLeaseLost). Clocks decide only when a part may be
// claimed again, never whether a write is admitted: the fence is in the
// data.
const famLease = 'L'

// ErrLeaseLost is returned when a part's lease is no longer the caller's:
// another worker claimed it after it expired, or it was released.
var ErrLeaseLost = errors.New("query: lease lost")

// ErrLeaseHeld is returned by Claim when the part's lease is held by
// another worker and has not expired.
var ErrLeaseHeld = errors.New("query: lease held by another worker")

// Lease is one claim of one part: the value the claim wrote, which every
// guarded write of the holder expects to find.
type Lease struct {
	Part       uint32
	Generation uint64
	Deadline   time.Time
	Owner      string
	raw        []byte
}

// leaseKey is the key of part's lease.
func leaseKey(part uint32) []byte { return idKey(famLease, part) }

func encodeLease(gen uint64, deadline time.Time, owner string) []byte {
	v := make([]byte, 16, 16+len(owner))
	binary.BigEndian.PutUint64(v, gen)
	binary.BigEndian.PutUint64(v[8:], uint64(deadline.UnixNano()))
	return append(v, owner...)
}

func decodeLease(part uint32, v []byte) (Lease, error) {
	if len(v) < 16 {
		return Lease{}, fmt.Errorf("query: lease of part %d: %d bytes, want at least 16", part, len(v))
	}
	return Lease{
		Part:       part,
		Generation: binary.BigEndian.Uint64(v),
		Deadline:   time.Unix(0, int64(binary.BigEndian.Uint64(v[8:]))),
		Owner:      string(v[16:]),
		raw:        append([]byte{}, v...),
	}, nil
}

// ReadLease returns part's lease; ok is false when the part was never
// claimed.
func ReadLease(r storage.Reader, part uint32) (l Lease, ok bool, err error) {
	v, err := r.Get(leaseKey(part))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return Lease{}, false, nil
	case err != nil:
		return Lease{}, false, fmt.Errorf("query: read lease of part %d: %w", part, err)
	}
	l, err = decodeLease(part, v)
	return l, err == nil, err
}

// ClaimLease claims part for owner until now+ttl: it succeeds when the part
// was never claimed or its lease expired before now (by the caller's
// clock), and returns ErrLeaseHeld when another claim is live and
// ErrLeaseLost when another worker won the race for the same lease.
func ClaimLease(s storage.Store, part uint32, owner string, now time.Time, ttl time.Duration) (Lease, error) {
	old, ok, err := ReadLease(s, part)
	if err != nil {
		return Lease{}, err
	}
	var want []byte
	gen := uint64(1)
	if ok {
		if !now.After(old.Deadline) {
			return Lease{}, fmt.Errorf("part %d (owner %q, generation %d): %w", part, old.Owner, old.Generation, ErrLeaseHeld)
		}
		want, gen = old.raw, old.Generation+1
	}
	l, err := decodeLease(part, encodeLease(gen, now.Add(ttl), owner))
	if err != nil {
		return Lease{}, err
	}
	b := s.NewBatch()
	defer b.Close()
	if err := b.Set(leaseKey(part), l.raw); err != nil {
		return Lease{}, fmt.Errorf("query: claim part %d: %w", part, err)
	}
	if err := commitGuarded(s, b, part, want); err != nil {
		return Lease{}, err
	}
	return l, nil
}

// RenewLease moves l's deadline to now+ttl if l is still the part's lease
// (same generation and deadline), and returns the renewed lease.
func RenewLease(s storage.Store, l Lease, now time.Time, ttl time.Duration) (Lease, error) {
	n, err := decodeLease(l.Part, encodeLease(l.Generation, now.Add(ttl), l.Owner))
	if err != nil {
		return Lease{}, err
	}
	b := s.NewBatch()
	defer b.Close()
	if err := b.Set(leaseKey(l.Part), n.raw); err != nil {
		return Lease{}, fmt.Errorf("query: renew part %d: %w", l.Part, err)
	}
	if err := commitGuarded(s, b, l.Part, l.raw); err != nil {
		return Lease{}, err
	}
	return n, nil
}

// CommitUnderLease commits b only if l is still its part's lease: the
// fenced write of a lease holder. b is consumed either way.
func CommitUnderLease(s storage.Store, b storage.Batch, l Lease) error {
	return commitGuarded(s, b, l.Part, l.raw)
}

// commitGuarded commits b if part's lease value is want, and maps a
// conflict to ErrLeaseLost.
func commitGuarded(s storage.Store, b storage.Batch, part uint32, want []byte) error {
	err := storage.CommitIf(s, b, leaseKey(part), want)
	switch {
	case errors.Is(err, storage.ErrConflict):
		return fmt.Errorf("part %d: %w", part, ErrLeaseLost)
	case err != nil:
		return fmt.Errorf("query: guarded commit of part %d: %w", part, err)
	}
	return nil
}

// ReleaseLease deletes l and the keys del in one batch guarded by l; it
// returns ErrLeaseLost when l is no longer the part's lease.
func ReleaseLease(s storage.Store, l Lease, del ...[]byte) error {
	b := s.NewBatch()
	defer b.Close()
	for _, k := range append(del, leaseKey(l.Part)) {
		if err := b.Delete(k); err != nil {
			return fmt.Errorf("query: release part %d: %w", l.Part, err)
		}
	}
	return commitGuarded(s, b, l.Part, l.raw)
}
