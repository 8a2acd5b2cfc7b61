//go:build !unix

package nn

import "time"

// processCPU is not available here; benchmarks then omit the CPU metric.
func processCPU() time.Duration { return 0 }
