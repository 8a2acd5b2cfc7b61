// Request counts and durations of a route, read by /metrics.

package httpapi

import (
	"sync"
	"sync/atomic"
	"time"
)

// routeStats count the requests of one route without a lock: the common
// status codes have their own counters, others go to a locked map.
type routeStats struct {
	count atomic.Int64
	nanos atomic.Int64
	codes [len(trackedCodes)]atomic.Int64
	mu    sync.Mutex
	other map[int]int64
}

// trackedCodes are the status codes the API answers with.
var trackedCodes = [...]int{200, 400, 404, 405, 409, 413, 500, 503}

func (rs *routeStats) add(code int, d time.Duration) {
	rs.count.Add(1)
	rs.nanos.Add(int64(d))
	for i, c := range trackedCodes {
		if c == code {
			rs.codes[i].Add(1)
			return
		}
	}
	rs.mu.Lock()
	if rs.other == nil {
		rs.other = map[int]int64{}
	}
	rs.other[code]++
	rs.mu.Unlock()
}

// byCode returns the non-zero counts by status code.
func (rs *routeStats) byCode() map[int]int64 {
	m := map[int]int64{}
	for i, c := range trackedCodes {
		if n := rs.codes[i].Load(); n > 0 {
			m[c] = n
		}
	}
	rs.mu.Lock()
	for c, n := range rs.other {
		m[c] += n
	}
	rs.mu.Unlock()
	return m
}
