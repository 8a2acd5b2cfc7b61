package command

import (
	"io"
	"runtime/debug"
	"testing"
)

// Ensure that --max-memory becomes the Go runtime's soft memory limit for
// the command and is restored after it, that no --max-memory changes
// nothing and that GOMEMLIMIT wins.
func TestApplyMaxMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	for _, c := range []struct {
		name, env string
		max       ByteSize
		want      int64
	}{
		{"none", "", 0, before},
		{"1GiB", "", 1 << 30, 1<<30 - 1<<26},
		{"GOMEMLIMIT wins", "2GiB", 1 << 30, before},
	} {
		t.Setenv("GOMEMLIMIT", c.env)
		o := &ConfigOptions{MaxMemory: c.max}
		restore := o.applyMaxMemory(io.Discard)
		if got := debug.SetMemoryLimit(-1); got != c.want {
			t.Errorf("%s: limit %d during the command, want %d", c.name, got, c.want)
		}
		restore()
		if got := debug.SetMemoryLimit(-1); got != before {
			t.Errorf("%s: limit %d after the command, want %d again", c.name, got, before)
		}
	}
}
