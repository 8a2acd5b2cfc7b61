//go:build unix

package loadgen

import (
	"syscall"
	"time"
)

// ProcessCPU returns the user plus system CPU time this process has used,
// or 0 where the platform does not report it.
func ProcessCPU() time.Duration {
	u, s := ProcessCPUSplit()
	return u + s
}

// ProcessCPUSplit returns the user and the system (kernel) CPU time this
// process has used, or zeros where the platform does not report them.
func ProcessCPUSplit() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}
