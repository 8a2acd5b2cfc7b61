package index

import (
	"fmt"
	"sync"

	"github.com/fasd-db/fasd/storage"
)

// ReadAhead holds node records and adjacency bitmaps read ahead of use,
// many keys per request, for the Views of one graph version: a store on
// a server (storage/postgres) answers a storage.GetMany in one round trip,
// so reading a whole breadth-first level of many roots at once costs one
// round trip where reading it key by key costs one per key.
//
// Fill it with View.Prefetch, attach it to any number of Views of the same
// version with View.SetReadAhead; their reads of those keys (Node,
// Features, Sensitive, Label, Neighbors, SampleNeighbors, …) are then
// answered from memory. It is safe for concurrent use. It never changes a
// result: a View reads one immutable snapshot, and a ReadAhead only holds
// values read at its version.
type ReadAhead struct {
	mu      sync.RWMutex
	version uint64
	m       map[string][]byte // nil: absent
}

// NewReadAhead returns an empty ReadAhead for graph version version.
func NewReadAhead(version uint64) *ReadAhead {
	return &ReadAhead{version: version, m: map[string][]byte{}}
}

// Len returns the number of keys held.
func (a *ReadAhead) Len() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return len(a.m)
}

// lookup returns a copy of the value of key and whether it is held; a
// held absent key returns (nil, true). A nil ReadAhead holds nothing.
func (a *ReadAhead) lookup(key []byte) ([]byte, bool) {
	if a == nil {
		return nil, false
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	b, ok := a.m[string(key)]
	if !ok || b == nil {
		return nil, ok
	}
	return append([]byte{}, b...), true
}

// BatchedReads reports whether the view's store reads many keys in one
// request (it implements storage.MultiGetter), so that Prefetch saves
// round trips. On a local engine a Get costs no round trip, and reading
// ahead would only read what may not be needed.
func (v *View) BatchedReads() bool {
	_, ok := v.snap.(storage.MultiGetter)
	return ok
}

// SetReadAhead makes v consult a (nil detaches it). a must be of v's
// version.
func (v *View) SetReadAhead(a *ReadAhead) error {
	if a != nil && a.version != v.st.Version {
		return fmt.Errorf("index: read-ahead of version %d on a view of version %d", a.version, v.st.Version)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.ahead = a
	return nil
}

// Prefetch reads into a, in one storage.GetMany, the records and adjacency
// of the nodes whose keys a does not hold yet. Ids out of range are
// skipped (reading them reports the error). a must be of v's version.
func (v *View) Prefetch(a *ReadAhead, nodes []uint32) error {
	if a.version != v.st.Version {
		return fmt.Errorf("index: read-ahead of version %d on a view of version %d", a.version, v.st.Version)
	}
	keys := make([][]byte, 0, 2*len(nodes))
	a.mu.RLock()
	for _, n := range nodes {
		if n >= v.st.Nodes {
			continue
		}
		for _, k := range [][]byte{nodeKey(n), adjKey(n)} {
			if _, ok := a.m[string(k)]; !ok {
				keys = append(keys, k)
			}
		}
	}
	a.mu.RUnlock()
	if len(keys) == 0 {
		return nil
	}
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return ErrClosed
	}
	vals, err := storage.GetMany(v.snap, keys)
	v.mu.Unlock()
	if err != nil {
		return fmt.Errorf("index: read ahead: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, k := range keys {
		a.m[string(k)] = vals[i]
	}
	return nil
}

// Holds reports whether a holds node n's record and adjacency (Prefetch
// reads both together).
func (a *ReadAhead) Holds(n uint32) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	_, ok := a.m[string(adjKey(n))]
	return ok
}
