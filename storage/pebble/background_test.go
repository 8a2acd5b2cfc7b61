package pebble

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pebbledb "github.com/cockroachdb/pebble/v2"
	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// Ensure that errors and warnings injected through Pebble's logger adapter
// and event listener are reported as the storage package documents.
func TestBackground_Injected(t *testing.T) {
	cause := errors.New("disk on fire")
	log := func(s storage.Store) pebbleLogger { return pebbleLogger{s.(*pebbleStore).rep} }
	ev := func(s storage.Store) *pebbledb.EventListener { return pebbleEvents(s.(*pebbleStore).rep) }
	storagetest.CheckInjected(t, storage.Pebble, []storagetest.Injected{
		{Name: "Errorf", Fire: func(s storage.Store) { log(s).Errorf("ingest cleanup failed: %v", cause) }, Level: slog.LevelError, Text: "ingest cleanup failed: disk on fire"},
		{Name: "BackgroundError", Fire: func(s storage.Store) { ev(s).BackgroundError(cause) }, Level: slog.LevelError, Text: "disk on fire", Cause: cause},
		{Name: "DataCorruption", Fire: func(s storage.Store) {
			ev(s).DataCorruption(pebbledb.DataCorruptionInfo{Path: "000123.sst", Details: cause})
		}, Level: slog.LevelError, Text: "on-disk corruption in 000123.sst: disk on fire", Cause: cause},
		{Name: "Infof", Fire: func(s storage.Store) { log(s).Infof("flushed %d memtables\n", 2) }, Debug: true, Text: "flushed 2 memtables"},
	})
}

// Ensure that a nil Options.Logger logs through slog.Default().
func TestBackground_DefaultLogger(t *testing.T) {
	storagetest.CheckDefaultLogger(t, storage.Pebble, func(s storage.Store) {
		pebbleLogger{s.(*pebbleStore).rep}.Errorf("compaction failed")
	})
}

// Ensure that Fatalf from Pebble is reported, does not panic, parks the
// calling goroutine and puts the store in the write-fault state: commits
// fail with ErrFault, reads go on, Close returns the fault; and that a
// fatal commit error returns to the commit.
func TestBackground_PebbleFatal(t *testing.T) {
	s, c, h := storagetest.OpenCapturing(t, storage.Pebble, slog.LevelInfo)
	b := s.NewBatch()
	if err := b.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	// Fatalf parks the goroutine that calls it (one of Pebble's).
	go pebbleLogger{s.(*pebbleStore).rep}.Fatalf("%s", "manifest gone")
	for i := 0; storage.BackgroundStats(s).Errors == 0 && i < 500; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if got := storage.BackgroundStats(s).Errors; got != 1 {
		t.Errorf("Errors = %d, want 1", got)
	}
	if len(c.Records()) != 1 || len(h.All()) != 1 {
		t.Errorf("%d records, %d hook calls, want 1 and 1", len(c.Records()), len(h.All()))
	}
	b = s.NewBatch()
	if err := b.Set([]byte("k2"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); !errors.Is(err, storage.ErrFault) || !strings.Contains(err.Error(), "manifest gone") {
		t.Errorf("commit after Fatalf: %v, want ErrFault naming the cause", err)
	}
	if v, err := s.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Errorf("read after Fatalf: %q, %v", v, err)
	}
	if err := s.Close(); !errors.Is(err, storage.ErrFault) {
		t.Errorf("Close after Fatalf: %v, want ErrFault", err)
	}
}

// Ensure that a real corruption found by Pebble on a read arrives as a
// background error (through the DataCorruption event: Pebble's default
// would call Fatalf and take the process down) while the read itself fails
// with an error.
func TestBackground_PebbleCorruptTable(t *testing.T) {
	dir := t.TempDir()
	s, err := storage.Open(dir, &storage.Options{Backend: storage.Pebble, Logger: slog.New(slog.DiscardHandler)})
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

	c := &storagetest.Capture{Level: slog.LevelInfo}
	h := &storagetest.HookLog{}
	s, err = storage.Open(dir, &storage.Options{Backend: storage.Pebble, Logger: slog.New(c), OnBackgroundError: h.Add})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	failed := 0
	for i := 0; i < 4000 && failed < 3; i++ {
		if _, err := s.Get(fmt.Appendf(nil, "k%05d", i)); err != nil && !errors.Is(err, storage.ErrNotFound) {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no read met the damage")
	}
	if got := storage.BackgroundStats(s).Errors; got == 0 {
		t.Fatalf("%d reads failed, but no background error was counted", failed)
	}
	var be *storage.BackgroundError
	if hooks := h.All(); len(hooks) == 0 || !errors.As(hooks[0], &be) || !strings.Contains(be.Msg, "corruption") ||
		!strings.Contains(be.Msg, filepath.Base(table)) || be.Err == nil {
		t.Errorf("hook got %v, want a corruption report naming %s", h.All(), filepath.Base(table))
	}
	if recs := c.Records(); len(recs) == 0 || recs[0].Level != slog.LevelError {
		t.Errorf("no error record logged: %d records", len(recs))
	}
}
