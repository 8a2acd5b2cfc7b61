//go:build !unix

package loadgen

import "time"

// ProcessCPU returns the user plus system CPU time this process has used,
// or 0 where the platform does not report it.
func ProcessCPU() time.Duration { return 0 }
