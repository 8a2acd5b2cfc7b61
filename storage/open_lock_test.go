package storage_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// ensure that opening a store another handle holds fails with storage.ErrLocked and
// a message that says why, on both engines (both lock the directory).
func TestOpen_Locked(t *testing.T) {
	for _, b := range []storage.Backend{storage.Pebble, storage.Badger} {
		t.Run(string(b), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			s, err := storage.Open(dir, &storage.Options{Backend: b, NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = storage.Open(dir, &storage.Options{Backend: b, NoSync: true})
			if !errors.Is(err, storage.ErrLocked) {
				t.Fatalf("second open: %v, want storage.ErrLocked", err)
			}
			t.Log(err)
		})
	}
}
