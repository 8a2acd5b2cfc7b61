package storage

import (
	"errors"
	"fmt"
)

// MultiGetter is implemented by readers that read many keys in fewer round
// trips than one Get each (the Postgres backend: one query for all of
// them). Local engines do not implement it; GetMany falls back to a loop
// of Get there, which costs them nothing more.
type MultiGetter interface {
	// GetMany returns the values of keys, in the order of keys: vals[i] is
	// nil when keys[i] is absent and a non-nil slice (possibly empty)
	// otherwise. The values are copies owned by the caller. A key may
	// appear more than once.
	GetMany(keys [][]byte) (vals [][]byte, err error)
}

// GetMany reads the values of keys from r, in one request when r is a
// MultiGetter and with one Get per key otherwise. vals[i] is nil when
// keys[i] is absent and non-nil (possibly empty) when it is present; an
// error other than an absent key fails the whole call.
func GetMany(r Reader, keys [][]byte) ([][]byte, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if m, ok := r.(MultiGetter); ok {
		vals, err := m.GetMany(keys)
		if err != nil {
			return nil, err
		}
		if len(vals) != len(keys) {
			return nil, fmt.Errorf("storage: GetMany returned %d values for %d keys", len(vals), len(keys))
		}
		return vals, nil
	}
	vals := make([][]byte, len(keys))
	for i, k := range keys {
		v, err := r.Get(k)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return nil, err
		case v == nil:
			v = []byte{}
		}
		vals[i] = v
	}
	return vals, nil
}
