//go:build linux

package pipeline

import (
	"runtime"
	"syscall"
	"testing"
)

// TestOutsideGoBytes: memory mapped outside the Go runtime (as cgo
// allocations are) counts, a Go allocation of the same size does not.
func TestOutsideGoBytes(t *testing.T) {
	const size = 64 << 20
	runtime.GC()
	before := outsideGoBytes()

	buf := make([]byte, size)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	if d := outsideGoBytes() - before; d > size/4 {
		t.Errorf("a %d MiB Go allocation moved the outside-Go bytes by %d MiB", size>>20, d>>20)
	}
	runtime.KeepAlive(buf)

	m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("mmap:", err)
	}
	defer syscall.Munmap(m)
	base := outsideGoBytes()
	for i := 0; i < len(m); i += 4096 {
		m[i] = 1
	}
	if d := outsideGoBytes() - base; d < size*3/4 {
		t.Errorf("%d MiB mapped outside Go and touched moved the outside-Go bytes by %d MiB only", size>>20, d>>20)
	}
}
