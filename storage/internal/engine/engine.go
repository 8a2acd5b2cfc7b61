package engine

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/fasd-db/fasd/storage"
)

// Reporter is the single path by which an engine's messages leave it: the
// engines' logger adapters and event listeners call it, it logs through
// slog, calls the hook and counts (see storage.BackgroundError).
type Reporter struct {
	backend  storage.Backend
	log      *slog.Logger
	hook     func(error)
	errors   atomic.Uint64
	warnings atomic.Uint64
}

// NewReporter returns the reporter of a store of backend b opened with o.
func NewReporter(b storage.Backend, o storage.Options) *Reporter {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Reporter{backend: b, log: log, hook: o.OnBackgroundError}
}

// Report logs, counts and hands to the hook one error (level
// slog.LevelError) or warning (any lower level). err is the engine's error
// value when it gave one; msg is its text.
func (r *Reporter) Report(level slog.Level, err error, msg string) {
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
		r.hook(&storage.BackgroundError{Backend: r.backend, Level: level, Msg: msg, Err: err})
	}
}

// Errorf reports an error.
func (r *Reporter) Errorf(format string, args ...any) {
	r.Report(slog.LevelError, nil, fmt.Sprintf(format, args...))
}

// Warnf reports a warning.
func (r *Reporter) Warnf(format string, args ...any) {
	r.Report(slog.LevelWarn, nil, fmt.Sprintf(format, args...))
}

// Debugf passes the engine's routine messages on at slog.LevelDebug; they
// are neither counted nor handed to the hook. The message is only formatted
// when the logger wants it.
func (r *Reporter) Debugf(format string, args ...any) {
	ctx := context.Background()
	if !r.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	r.log.Log(ctx, slog.LevelDebug, strings.TrimRight(fmt.Sprintf(format, args...), "\n"),
		slog.String("backend", string(r.backend)))
}

// Counts returns the errors and warnings reported so far.
func (r *Reporter) Counts() storage.BackgroundCounts {
	return storage.BackgroundCounts{Errors: r.errors.Load(), Warnings: r.warnings.Load()}
}

// ClosedBatch is what NewBatch returns on a closed store: every call fails
// with storage.ErrClosed.
type ClosedBatch struct{}

func (ClosedBatch) Set(_, _ []byte) error { return storage.ErrClosed }
func (ClosedBatch) Delete([]byte) error   { return storage.ErrClosed }
func (ClosedBatch) Count() int            { return 0 }
func (ClosedBatch) Len() int              { return 0 }
func (ClosedBatch) Commit() error         { return storage.ErrClosed }
func (ClosedBatch) Close() error          { return nil }
