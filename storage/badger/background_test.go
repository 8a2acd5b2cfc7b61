package badger

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// Ensure that errors and warnings injected through Badger's logger adapter
// are reported as the storage package documents.
func TestBackground_Injected(t *testing.T) {
	cause := errors.New("disk on fire")
	log := func(s storage.Store) badgerLogger { return badgerLogger{s.(*badgerStore).rep} }
	storagetest.CheckInjected(t, storage.Badger, []storagetest.Injected{
		{Name: "Errorf", Fire: func(s storage.Store) { log(s).Errorf("error flushing memtable to disk: %v, retrying\n", cause) }, Level: slog.LevelError, Text: "error flushing memtable to disk: disk on fire, retrying"},
		{Name: "Warningf", Fire: func(s storage.Store) { log(s).Warningf("Block cache might be too small.\n") }, Level: slog.LevelWarn, Text: "Block cache might be too small."},
		{Name: "Infof", Fire: func(s storage.Store) { log(s).Infof("Replaying file id: %d\n", 7) }, Debug: true, Text: "Replaying file id: 7"},
		{Name: "Debugf", Fire: func(s storage.Store) { log(s).Debugf("Value log discard stats empty") }, Debug: true, Text: "Value log discard stats empty"},
	})
}

// Ensure that a nil Options.Logger logs through slog.Default().
func TestBackground_DefaultLogger(t *testing.T) {
	storagetest.CheckDefaultLogger(t, storage.Badger, func(s storage.Store) {
		badgerLogger{s.(*badgerStore).rep}.Errorf("compaction failed")
	})
}
