package pebble

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fasd-db/fasd/storage"
)

// diskFull is an InjectFault that, once armed, fails the N-th file write
// operation from then on and every later one with errno, as a disk that
// fills up stays full; it counts the operations it saw.
type diskFull struct {
	seen  atomic.Int64
	at    int64 // 0: never fail
	errno syscall.Errno
	ops   atomic.Int64 // operations asked about in all
}

func (d *diskFull) inject(op storage.FileOp, path string) error {
	d.ops.Add(1)
	if d.at == 0 {
		return nil
	}
	if d.seen.Add(1) >= d.at {
		return &os.PathError{Op: string(op), Path: path, Err: d.errno}
	}
	return nil
}

// faultWorkload commits 20 small batches (well inside Pebble's first
// memtable: see the caveat in fault_test.go of cmd/fasd about rotateWAL)
// and returns the indices of those whose Commit returned nil.
func faultWorkload(s storage.Store) (ok []int, errs []error) {
	for i := range 20 {
		b := s.NewBatch()
		for j := range 10 {
			_ = b.Set(fmt.Appendf(nil, "k%03d-%02d", i, j), fmt.Appendf(nil, "value %d %d", i, j))
		}
		if err := b.Commit(); err != nil {
			errs = append(errs, err)
		} else {
			ok = append(ok, i)
		}
		b.Close()
	}
	return ok, errs
}

// Ensure that a full disk or an I/O error at any file operation of a
// commit workload (open included) never panics, that every commit after
// the first failing one fails fast with ErrFault, that Close returns
// within its bound, and that once the fault is lifted the store opens with
// every commit that returned nil.
func TestFault_EveryWriteOp(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	count := &diskFull{}
	dir := filepath.Join(t.TempDir(), "count")
	s, err := storage.Open(dir, &storage.Options{Backend: storage.Pebble, Logger: quiet, InjectFault: count.inject})
	if err != nil {
		t.Fatal(err)
	}
	if _, errs := faultWorkload(s); len(errs) > 0 {
		t.Fatal(errs[0])
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	total := count.ops.Load()
	if total < 20 {
		t.Fatalf("the workload made %d file operations, want at least one per commit", total)
	}
	points := 0
	for at := int64(1); at <= total+1; at++ {
		for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
			points++
			fault := &diskFull{at: at, errno: errno}
			dir := filepath.Join(t.TempDir(), "db")
			what := fmt.Sprintf("%v at file operation %d", errno, at)
			s, err := storage.Open(dir, &storage.Options{Backend: storage.Pebble, Logger: quiet, InjectFault: fault.inject})
			var ok []int
			if err == nil {
				var errs []error
				ok, errs = faultWorkload(s)
				if len(errs) > 1 {
					for _, e := range errs[1:] {
						if !errors.Is(e, storage.ErrFault) {
							t.Errorf("%s: a commit after the first failure: %v, want ErrFault", what, e)
							break
						}
					}
				}
				begin := time.Now()
				cerr := s.Close()
				if d := time.Since(begin); d > closeBound+2*time.Second {
					t.Errorf("%s: Close took %v", what, d)
				}
				if len(errs) > 0 && cerr == nil {
					t.Errorf("%s: Close after a write fault returned nil", what)
				}
			}
			// The fault is lifted: the store opens (or, when the fault
			// came before its creation finished, opens afresh), and
			// holds every commit that returned nil. It is opened as a
			// copy: after a fatal condition Close leaves the engine, and
			// its directory lock, to the process's exit.
			cp := filepath.Join(t.TempDir(), "copy")
			if err := os.CopyFS(cp, os.DirFS(dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			s, err = storage.Open(cp, &storage.Options{Backend: storage.Pebble, Logger: quiet})
			if err != nil {
				t.Errorf("%s: reopen: %v", what, err)
				continue
			}
			for _, i := range ok {
				if v, err := s.Get(fmt.Appendf(nil, "k%03d-%02d", i, 9)); err != nil || string(v) != fmt.Sprintf("value %d 9", i) {
					t.Errorf("%s: commit %d returned nil and is lost: %q, %v", what, i, v, err)
				}
			}
			if err := s.Close(); err != nil {
				t.Errorf("%s: close after reopen: %v", what, err)
			}
		}
	}
	t.Logf("%d file operations, %d fault points", total, points)
}

// Ensure that a read-only open on a full disk asks for no file write at
// all, reads, refuses commits with ErrReadOnly, and closes at once.
func TestFault_ReadOnlyOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	s, err := storage.Open(dir, &storage.Options{Backend: storage.Pebble})
	if err != nil {
		t.Fatal(err)
	}
	if _, errs := faultWorkload(s); len(errs) > 0 {
		t.Fatal(errs[0])
	}
	// No Close: the next open replays the log, as after a kill -9.
	full := &diskFull{at: 1, errno: syscall.ENOSPC}
	cp := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, cp} {
		begin := time.Now()
		ro, err := storage.Open(d, &storage.Options{ReadOnly: true, InjectFault: full.inject})
		if err != nil {
			t.Fatalf("%s: read-only open on a full disk: %v", d, err)
		}
		if v, err := ro.Get([]byte("k019-09")); err != nil || string(v) != "value 19 9" {
			t.Errorf("%s: read: %q, %v", d, v, err)
		}
		b := ro.NewBatch()
		_ = b.Set([]byte("x"), []byte("y"))
		if err := b.Commit(); !errors.Is(err, storage.ErrReadOnly) {
			t.Errorf("%s: commit on a read-only store: %v, want ErrReadOnly", d, err)
		}
		if err := ro.Close(); err != nil {
			t.Errorf("%s: close: %v", d, err)
		}
		if d := time.Since(begin); d > 5*time.Second {
			t.Errorf("read-only open, read and close took %v", d)
		}
	}
	if n := full.ops.Load(); n != 0 {
		t.Errorf("a read-only store asked for %d file writes", n)
	}
}

// Ensure that a read-only open creates nothing and refuses what is not a
// store: a missing or empty directory, a regular file.
func TestFault_ReadOnlyRefusesNonStores(t *testing.T) {
	base := t.TempDir()
	missing := filepath.Join(base, "missing")
	empty := filepath.Join(base, "empty")
	file := filepath.Join(base, "file")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir string
		ro  bool
	}{{missing, true}, {empty, true}, {file, true}, {file, false}} {
		s, err := storage.Open(tc.dir, &storage.Options{ReadOnly: tc.ro})
		if !errors.Is(err, storage.ErrNotStore) {
			t.Errorf("%s (read-only %v): %v, want ErrNotStore", tc.dir, tc.ro, err)
		}
		if s != nil {
			s.Close()
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a read-only open created %s", missing)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("a read-only open wrote %d files in an empty directory", len(entries))
	}
}
