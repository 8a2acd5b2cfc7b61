//go:build unix

package loadgen

import (
	"syscall"
	"time"
)

// ProcessCPU returns the user plus system CPU time this process has used,
// or 0 where the platform does not report it.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
