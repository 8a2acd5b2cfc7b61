package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/internal/engine"
)

// Ensure that, in a program that links no engine (this test binary imports
// neither backend), Open fails with ErrNotLinked before it creates the
// directory or its marker.
func TestOpenWithoutEngine(t *testing.T) {
	if got := storage.Registered(); len(got) != 0 {
		t.Fatalf("engines linked: %v", got)
	}
	dir := filepath.Join(t.TempDir(), "db")
	for _, o := range []*storage.Options{nil, {Backend: storage.Badger}, {InMemory: true}} {
		if _, err := storage.Open(dir, o); !errors.Is(err, storage.ErrNotLinked) {
			t.Errorf("%+v: %v, want ErrNotLinked", o, err)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory left behind: %v", err)
	}
}

// Ensure that the Reporter's log is rate-limited (a burst, then one per
// interval carrying the number left out) while every report is counted and
// handed to the hook.
func TestReporter_RateLimit(t *testing.T) {
	var logged []string
	h := &recordHandler{add: func(r slog.Record) {
		n := 0
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "suppressed" {
				n = int(a.Value.Int64())
			}
			return true
		})
		logged = append(logged, fmt.Sprintf("%s suppressed=%d", r.Message, n))
	}}
	hooked := 0
	r := engine.NewReporter(storage.Pebble, storage.Options{Logger: slog.New(h), OnBackgroundError: func(error) { hooked++ }})
	for i := range 1000 {
		r.Errorf("flush failed %d", i)
	}
	if got := r.Counts().Errors; got != 1000 || hooked != 1000 {
		t.Errorf("counted %d, hooked %d, want 1000 and 1000", got, hooked)
	}
	if len(logged) != engine.LogBurst {
		t.Errorf("logged %d of 1000 reports within the interval, want %d: %v", len(logged), engine.LogBurst, logged)
	}
}

// Ensure that Fail keeps the first fault and that Fault wraps ErrFault and
// the cause.
func TestReporter_Fault(t *testing.T) {
	r := engine.NewReporter(storage.Pebble, storage.Options{Logger: slog.New(slog.DiscardHandler)})
	if r.Fault() != nil {
		t.Fatal("fault before any")
	}
	first := &os.PathError{Op: "write", Path: "000001.log", Err: syscall.ENOSPC}
	r.Fail(first)
	r.Fail(errors.New("second"))
	err := r.Fault()
	if !errors.Is(err, storage.ErrFault) || !errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "second") {
		t.Errorf("Fault() = %v, want ErrFault wrapping the first cause", err)
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{{first, true}, {fmt.Errorf("flush: %w", syscall.EIO), true}, {syscall.EROFS, true}, {errors.New("ENOSPC"), false}, {os.ErrNotExist, false}} {
		if got := engine.IsWriteFault(tc.err); got != tc.want {
			t.Errorf("IsWriteFault(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

type recordHandler struct{ add func(slog.Record) }

func (h *recordHandler) Enabled(context.Context, slog.Level) bool      { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error { h.add(r); return nil }
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler            { return h }
func (h *recordHandler) WithGroup(string) slog.Handler                 { return h }

// Ensure that a detached reporter (its open failed) neither logs, counts
// nor calls the hook for what the engine's leftover goroutines report.
func TestReporter_Detach(t *testing.T) {
	logged, hooked := 0, 0
	h := &recordHandler{add: func(slog.Record) { logged++ }}
	r := engine.NewReporter(storage.Pebble, storage.Options{Logger: slog.New(h), OnBackgroundError: func(error) { hooked++ }})
	r.Errorf("before")
	r.Detach()
	r.Errorf("after")
	r.Warnf("after")
	if c := r.Counts(); logged != 1 || hooked != 1 || c.Errors != 1 || c.Warnings != 0 {
		t.Errorf("logged %d, hooked %d, counts %+v; want one of each, before Detach only", logged, hooked, c)
	}
}
