package command

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/fasd-db/fasd/storage"
)

// storeWriteBuffers is the memory the store's write buffers may take
// besides its block cache: Pebble's two 64 MiB memtables.
const storeWriteBuffers ByteSize = 128 << 20

// memoryLimit is the Go runtime's soft memory limit set for --max-memory
// budget when the store's block cache holds up to cache bytes: the budget
// less the cache and the store's write buffers (storeWriteBuffers), which
// Pebble allocates outside the Go heap where the runtime's limit does not
// see them, and less a sixteenth for the program's code and read-only
// data; never below a quarter of the budget.
func memoryLimit(budget, cache ByteSize) int64 {
	b := int64(budget)
	return max(b-b/16-int64(cache)-int64(storeWriteBuffers), b/4)
}

// applyMaxMemory makes --max-memory a soft memory limit of the Go runtime
// (runtime/debug.SetMemoryLimit, see memoryLimit, with the block cache of
// --cache carried by ctx, else the store's default) for the rest of the
// command, so that the collector keeps the heap under it instead of letting
// it grow to twice the live data between collections; the memory estimate
// then counts that limit (pipeline.EstimateRun). GOMEMLIMIT, when set,
// wins. It returns a func restoring the previous limit. Without
// --max-memory it changes nothing.
func (o *ConfigOptions) applyMaxMemory(ctx context.Context, errOut io.Writer) (restore func()) {
	if o.MaxMemory <= 0 {
		return func() {}
	}
	if v := os.Getenv("GOMEMLIMIT"); v != "" {
		fmt.Fprintf(errOut, "memory limit: GOMEMLIMIT=%s (environment) instead of --max-memory %s\n", v, o.MaxMemory)
		return func() {}
	}
	cache := ByteSize(storage.DefaultCacheBytes)
	if c, ok := ctx.Value(cacheKey{}).(ByteSize); ok && c > 0 {
		cache = c
	}
	lim := memoryLimit(o.MaxMemory, cache)
	prev := debug.SetMemoryLimit(lim)
	fmt.Fprintf(errOut, "memory limit: %s soft limit for the Go heap (--max-memory %s less the store's %s block cache and %s write buffers, held outside it)\n",
		ByteSize(lim), o.MaxMemory, cache, storeWriteBuffers)
	return func() { debug.SetMemoryLimit(prev) }
}
