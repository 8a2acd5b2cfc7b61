package pgtest

import (
	"context"
	"testing"

	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/postgres"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// Table returns the DSN of a fresh table on the test server; the table is
// dropped when the test ends (after the test's later clean-ups, such as
// closing a store opened on it).
func Table(t testing.TB) string {
	t.Helper()
	dsn := storagetest.PostgresDSN(t)
	t.Cleanup(func() {
		if err := postgres.Drop(context.Background(), dsn); err != nil {
			t.Errorf("drop the test table: %v", err)
		}
	})
	return dsn
}

// CopyOf copies every key of the local store at dir into a fresh Table
// and returns its DSN.
func CopyOf(t testing.TB, dir string) string {
	t.Helper()
	dsn := Table(t)
	src, err := storage.Open(dir, &storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := storage.Open(dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	storagetest.Copy(t, dst, src)
	return dsn
}

// Open opens a store on a fresh Table with opts and returns the table's
// DSN and the store, closed when the test ends (before the table is
// dropped).
func Open(t testing.TB, opts *storage.Options) (string, storage.Store) {
	t.Helper()
	dsn := Table(t)
	s, err := storage.Open(dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return dsn, s
}
