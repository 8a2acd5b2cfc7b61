//go:build !unix

package loadgen

import "time"

// ProcessCPU returns the user plus system CPU time this process has used,
// or 0 where the platform does not report it.
func ProcessCPU() time.Duration { return 0 }

// ProcessCPUSplit returns the user and the system (kernel) CPU time this
// process has used, or zeros where the platform does not report them.
func ProcessCPUSplit() (user, sys time.Duration) { return 0, 0 }
