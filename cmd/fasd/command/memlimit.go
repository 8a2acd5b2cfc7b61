package command

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// memoryLimit is the Go runtime's soft memory limit set for --max-memory
// max: all but a sixteenth of it, which is left for the resident memory the
// runtime does not manage (the program's code and read-only data).
func memoryLimit(max ByteSize) int64 { return int64(max) - int64(max)/16 }

// applyMaxMemory makes --max-memory a soft memory limit of the Go runtime
// (runtime/debug.SetMemoryLimit, see memoryLimit) for the rest of the
// command, so that the collector keeps the heap under it instead of letting
// it grow to twice the live data between collections; the memory estimate
// then counts that limit (pipeline.EstimateRun). GOMEMLIMIT, when set,
// wins. It returns a func restoring the previous limit. Without
// --max-memory it changes nothing.
func (o *ConfigOptions) applyMaxMemory(errOut io.Writer) (restore func()) {
	if o.MaxMemory <= 0 {
		return func() {}
	}
	if v := os.Getenv("GOMEMLIMIT"); v != "" {
		fmt.Fprintf(errOut, "memory limit: GOMEMLIMIT=%s (environment) instead of --max-memory %s\n", v, o.MaxMemory)
		return func() {}
	}
	lim := memoryLimit(o.MaxMemory)
	prev := debug.SetMemoryLimit(lim)
	fmt.Fprintf(errOut, "memory limit: %s soft limit for the Go heap (--max-memory %s)\n", ByteSize(lim), o.MaxMemory)
	return func() { debug.SetMemoryLimit(prev) }
}
