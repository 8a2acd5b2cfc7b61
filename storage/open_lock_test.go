package storage

import (
	"errors"
	"path/filepath"
	"testing"
)

// ensure that opening a store another handle holds fails with ErrLocked and
// a message that says why, on both engines (both lock the directory).
func TestOpen_Locked(t *testing.T) {
	for _, b := range []Backend{Pebble, Badger} {
		t.Run(string(b), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			s, err := Open(dir, &Options{Backend: b, NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = Open(dir, &Options{Backend: b, NoSync: true})
			if !errors.Is(err, ErrLocked) {
				t.Fatalf("second open: %v, want ErrLocked", err)
			}
			t.Log(err)
		})
	}
}
