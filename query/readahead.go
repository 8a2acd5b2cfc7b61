package query

import (
	"fmt"

	"github.com/fasd-db/fasd/storage"
)

// readAhead is a storage.Reader over r that serves the keys fetch read
// ahead, in one storage.GetMany, from memory: the commit stages know
// every key a chunk will read (the old root records, then the members'
// inverted indexes; the nodes' inverted indexes, then their roots'
// records) before they read one, so a chunk costs two requests on a store
// that reads many keys at once (storage/postgres) instead of one per key.
// On a local engine fetch is a loop of Get over the same keys.
//
// It is used by one goroutine, over a store only the engine's writer (who
// holds e.wmu) changes, for the duration of one chunk.
type readAhead struct {
	r storage.Reader
	m map[string][]byte // nil value: absent
}

func newReadAhead(r storage.Reader) *readAhead {
	return &readAhead{r: r, m: map[string][]byte{}}
}

// fetch reads the keys not read yet.
func (a *readAhead) fetch(keys [][]byte) error {
	todo := keys[:0:0]
	for _, k := range keys {
		if _, ok := a.m[string(k)]; !ok {
			a.m[string(k)] = nil
			todo = append(todo, k)
		}
	}
	vals, err := storage.GetMany(a.r, todo)
	if err != nil {
		for _, k := range todo {
			delete(a.m, string(k))
		}
		return fmt.Errorf("query: read ahead: %w", err)
	}
	for i, k := range todo {
		a.m[string(k)] = vals[i]
	}
	return nil
}

// Get returns a copy of what fetch read, or reads key.
func (a *readAhead) Get(key []byte) ([]byte, error) {
	if v, ok := a.m[string(key)]; ok {
		if v == nil {
			return nil, fmt.Errorf("%w: %x", storage.ErrNotFound, key)
		}
		return append([]byte{}, v...), nil
	}
	return a.r.Get(key)
}

// NewIter reads the store.
func (a *readAhead) NewIter(lower, upper []byte) (storage.Iterator, error) {
	return a.r.NewIter(lower, upper)
}
