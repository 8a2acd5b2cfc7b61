package storage_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/postgres/pgtest"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// Ensure that DeletePrefix deletes exactly the keys under the prefix,
// across several batches, on every backend (PostgreSQL when a server is
// given), and that the hints are usable batch bounds.
func TestDeletePrefixAndHints(t *testing.T) {
	for _, backend := range []storage.Backend{storage.Pebble, storage.Badger, storage.Postgres} {
		t.Run(string(backend), func(t *testing.T) {
			var s storage.Store
			var err error
			if backend == storage.Postgres {
				if os.Getenv(storagetest.PostgresEnv) == "" {
					t.Skipf("no PostgreSQL server: set %s", storagetest.PostgresEnv)
				}
				s, err = storage.Open(pgtest.Table(t), nil)
			} else {
				s, err = storage.Open("", &storage.Options{InMemory: true, NoSync: true, Backend: backend})
			}
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

// BenchmarkDeletePrefix deletes the n keys under one prefix of an on-disk
// Pebble store (a view family's size: node views, subgraph records), the
// deletion batches of DeletePrefix one after the other.
func BenchmarkDeletePrefix(b *testing.B) {
	for _, n := range []int{50_000, 200_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				s, err := storage.Open(b.TempDir(), &storage.Options{NoSync: true, Backend: storage.Pebble})
				if err != nil {
					b.Fatal(err)
				}
				for lo := 0; lo < n; lo += 10_000 {
					bt := s.NewBatch()
					for i := lo; i < min(n, lo+10_000); i++ {
						if err := bt.Set(fmt.Appendf(nil, "V%08d", i), make([]byte, 64)); err != nil {
							b.Fatal(err)
						}
					}
					if err := bt.Commit(); err != nil {
						b.Fatal(err)
					}
					bt.Close()
				}
				b.StartTimer()
				if got, err := storage.DeletePrefix(s, []byte("V")); err != nil || got != n {
					b.Fatalf("deleted %d, %v; want %d", got, err, n)
				}
				b.StopTimer()
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
