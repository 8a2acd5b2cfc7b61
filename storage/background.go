package storage

import (
	"fmt"
	"log/slog"
)

// BackgroundError is a problem an engine met outside any call of this
// package: in a flush, a compaction, value-log garbage collection, a cache
// health check, or a corruption check on a read path. Both engines keep
// running after one; the store reports it through Options.Logger and
// Options.OnBackgroundError and counts it (see BackgroundStats).
type BackgroundError struct {
	// Backend is the engine that reported the problem.
	Backend Backend
	// Level is slog.LevelError for errors and slog.LevelWarn for warnings.
	Level slog.Level
	// Msg is the engine's own message.
	Msg string
	// Err is the engine's error value when it passed one (Pebble's
	// background-error and data-corruption events), else nil.
	Err error
}

func (e *BackgroundError) Error() string {
	kind := "error"
	if e.Level < slog.LevelError {
		kind = "warning"
	}
	return fmt.Sprintf("storage: %s background %s: %s", e.Backend, kind, e.Msg)
}

// Unwrap returns the engine's error value, if any.
func (e *BackgroundError) Unwrap() error { return e.Err }

// BackgroundCounts counts the background problems a store reported since it
// was opened.
type BackgroundCounts struct {
	// Errors counts reports at slog.LevelError.
	Errors uint64
	// Warnings counts reports at slog.LevelWarn.
	Warnings uint64
}

// BackgroundCounter is implemented by the stores Open returns.
type BackgroundCounter interface {
	// BackgroundCounts returns the counts so far. Safe for concurrent use,
	// also after Close.
	BackgroundCounts() BackgroundCounts
}

// BackgroundStats returns the background problems s reported since it was
// opened, or zero counts for a Store that does not count them (a wrapper
// that does not implement BackgroundCounter).
func BackgroundStats(s Store) BackgroundCounts {
	if c, ok := s.(BackgroundCounter); ok {
		return c.BackgroundCounts()
	}
	return BackgroundCounts{}
}
