package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/postgres"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// freshDSN returns the DSN of a new table, dropped when the test ends
// (the test is skipped without a server: storagetest.PostgresDSN).
func freshDSN(t *testing.T, params ...string) string {
	t.Helper()
	dsn := storagetest.PostgresDSN(t)
	for i := 0; i+1 < len(params); i += 2 {
		dsn += "&" + url.QueryEscape(params[i]) + "=" + url.QueryEscape(params[i+1])
	}
	t.Cleanup(func() {
		if err := postgres.Drop(context.Background(), dsn); err != nil {
			t.Errorf("drop: %v", err)
		}
	})
	return dsn
}

func openT(t *testing.T, dsn string, o *storage.Options) storage.Store {
	t.Helper()
	s, err := storage.Open(dsn, o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

// Ensure that the engine passes the conformance suite, with either writer
// lock and with asynchronous commit.
func TestConformance(t *testing.T) {
	storagetest.PostgresDSN(t) // skips without a server
	for _, tc := range []struct {
		name   string
		params []string
		o      *storage.Options
	}{
		{"advisory", nil, nil},
		{"lease", []string{"fasd_lock", "lease"}, nil},
		{"nosync", nil, &storage.Options{NoSync: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storagetest.Run(t, func(t *testing.T) storage.Store {
				return openT(t, freshDSN(t, tc.params...), tc.o)
			})
		})
	}
}

// Ensure that a second handle on the same table is refused with ErrLocked
// while the first is open, under either lock, that another table of the
// same database opens meanwhile, and that the table reopens after Close
// with its data and backend.
func TestOpen_LockedReopen(t *testing.T) {
	storagetest.PostgresDSN(t)
	for _, lock := range []string{"advisory", "lease"} {
		t.Run(lock, func(t *testing.T) {
			dsn := freshDSN(t, "fasd_lock", lock)
			s := openT(t, dsn, nil)
			b := s.NewBatch()
			if err := errors.Join(b.Set([]byte("k"), []byte("v")), b.Commit()); err != nil {
				t.Fatal(err)
			}
			if _, err := storage.Open(dsn, nil); !errors.Is(err, storage.ErrLocked) {
				t.Fatalf("second open: %v, want ErrLocked", err)
			}
			other := openT(t, freshDSN(t, "fasd_lock", lock), nil)
			if err := other.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openT(t, dsn, nil)
			defer s.Close()
			if s.Backend() != storage.Postgres {
				t.Errorf("backend %s", s.Backend())
			}
			if v, err := s.Get([]byte("k")); err != nil || string(v) != "v" {
				t.Fatalf("after reopen: %q, %v", v, err)
			}
		})
	}
}

// Ensure that a handle whose writer lease was taken over cannot commit:
// the check is in the commit's transaction, and nothing of the batch is
// written.
func TestLease_Fenced(t *testing.T) {
	dsn := freshDSN(t, "fasd_lock", "lease")
	s := openT(t, dsn, nil)
	defer s.Close()
	// s stalls past its lease; another handle takes the store over.
	if err := postgres.ExpireLease(context.Background(), dsn); err != nil {
		t.Fatal(err)
	}
	next := openT(t, dsn, nil)
	defer next.Close()
	b := s.NewBatch()
	if err := b.Set([]byte("zombie"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("commit after losing the lease: %v, want ErrLocked", err)
	}
	if _, err := next.Get([]byte("zombie")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the fenced batch was written: %v", err)
	}
	b = next.NewBatch()
	if err := errors.Join(b.Set([]byte("k"), []byte("v")), b.Commit()); err != nil {
		t.Fatalf("the new holder cannot commit: %v", err)
	}
}

// Ensure that storage.Open routes DSNs to the engine, refuses a DSN with
// another backend, and that malformed engine parameters are refused
// without a connection.
func TestOpen_DSN(t *testing.T) {
	for _, tc := range []struct {
		name, dsn string
		o         *storage.Options
		want      string
	}{
		{"other backend", "postgres://127.0.0.1:1/x", &storage.Options{Backend: storage.Pebble}, "backend mismatch"},
		{"bad table", "postgres://127.0.0.1:1/x?fasd_table=Bad-Name", nil, "fasd_table"},
		{"bad schema", "postgres://127.0.0.1:1/x?fasd_table=a.b.c", nil, "fasd_table"},
		{"bad lock", "postgresql://127.0.0.1:1/x?fasd_lock=flock", nil, "fasd_lock"},
		{"in memory", "postgres://127.0.0.1:1/x", &storage.Options{Backend: storage.Postgres, InMemory: true}, "in-memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := storage.Open(tc.dsn, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
	if !storage.IsDSN("postgresql://h/db") || storage.IsDSN("/tmp/postgres://x") {
		t.Error("IsDSN")
	}
}

// Ensure that a password in the DSN never appears in an error.
func TestOpen_ErrorsHidePassword(t *testing.T) {
	_, err := storage.Open("postgres://u:s3cret@127.0.0.1:1/x?connect_timeout=1", nil)
	if err == nil {
		t.Fatal("open of a closed port succeeded")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("error shows the password: %v", err)
	}
}

// TestShared: a store opened Shared beside the writer reads, refuses plain
// commits and writes through CommitIf; two shared handles racing to
// create one guard key let exactly one through.
func TestShared(t *testing.T) {
	dsn := storagetest.PostgresDSN(t)
	w, err := storage.Open(dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var shared []storage.Store
	for range 2 {
		s, err := storage.Open(dsn, &storage.Options{Shared: true})
		if err != nil {
			t.Fatalf("shared open beside the writer: %v", err)
		}
		defer s.Close()
		shared = append(shared, s)
	}
	b := shared[0].NewBatch()
	_ = b.Set([]byte("x"), []byte("1"))
	if err := b.Commit(); !errors.Is(err, storage.ErrReadOnly) {
		t.Fatalf("plain commit of a shared store: %v, want ErrReadOnly", err)
	}
	for round := range 5 {
		key := []byte(fmt.Sprintf("guard-%d", round))
		errs := make([]error, len(shared))
		var wg sync.WaitGroup
		for i, s := range shared {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b := s.NewBatch()
				_ = b.Set(key, []byte{byte(i)})
				errs[i] = storage.CommitIf(s, b, key, nil)
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, storage.ErrConflict):
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d shared handles created the guard key, want 1", round, wins)
		}
	}
}

// TestShared_DistinctGuardsNeverConflict: shared handles committing at
// once, each under its own guard key that holds the expected value, all
// succeed. The server may abort some of these SERIALIZABLE transactions
// (40001: they read and write rows of the same pages); CommitIf runs them
// again instead of reporting a conflict the guards do not show — in a
// distributed materialize such a false conflict cost a worker its lease
// and the part's work.
func TestShared_DistinctGuardsNeverConflict(t *testing.T) {
	dsn := freshDSN(t)
	w := openT(t, dsn, nil)
	defer w.Close()
	const handles, rounds = 4, 40
	b := w.NewBatch()
	for i := range handles {
		_ = b.Set([]byte(fmt.Sprintf("lease-%d", i)), []byte("0"))
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, handles)
	for i := range handles {
		s := openT(t, dsn, &storage.Options{Shared: true})
		defer s.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			guard := []byte(fmt.Sprintf("lease-%d", i))
			want := []byte("0")
			for r := range rounds {
				b := s.NewBatch()
				next := []byte(fmt.Sprint(r + 1))
				_ = b.Set(guard, next)
				for k := range 20 { // staged rows, as a worker's part writes
					_ = b.Set([]byte(fmt.Sprintf("stage-%d-%d", i, k)), next)
				}
				if err := storage.CommitIf(s, b, guard, want); err != nil {
					errs[i] = fmt.Errorf("handle %d round %d: %w", i, r, err)
					return
				}
				want = next
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
