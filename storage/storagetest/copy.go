package storagetest

import (
	"slices"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// Copy writes every key of src above the storage layer's reserved prefix
// (storage.ReservedPrefix) into dst in one batch, leaving out the keys
// whose first byte is one of skip; a failed read or write fails t.
func Copy(t testing.TB, dst storage.Store, src storage.Reader, skip ...byte) {
	t.Helper()
	it, err := src.NewIter([]byte{storage.ReservedPrefix + 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	b := dst.NewBatch()
	defer b.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if slices.Contains(skip, it.Key()[0]) {
			continue
		}
		v, err := it.Value()
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Set(it.Key(), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}
