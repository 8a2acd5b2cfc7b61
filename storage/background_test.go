package storage_test

import (
	"log/slog"
	"testing"

	"github.com/fasd-db/fasd/storage"
	_ "github.com/fasd-db/fasd/storage/badger"
	_ "github.com/fasd-db/fasd/storage/pebble"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// Ensure that a healthy store reports nothing: an on-disk write, close and
// reopen cycle logs no error or warning, calls no hook and counts nothing,
// so that the slog.Default() default stays quiet. Badger's routine messages
// on open arrive at debug level through the same adapter.
func TestBackground_QuietWhenHealthy(t *testing.T) {
	for _, b := range []storage.Backend{storage.Pebble, storage.Badger} {
		t.Run(string(b), func(t *testing.T) {
			dir := t.TempDir()
			c := &storagetest.Capture{Level: slog.LevelDebug}
			h := &storagetest.HookLog{}
			o := &storage.Options{Backend: b, NoSync: true, Logger: slog.New(c), OnBackgroundError: h.Add}
			for round := range 2 {
				s, err := storage.Open(dir, o)
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
				if got := storage.BackgroundStats(s); got != (storage.BackgroundCounts{}) {
					t.Errorf("round %d: counts %+v on a healthy store", round, got)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			debug := 0
			for _, r := range c.Records() {
				if r.Level >= slog.LevelWarn {
					t.Errorf("healthy store logged %v %q err=%q", r.Level, r.Message, storagetest.Attr(r, "err"))
				}
				if r.Level == slog.LevelDebug && storagetest.Attr(r, "backend") == string(b) {
					debug++
				}
			}
			if n := len(h.All()); n != 0 {
				t.Errorf("hook called %d times on a healthy store: %v", n, h.All())
			}
			if b == storage.Badger && debug == 0 {
				t.Error("no debug record from Badger's open: the logger adapter is not wired")
			}
		})
	}
}
