package command

import (
	"context"
	"io"
	"runtime/debug"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// Ensure that --max-memory, less the store's block cache (--cache or the
// default) and write buffers and a sixteenth, becomes the Go runtime's soft
// memory limit for the command (a quarter of it at least) and is restored
// after it, that no --max-memory changes nothing and that GOMEMLIMIT wins.
func TestApplyMaxMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	for _, c := range []struct {
		name, env  string
		max, cache ByteSize
		want       int64
	}{
		{"none", "", 0, 0, before},
		{"1GiB, default cache", "", 1 << 30, 0, 1<<30 - 1<<26 - storage.DefaultCacheBytes - 128<<20},
		{"2GiB, --cache 64MiB", "", 2 << 30, 64 << 20, 2<<30 - 1<<27 - 64<<20 - 128<<20},
		{"512MiB: a quarter at least", "", 512 << 20, 0, 128 << 20},
		{"GOMEMLIMIT wins", "2GiB", 1 << 30, 0, before},
	} {
		t.Setenv("GOMEMLIMIT", c.env)
		o := &ConfigOptions{MaxMemory: c.max}
		ctx := context.Background()
		if c.cache > 0 {
			ctx = withCache(ctx, c.cache)
		}
		restore := o.applyMaxMemory(ctx, io.Discard)
		if got := debug.SetMemoryLimit(-1); got != c.want {
			t.Errorf("%s: limit %d during the command, want %d", c.name, got, c.want)
		}
		restore()
		if got := debug.SetMemoryLimit(-1); got != before {
			t.Errorf("%s: limit %d after the command, want %d again", c.name, got, before)
		}
	}
}
