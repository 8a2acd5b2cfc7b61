package storage

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
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

// reporter is the single path by which an engine's messages leave it: the
// engines' logger adapters and event listeners call it, it logs through
// slog, calls the hook and counts.
type reporter struct {
	backend  Backend
	log      *slog.Logger
	hook     func(error)
	errors   atomic.Uint64
	warnings atomic.Uint64
}

func newReporter(b Backend, o Options) *reporter {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	return &reporter{backend: b, log: log, hook: o.OnBackgroundError}
}

// report logs, counts and hands to the hook one error (level
// slog.LevelError) or warning (any lower level). err is the engine's error
// value when it gave one; msg is its text.
func (r *reporter) report(level slog.Level, err error, msg string) {
	msg = strings.TrimRight(msg, "\n")
	title := "storage: background error"
	if level >= slog.LevelError {
		level = slog.LevelError
		r.errors.Add(1)
	} else {
		level, title = slog.LevelWarn, "storage: background warning"
		r.warnings.Add(1)
	}
	r.log.Log(context.Background(), level, title,
		slog.String("backend", string(r.backend)), slog.String("err", msg))
	if r.hook != nil {
		r.hook(&BackgroundError{Backend: r.backend, Level: level, Msg: msg, Err: err})
	}
}

func (r *reporter) errorf(format string, args ...any) {
	r.report(slog.LevelError, nil, fmt.Sprintf(format, args...))
}

func (r *reporter) warnf(format string, args ...any) {
	r.report(slog.LevelWarn, nil, fmt.Sprintf(format, args...))
}

// debugf passes the engine's routine messages on at slog.LevelDebug; they
// are neither counted nor handed to the hook. The message is only formatted
// when the logger wants it.
func (r *reporter) debugf(format string, args ...any) {
	ctx := context.Background()
	if !r.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	r.log.Log(ctx, slog.LevelDebug, strings.TrimRight(fmt.Sprintf(format, args...), "\n"),
		slog.String("backend", string(r.backend)))
}

func (r *reporter) counts() BackgroundCounts {
	return BackgroundCounts{Errors: r.errors.Load(), Warnings: r.warnings.Load()}
}
