package storagetest

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// Capture is a slog.Handler that keeps every record at or above Level.
type Capture struct {
	Level slog.Level
	mu    sync.Mutex
	recs  []slog.Record
}

func (c *Capture) Enabled(_ context.Context, l slog.Level) bool { return l >= c.Level }
func (c *Capture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, r.Clone())
	return nil
}
func (c *Capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *Capture) WithGroup(string) slog.Handler      { return c }

// Records returns the records so far.
func (c *Capture) Records() []slog.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]slog.Record(nil), c.recs...)
}

// Attr returns the string value of the record's attribute key.
func Attr(r slog.Record, key string) string {
	var v string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.String()
			return false
		}
		return true
	})
	return v
}

// HookLog collects what Options.OnBackgroundError receives (pass Add).
type HookLog struct {
	mu   sync.Mutex
	errs []error
}

// Add records err; safe for concurrent use.
func (h *HookLog) Add(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errs = append(h.errs, err)
}

// All returns the errors so far.
func (h *HookLog) All() []error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]error(nil), h.errs...)
}

// OpenCapturing opens an in-memory store of backend b whose messages go to
// a capturing handler (at level) and a hook.
func OpenCapturing(t *testing.T, b storage.Backend, level slog.Level) (storage.Store, *Capture, *HookLog) {
	t.Helper()
	c := &Capture{Level: level}
	h := &HookLog{}
	s, err := storage.Open("", &storage.Options{Backend: b, InMemory: true, Logger: slog.New(c), OnBackgroundError: h.Add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, c, h
}

// Injected is one message injected through an engine's logger adapter or
// event listener.
type Injected struct {
	Name  string
	Fire  func(storage.Store)
	Level slog.Level // of an error or warning
	Debug bool       // a routine message instead
	Text  string     // the message as logged
	Cause error      // the engine's error value, if it passes one
}

// CheckInjected checks that errors and warnings injected through backend
// b's adapters reach slog at the right level, reach the hook as a
// *storage.BackgroundError and are counted, and that routine messages are
// logged at debug level only, without hook call or count.
func CheckInjected(t *testing.T, b storage.Backend, events []Injected) {
	for _, ev := range events {
		t.Run(string(b)+"/"+ev.Name, func(t *testing.T) {
			s, c, h := OpenCapturing(t, b, slog.LevelDebug)
			before := storage.BackgroundStats(s)
			nrec, nhook := len(c.Records()), len(h.All())
			ev.Fire(s)
			recs, hooks := c.Records()[nrec:], h.All()[nhook:]
			after := storage.BackgroundStats(s)
			if len(recs) != 1 {
				t.Fatalf("got %d log records, want 1", len(recs))
			}
			r := recs[0]
			if ev.Debug {
				if r.Level != slog.LevelDebug || r.Message != ev.Text {
					t.Errorf("record %v %q, want DEBUG %q", r.Level, r.Message, ev.Text)
				}
				if len(hooks) != 0 || after != before {
					t.Errorf("routine message reached the hook (%d calls) or the counts (%+v → %+v)", len(hooks), before, after)
				}
				return
			}
			if r.Level != ev.Level || Attr(r, "err") != ev.Text || Attr(r, "backend") != string(b) {
				t.Errorf("record %v %q err=%q backend=%q, want %v err=%q backend=%s",
					r.Level, r.Message, Attr(r, "err"), Attr(r, "backend"), ev.Level, ev.Text, b)
			}
			if len(hooks) != 1 {
				t.Fatalf("hook called %d times, want 1", len(hooks))
			}
			var be *storage.BackgroundError
			if !errors.As(hooks[0], &be) {
				t.Fatalf("hook got %T, want *BackgroundError", hooks[0])
			}
			if be.Backend != b || be.Level != ev.Level || be.Msg != ev.Text {
				t.Errorf("hook got %+v", be)
			}
			if ev.Cause != nil && !errors.Is(hooks[0], ev.Cause) {
				t.Errorf("hook error %v does not wrap the engine's error", hooks[0])
			}
			if !strings.Contains(hooks[0].Error(), string(b)) || !strings.Contains(hooks[0].Error(), ev.Text) {
				t.Errorf("hook error text %q lacks backend or message", hooks[0])
			}
			want := before
			if ev.Level == slog.LevelError {
				want.Errors++
			} else {
				want.Warnings++
			}
			if after != want {
				t.Errorf("counts %+v → %+v, want %+v", before, after, want)
			}
		})
	}
}

// CheckDefaultLogger checks that a nil Options.Logger logs through
// slog.Default(): fire must report the error "compaction failed" through
// the store's adapter.
func CheckDefaultLogger(t *testing.T, b storage.Backend, fire func(storage.Store)) {
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	c := &Capture{Level: slog.LevelInfo}
	slog.SetDefault(slog.New(c))
	s, err := storage.Open("", &storage.Options{Backend: b, InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	fire(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range c.Records() {
		if r.Level == slog.LevelError && Attr(r, "backend") == string(b) && Attr(r, "err") == "compaction failed" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%s: %d error records in slog.Default(), want 1", b, n)
	}
}
