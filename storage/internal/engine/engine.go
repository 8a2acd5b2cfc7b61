package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fasd-db/fasd/storage"
)

// Reporter is the single path by which an engine's messages leave it: the
// engines' logger adapters and event listeners call it, it logs through
// slog, calls the hook and counts (see storage.BackgroundError).
//
// The log is rate-limited: the first LogBurst reports are logged, then at
// most one per LogEvery, carrying the number of reports left out since the
// previous one (an engine that retries a failing flush on a full disk
// reports the same error many times a second). Every report is counted and
// handed to the hook.
//
// The Reporter also holds the store's write fault (see storage.ErrFault):
// the first unrecoverable write error, after which the store refuses writes.
type Reporter struct {
	backend  storage.Backend
	log      *slog.Logger
	hook     func(error)
	errors   atomic.Uint64
	warnings atomic.Uint64

	mu         sync.Mutex
	logged     int       // reports logged so far
	lastLog    time.Time // when the last one was logged
	suppressed int       // reports left out of the log since then

	fault    atomic.Pointer[error]
	fatal    atomic.Bool
	detached atomic.Bool
}

// The rate limit of the Reporter's log.
const (
	LogBurst = 5
	LogEvery = 10 * time.Second
)

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
	if r.detached.Load() {
		return
	}
	msg = strings.TrimRight(msg, "\n")
	title := "storage: background error"
	if level >= slog.LevelError {
		level = slog.LevelError
		r.errors.Add(1)
	} else {
		level, title = slog.LevelWarn, "storage: background warning"
		r.warnings.Add(1)
	}
	if n, ok := r.admit(); ok {
		attrs := []any{slog.String("backend", string(r.backend)), slog.String("err", msg)}
		if n > 0 {
			attrs = append(attrs, slog.Int("suppressed", n))
		}
		r.log.Log(context.Background(), level, title, attrs...)
	}
	if r.hook != nil {
		r.hook(&storage.BackgroundError{Backend: r.backend, Level: level, Msg: msg, Err: err})
	}
}

// Detach stops every later report: no log line, no count, no hook. An
// open that failed calls it, because the engine may have left goroutines
// behind (a flush it retries) whose reports belong to no store: they
// would print after the caller's own error, and on a hook the caller no
// longer expects calls.
func (r *Reporter) Detach() { r.detached.Store(true) }

// admit reports whether a report may be logged now and how many were left
// out of the log since the last one that was.
func (r *Reporter) admit() (suppressed int, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.logged >= LogBurst && now.Sub(r.lastLog) < LogEvery {
		r.suppressed++
		return 0, false
	}
	r.logged++
	r.lastLog = now
	suppressed, r.suppressed = r.suppressed, 0
	return suppressed, true
}

// Fail records err as the store's write fault unless one is recorded
// already; from then on Fault returns it.
func (r *Reporter) Fail(err error) {
	if err == nil {
		return
	}
	r.fault.CompareAndSwap(nil, &err)
}

// FailFatal is Fail for a fault after which the engine's own state is not
// to be trusted (it met a condition it would have exited on); Fatal then
// reports true.
func (r *Reporter) FailFatal(err error) {
	r.Fail(err)
	r.fatal.Store(true)
}

// Fatal reports whether FailFatal was called.
func (r *Reporter) Fatal() bool { return r.fatal.Load() }

// Fault returns the store's write fault, wrapping storage.ErrFault and the
// cause, or nil.
func (r *Reporter) Fault() error {
	p := r.fault.Load()
	if p == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", storage.ErrFault, *p)
}

// IsWriteFault reports whether err is a file-system condition that a retry
// in the same process will not cure: a full disk or quota, an I/O error, a
// read-only file system.
func IsWriteFault(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) ||
		errors.Is(err, syscall.EIO) || errors.Is(err, syscall.EROFS)
}

// Within runs fn (what names it in the error) and waits for it while the
// store has no write fault, or for at most bound once it has one: an
// engine may wait forever on a flush that a full disk keeps failing (in
// Close, or in Open after replaying its log). A call abandoned after the
// bound returns an error wrapping the fault; fn's goroutine is left to
// finish or to the process's exit, and the files hold what was committed.
func (r *Reporter) Within(what string, bound time.Duration, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var faultSince time.Time
	for {
		select {
		case err := <-done:
			return err
		case now := <-tick.C:
			if r.Fault() == nil {
				continue
			}
			if faultSince.IsZero() {
				faultSince = now
			}
			if now.Sub(faultSince) >= bound {
				return fmt.Errorf("storage: %s abandoned %v after a write fault: %w", what, bound, r.Fault())
			}
		}
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
