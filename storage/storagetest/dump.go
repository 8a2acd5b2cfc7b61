package storagetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// Dump renders every key and value of r in key order, one "key=value" line
// each in hex, leaving out the keys whose first byte is one of skip (a
// package's prefix in the key-space registry, say). Two stores hold the
// same data exactly when their dumps are equal; a failed read fails t.
func Dump(t testing.TB, r storage.Reader, skip ...byte) string {
	t.Helper()
	it, err := r.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var b strings.Builder
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) > 0 && slices.Contains(skip, k[0]) {
			continue
		}
		v, err := it.Value()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%x=%x\n", k, v)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
