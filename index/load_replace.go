// What a load into a store that holds data deletes or refuses: the data
// that depends on the graph (through the key-space registry) and the old
// graph itself.

package index

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fasd-db/fasd/storage"
)

// heldDependents returns the prefixes that depend on the graph and hold
// keys in store.
func heldDependents(store storage.Reader) ([]KeyPrefix, error) {
	var held []KeyPrefix
	for _, p := range KeyPrefixes {
		if !p.DependsOnGraph {
			continue
		}
		it, err := store.NewIter([]byte{p.Byte}, []byte{p.Byte + 1})
		if err != nil {
			return nil, fmt.Errorf("index: load: iterate: %w", err)
		}
		found := it.First()
		if err := errors.Join(it.Err(), it.Close()); err != nil {
			return nil, fmt.Errorf("index: load: iterate: %w", err)
		}
		if found {
			held = append(held, p)
		}
	}
	return held, nil
}

// notDropped returns the prefixes of held that drop does not name.
func notDropped(held []KeyPrefix, drop []byte) []KeyPrefix {
	var out []KeyPrefix
	for _, p := range held {
		if !slices.Contains(drop, p.Byte) {
			out = append(out, p)
		}
	}
	return out
}

// dropDependents deletes the data that depends on the graph (the prefixes
// of LoadOptions.Drop that hold keys), each by one prefix delete, and
// fails with ErrDependents if any such data remains.
func (l *loader) dropDependents() error {
	held, err := heldDependents(l.store)
	if err != nil {
		return err
	}
	for _, p := range held {
		if !slices.Contains(l.opts.Drop, p.Byte) {
			continue
		}
		if _, err := storage.DeletePrefix(l.store, []byte{p.Byte}); err != nil {
			return fmt.Errorf("index: load: delete %s: %w", p.What, err)
		}
	}
	if held, err = heldDependents(l.store); err != nil {
		return err
	} else if len(held) > 0 {
		return dependentsError(held)
	}
	return nil
}

// dependentsError names the data that depends on the graph and stays.
func dependentsError(held []KeyPrefix) error {
	names := make([]string, len(held))
	for i, p := range held {
		names[i] = fmt.Sprintf("%s ('%c', package %s)", p.What, p.Byte, p.Owner)
	}
	return fmt.Errorf("%w: %s; Replace deletes only the graph and what Drop names (fasd load --replace drops the views, and the runs with --drop-runs)",
		ErrDependents, strings.Join(names, ", "))
}

// checkTarget refuses a store that holds a graph or an incomplete load,
// unless replace; with replace it returns the prefixes of data that
// depends on the graph and holds keys.
func checkTarget(store storage.Reader, replace bool) ([]KeyPrefix, error) {
	if replace {
		return heldDependents(store)
	}
	if err := checkLoading(store); err != nil {
		return nil, err
	}
	_, err := store.Get(keySchema)
	if err == nil {
		return nil, fmt.Errorf("%w (use Replace / --replace to overwrite it)", ErrGraphExists)
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("index: read schema: %w", err)
	}
	return nil, nil
}

// deleteOld deletes every key under index's own prefixes (KeyPrefixes)
// except the marker and the version counter.
func (l *loader) deleteOld() error {
	snap, err := l.store.NewSnapshot()
	if err != nil {
		return fmt.Errorf("index: load: snapshot: %w", err)
	}
	defer snap.Close()
	for _, p := range KeyPrefixes {
		if p.Owner != "index" {
			continue
		}
		if err := l.deleteRange(snap, p.Byte); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) deleteRange(snap storage.Snapshot, prefix byte) error {
	it, err := snap.NewIter([]byte{prefix}, []byte{prefix + 1})
	if err != nil {
		return fmt.Errorf("index: load: iterate: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if string(k) == string(keyLoading) || string(k) == string(keyVersion) {
			continue
		}
		if err := l.del(k); err != nil {
			return err
		}
		if err := l.flush(false); err != nil {
			return err
		}
	}
	return it.Err()
}
