// Package progress draws a one-line progress bar for long work (loading a
// dump, generating a graph, materializing views) on a terminal, and writes
// progress lines to a log.
//
// A Bar draws in place when its io.Writer is a terminal (golang.org/x/term)
// or when Options.Force is set. When the writer is a file or pipe that is not
// a terminal (output redirected to a log, a CI job), it writes a plain line
// instead once per Options.LogInterval (30 s by default) and, if the work
// lasted that long, a last line at Finish, so that long work shows progress
// in logs too. On any other writer it only counts, so callers can use it
// unconditionally. Redraws are rate-limited (Options.Interval) and show
// count/total, percentage, rate and ETA. Add and Set are safe for concurrent
// use and cheap: an atomic add, a clock read and, at most once per interval,
// a redraw.
//
// Caveat: the bar assumes it owns the terminal line; other output written
// between redraws will be overdrawn. Call Finish before printing anything
// else.
package progress
