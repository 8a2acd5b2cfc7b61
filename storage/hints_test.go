package storage_test

import (
	"fmt"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// Ensure that DeletePrefix deletes exactly the keys under the prefix,
// across several batches, on both backends, and that the hints are usable
// batch bounds.
func TestDeletePrefixAndHints(t *testing.T) {
	for _, backend := range []storage.Backend{storage.Pebble, storage.Badger} {
		t.Run(string(backend), func(t *testing.T) {
			s, err := storage.Open("", &storage.Options{InMemory: true, NoSync: true, Backend: backend})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			h := storage.HintsOf(s)
			if h.BatchBytes <= 0 || h.BatchOps <= 0 || h.SpillBytes < 0 {
				t.Fatalf("hints %+v", h)
			}
			const n = 5000 // more than one deletion batch
			for lo := 0; lo < n; lo += 1000 {
				b := s.NewBatch()
				for i := lo; i < lo+1000; i++ {
					for _, p := range []string{"Va", "Vb", "W"} {
						if err := b.Set([]byte(fmt.Sprintf("%s%05d", p, i)), []byte{1}); err != nil {
							t.Fatal(err)
						}
					}
				}
				if err := b.Commit(); err != nil {
					t.Fatal(err)
				}
				b.Close()
			}
			got, err := storage.DeletePrefix(s, []byte("Va"))
			if err != nil || got != n {
				t.Fatalf("deleted %d, %v; want %d", got, err, n)
			}
			count := func(prefix string) int {
				it, err := s.NewIter([]byte(prefix), storage.PrefixEnd([]byte(prefix)))
				if err != nil {
					t.Fatal(err)
				}
				defer it.Close()
				c := 0
				for ok := it.First(); ok; ok = it.Next() {
					c++
				}
				return c
			}
			if a, b, w := count("Va"), count("Vb"), count("W"); a != 0 || b != n || w != n {
				t.Fatalf("left Va %d, Vb %d, W %d", a, b, w)
			}
			if got, err := storage.DeletePrefix(s, []byte("Va")); err != nil || got != 0 {
				t.Fatalf("second delete: %d %v", got, err)
			}
		})
	}
}
