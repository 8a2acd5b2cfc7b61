// Package progress draws a one-line progress bar for long work (loading a
// dump, generating a graph) on a terminal.
//
// A Bar writes to an io.Writer only when that writer is a terminal
// (golang.org/x/term) or when Options.Force is set; otherwise it only counts,
// so callers can use it unconditionally. Redraws are rate-limited
// (Options.Interval) and show count/total, percentage, rate and ETA. Add and
// Set are safe for concurrent use and cheap: an atomic add, a clock read and,
// at most once per interval, a redraw.
//
// Caveat: the bar assumes it owns the terminal line; other output written
// between redraws will be overdrawn. Call Finish before printing anything
// else.
package progress
