//go:build unix

package nn

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time of this process: benchmarks
// report it next to wall time because the shared benchmark machine is noisy
// (CPU time does not count the time spent waiting for a core).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
