package storage_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/storagetest"
)

var backends = []storage.Backend{storage.Pebble, storage.Badger}

// Ensure that both engines pass the conformance suite in memory and on disk.
func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b)+"/mem", func(t *testing.T) {
			storagetest.Run(t, func(t *testing.T) storage.Store {
				s, err := storage.Open("", &storage.Options{Backend: b, InMemory: true})
				if err != nil {
					t.Fatal(err)
				}
				return s
			})
		})
		t.Run(string(b)+"/disk", func(t *testing.T) {
			if testing.Short() {
				t.Skip("on-disk conformance skipped in -short mode")
			}
			storagetest.Run(t, func(t *testing.T) storage.Store {
				s, err := storage.Open(t.TempDir(), &storage.Options{Backend: b, NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				return s
			})
		})
	}
}

func openT(t *testing.T, dir string, o *storage.Options) storage.Store {
	t.Helper()
	s, err := storage.Open(dir, o)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return s
}

// Ensure that data survives a close and reopen, and that a reopen without a
// backend picks the recorded one.
func TestOpen_Reopen(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			s := openT(t, dir, &storage.Options{Backend: b})
			batch := s.NewBatch()
			if err := batch.Set([]byte("k"), []byte("v")); err != nil {
				t.Fatal(err)
			}
			if err := batch.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openT(t, dir, nil)
			defer s.Close()
			if s.Backend() != b {
				t.Fatalf("reopened as %s, want %s", s.Backend(), b)
			}
			v, err := s.Get([]byte("k"))
			if err != nil || string(v) != "v" {
				t.Fatalf("get after reopen: %q, %v", v, err)
			}
		})
	}
}

// Ensure that opening a store with the other backend is a clear error and
// leaves the store readable by its own backend.
func TestOpen_BackendMismatch(t *testing.T) {
	for _, b := range backends {
		other := storage.Badger
		if b == storage.Badger {
			other = storage.Pebble
		}
		t.Run(string(b), func(t *testing.T) {
			dir := t.TempDir()
			s := openT(t, dir, &storage.Options{Backend: b})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			_, err := storage.Open(dir, &storage.Options{Backend: other})
			if !errors.Is(err, storage.ErrBackendMismatch) {
				t.Fatalf("open with %s: %v, want ErrBackendMismatch", other, err)
			}
			if !strings.Contains(err.Error(), string(b)) || !strings.Contains(err.Error(), string(other)) {
				t.Errorf("message should name both backends: %v", err)
			}
			s = openT(t, dir, &storage.Options{Backend: b})
			s.Close()
		})
	}
}

// Ensure that a marker or record with an unknown format version is refused.
func TestOpen_UnknownFormat(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, nil)
	s.Close()
	marker := filepath.Join(dir, storage.MarkerFile)
	if err := os.WriteFile(marker, []byte("fasd-store\nbackend=pebble\nformat=99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := storage.Open(dir, nil)
	if !errors.Is(err, storage.ErrFormat) || !strings.Contains(err.Error(), "99") {
		t.Fatalf("got %v, want ErrFormat naming version 99", err)
	}
}

// Ensure that a non-empty directory that is no store is refused untouched.
func TestOpen_NotAStore(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "precious.txt")
	if err := os.WriteFile(f, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := storage.Open(dir, nil)
	if !errors.Is(err, storage.ErrNotStore) {
		t.Fatalf("got %v, want ErrNotStore", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory was modified: %d entries", len(entries))
	}
}

// Ensure that the postgres backend is refused for a directory, by option
// or by a marker naming it, before the directory is created or opened.
func TestOpen_PostgresNeedsDSN(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	if _, err := storage.Open(dir, &storage.Options{Backend: storage.Postgres}); err == nil || !strings.Contains(err.Error(), "postgres://") {
		t.Fatalf("got %v, want an error asking for a DSN", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("directory created: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, storage.MarkerFile), []byte("fasd-store\nbackend=postgres\nformat=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.Open(dir, nil); !errors.Is(err, storage.ErrFormat) {
		t.Fatalf("marker naming postgres: %v, want ErrFormat", err)
	}
	if !storage.IsDSN("postgres://h/db") || !storage.IsDSN("postgresql://h/db") || storage.IsDSN("db/postgres://x") || storage.IsDSN("") {
		t.Error("IsDSN")
	}
}

// Ensure that invalid options are reported together.
func TestOptions_Validate(t *testing.T) {
	err := (&storage.Options{Backend: "rocks", CacheBytes: -1}).Validate()
	if err == nil || !strings.Contains(err.Error(), "rocks") || !strings.Contains(err.Error(), "CacheBytes") {
		t.Fatalf("got %v, want both problems", err)
	}
	if _, err := storage.Open("", &storage.Options{Backend: "rocks", InMemory: true}); err == nil {
		t.Fatal("open with unknown backend succeeded")
	}
}

// TestOpen_SharedNeedsServer: a local store is opened by one process only,
// so Shared is refused for a directory and for a local backend.
func TestOpen_SharedNeedsServer(t *testing.T) {
	for _, o := range []*storage.Options{{Shared: true}, {Shared: true, Backend: storage.Pebble}, {Shared: true, Backend: storage.Badger}} {
		if s, err := storage.Open(t.TempDir(), o); err == nil {
			s.Close()
			t.Fatalf("shared open of a directory with backend %q succeeded", o.Backend)
		}
	}
	if err := (&storage.Options{Shared: true, Backend: storage.Pebble}).Validate(); err == nil {
		t.Fatal("Validate accepts Shared with Pebble")
	}
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a", "b"}, {"a\xff", "b"}, {"\xff\xff", ""}, {"ab", "ac"}, {"", ""},
	}
	for _, tc := range tests {
		got := storage.PrefixEnd([]byte(tc.in))
		if string(got) != tc.want || (tc.want == "" && got != nil) {
			t.Errorf("PrefixEnd(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
