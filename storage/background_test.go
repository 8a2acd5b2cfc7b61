package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// capture is a slog.Handler that keeps every record it is given.
type capture struct {
	mu    sync.Mutex
	level slog.Level
	recs  []slog.Record
}

func (c *capture) Enabled(_ context.Context, l slog.Level) bool { return l >= c.level }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, r.Clone())
	return nil
}
func (c *capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *capture) WithGroup(string) slog.Handler      { return c }

func (c *capture) records() []slog.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]slog.Record(nil), c.recs...)
}

// attr returns the string value of the record's attribute key.
func attr(r slog.Record, key string) string {
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

// hookLog collects what OnBackgroundError receives.
type hookLog struct {
	mu   sync.Mutex
	errs []error
}

func (h *hookLog) add(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errs = append(h.errs, err)
}

func (h *hookLog) all() []error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]error(nil), h.errs...)
}

// openCapturing opens an in-memory store of backend b whose messages go to
// a capturing handler (at level) and a hook.
func openCapturing(t *testing.T, b Backend, level slog.Level) (Store, *capture, *hookLog) {
	t.Helper()
	c := &capture{level: level}
	h := &hookLog{}
	s, err := Open("", &Options{Backend: b, InMemory: true, Logger: slog.New(c), OnBackgroundError: h.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, c, h
}

// Ensure that errors and warnings injected through each engine's logger
// adapter and event listener reach slog at the right level, reach the hook
// as a *BackgroundError, and are counted; and that routine messages are
// logged at debug level only, without hook call or count.
func TestBackground_Injected(t *testing.T) {
	cause := errors.New("disk on fire")
	type event struct {
		name  string
		fire  func(Store)
		level slog.Level // 0 with debug: a routine message
		debug bool
		text  string
		cause error
	}
	pebbleLog := func(s Store) pebbleLogger { return pebbleLogger{s.(*pebbleStore).rep} }
	pebbleEv := func(s Store) *pebble.EventListener { return pebbleEvents(s.(*pebbleStore).rep) }
	badgerLog := func(s Store) badgerLogger { return badgerLogger{s.(*badgerStore).rep} }
	cases := []struct {
		backend Backend
		events  []event
	}{
		{Pebble, []event{
			{name: "Errorf", fire: func(s Store) { pebbleLog(s).Errorf("ingest cleanup failed: %v", cause) }, level: slog.LevelError, text: "ingest cleanup failed: disk on fire"},
			{name: "BackgroundError", fire: func(s Store) { pebbleEv(s).BackgroundError(cause) }, level: slog.LevelError, text: "disk on fire", cause: cause},
			{name: "DataCorruption", fire: func(s Store) {
				pebbleEv(s).DataCorruption(pebble.DataCorruptionInfo{Path: "000123.sst", Details: cause})
			}, level: slog.LevelError, text: "on-disk corruption in 000123.sst: disk on fire", cause: cause},
			{name: "Infof", fire: func(s Store) { pebbleLog(s).Infof("flushed %d memtables\n", 2) }, debug: true, text: "flushed 2 memtables"},
		}},
		{Badger, []event{
			{name: "Errorf", fire: func(s Store) { badgerLog(s).Errorf("error flushing memtable to disk: %v, retrying\n", cause) }, level: slog.LevelError, text: "error flushing memtable to disk: disk on fire, retrying"},
			{name: "Warningf", fire: func(s Store) { badgerLog(s).Warningf("Block cache might be too small.\n") }, level: slog.LevelWarn, text: "Block cache might be too small."},
			{name: "Infof", fire: func(s Store) { badgerLog(s).Infof("Replaying file id: %d\n", 7) }, debug: true, text: "Replaying file id: 7"},
			{name: "Debugf", fire: func(s Store) { badgerLog(s).Debugf("Value log discard stats empty") }, debug: true, text: "Value log discard stats empty"},
		}},
	}
	for _, tc := range cases {
		for _, ev := range tc.events {
			t.Run(string(tc.backend)+"/"+ev.name, func(t *testing.T) {
				s, c, h := openCapturing(t, tc.backend, slog.LevelDebug)
				before := BackgroundStats(s)
				nrec, nhook := len(c.records()), len(h.all())
				ev.fire(s)
				recs, hooks := c.records()[nrec:], h.all()[nhook:]
				after := BackgroundStats(s)
				if len(recs) != 1 {
					t.Fatalf("got %d log records, want 1", len(recs))
				}
				r := recs[0]
				if ev.debug {
					if r.Level != slog.LevelDebug || r.Message != ev.text {
						t.Errorf("record %v %q, want DEBUG %q", r.Level, r.Message, ev.text)
					}
					if len(hooks) != 0 || after != before {
						t.Errorf("routine message reached the hook (%d calls) or the counts (%+v → %+v)", len(hooks), before, after)
					}
					return
				}
				if r.Level != ev.level || attr(r, "err") != ev.text || attr(r, "backend") != string(tc.backend) {
					t.Errorf("record %v %q err=%q backend=%q, want %v err=%q backend=%s",
						r.Level, r.Message, attr(r, "err"), attr(r, "backend"), ev.level, ev.text, tc.backend)
				}
				if len(hooks) != 1 {
					t.Fatalf("hook called %d times, want 1", len(hooks))
				}
				var be *BackgroundError
				if !errors.As(hooks[0], &be) {
					t.Fatalf("hook got %T, want *BackgroundError", hooks[0])
				}
				if be.Backend != tc.backend || be.Level != ev.level || be.Msg != ev.text {
					t.Errorf("hook got %+v", be)
				}
				if ev.cause != nil && !errors.Is(hooks[0], ev.cause) {
					t.Errorf("hook error %v does not wrap the engine's error", hooks[0])
				}
				if !strings.Contains(hooks[0].Error(), string(tc.backend)) || !strings.Contains(hooks[0].Error(), ev.text) {
					t.Errorf("hook error text %q lacks backend or message", hooks[0])
				}
				want := before
				if ev.level == slog.LevelError {
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
}

// Ensure that a healthy store reports nothing: an on-disk write, close and
// reopen cycle logs no error or warning, calls no hook and counts nothing,
// so that the slog.Default() default stays quiet. Badger's routine messages
// on open arrive at debug level through the same adapter.
func TestBackground_QuietWhenHealthy(t *testing.T) {
	for _, b := range []Backend{Pebble, Badger} {
		t.Run(string(b), func(t *testing.T) {
			dir := t.TempDir()
			c := &capture{level: slog.LevelDebug}
			h := &hookLog{}
			o := &Options{Backend: b, NoSync: true, Logger: slog.New(c), OnBackgroundError: h.add}
			for round := range 2 {
				s, err := Open(dir, o)
				if err != nil {
					t.Fatal(err)
				}
				batch := s.NewBatch()
				for i := range 1000 {
					if err := batch.Set([]byte{1, byte(round), byte(i >> 8), byte(i)}, make([]byte, 100)); err != nil {
						t.Fatal(err)
					}
				}
				if err := batch.Commit(); err != nil {
					t.Fatal(err)
				}
				if got := BackgroundStats(s); got != (BackgroundCounts{}) {
					t.Errorf("round %d: counts %+v on a healthy store", round, got)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			debug := 0
			for _, r := range c.records() {
				if r.Level >= slog.LevelWarn {
					t.Errorf("healthy store logged %v %q err=%q", r.Level, r.Message, attr(r, "err"))
				}
				if r.Level == slog.LevelDebug && attr(r, "backend") == string(b) {
					debug++
				}
			}
			if n := len(h.all()); n != 0 {
				t.Errorf("hook called %d times on a healthy store: %v", n, h.all())
			}
			if b == Badger && debug == 0 {
				t.Error("no debug record from Badger's open: the logger adapter is not wired")
			}
		})
	}
}

// Ensure that a nil Options.Logger logs through slog.Default().
func TestBackground_DefaultLogger(t *testing.T) {
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	c := &capture{level: slog.LevelInfo}
	slog.SetDefault(slog.New(c))
	for _, b := range []Backend{Pebble, Badger} {
		s, err := Open("", &Options{Backend: b, InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		switch s := s.(type) {
		case *pebbleStore:
			pebbleLogger{s.rep}.Errorf("compaction failed")
		case *badgerStore:
			badgerLogger{s.rep}.Errorf("compaction failed")
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range c.records() {
			if r.Level == slog.LevelError && attr(r, "backend") == string(b) && attr(r, "err") == "compaction failed" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d error records in slog.Default(), want 1", b, n)
		}
	}
}

// Ensure that Fatalf from Pebble is reported before it panics, and panics
// rather than exiting the process.
func TestBackground_PebbleFatal(t *testing.T) {
	s, c, h := openCapturing(t, Pebble, slog.LevelInfo)
	func() {
		defer func() {
			if p := recover(); p == nil || !strings.Contains(p.(string), "manifest gone") {
				t.Errorf("recovered %v, want a panic naming the message", p)
			}
		}()
		pebbleLogger{s.(*pebbleStore).rep}.Fatalf("%s", "manifest gone")
	}()
	if got := BackgroundStats(s).Errors; got != 1 {
		t.Errorf("Errors = %d, want 1", got)
	}
	if len(c.records()) != 1 || len(h.all()) != 1 {
		t.Errorf("%d records, %d hook calls, want 1 and 1", len(c.records()), len(h.all()))
	}
}

// Ensure that a real corruption found by Pebble on a read arrives as a
// background error (through the DataCorruption event: Pebble's default
// would call Fatalf and take the process down) while the read itself fails
// with an error.
func TestBackground_PebbleCorruptTable(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, &Options{Backend: Pebble, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	batch := s.NewBatch()
	val := make([]byte, 200)
	for i := range 4000 {
		for j := range val {
			val[j] = byte(rng.Uint32())
		}
		if err := batch.Set(fmt.Appendf(nil, "k%05d", i), val); err != nil {
			t.Fatal(err)
		}
	}
	if err := batch.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := s.(*pebbleStore).db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	var table string
	var size int64
	for _, p := range tables {
		if st, err := os.Stat(p); err == nil && st.Size() > size {
			table, size = p, st.Size()
		}
	}
	if size < 100<<10 {
		t.Fatalf("no flushed table to damage (largest %q, %d bytes)", table, size)
	}
	data, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	for i := size / 4; i < size/2; i += 4096 { // data blocks, far from index and footer
		data[i] ^= 0xff
	}
	if err := os.WriteFile(table, data, 0o644); err != nil {
		t.Fatal(err)
	}

	c := &capture{level: slog.LevelInfo}
	h := &hookLog{}
	s, err = Open(dir, &Options{Backend: Pebble, Logger: slog.New(c), OnBackgroundError: h.add})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	failed := 0
	for i := 0; i < 4000 && failed < 3; i++ {
		if _, err := s.Get(fmt.Appendf(nil, "k%05d", i)); err != nil && !errors.Is(err, ErrNotFound) {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no read met the damage")
	}
	if got := BackgroundStats(s).Errors; got == 0 {
		t.Fatalf("%d reads failed, but no background error was counted", failed)
	}
	var be *BackgroundError
	if hooks := h.all(); len(hooks) == 0 || !errors.As(hooks[0], &be) || !strings.Contains(be.Msg, "corruption") ||
		!strings.Contains(be.Msg, filepath.Base(table)) || be.Err == nil {
		t.Errorf("hook got %v, want a corruption report naming %s", h.all(), filepath.Base(table))
	}
	if recs := c.records(); len(recs) == 0 || recs[0].Level != slog.LevelError {
		t.Errorf("no error record logged: %d records", len(recs))
	}
}
