//go:build crashtest

package command

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// KillAtEnv names the environment variable of the crash-injection test
// hook: with FASD_TEST_KILL_AT=STAGE:N set, the process kills itself
// (SIGKILL on Unix: no deferred work, no flush, no close) at the N-th
// progress report of STAGE, which for the engine's stages ("subgraphs",
// "nodes") comes right after the N-th committed chunk. Stages are those
// of the progress bars: load's ("scan edges", "write", …), train's
// pipeline stages (reported at their end), materialize's and refresh's.
// The crash tests of cmd/fasd use it; it is inert when unset. It exists
// only in a build with the crashtest tag (go build -tags crashtest; make
// crash builds such a binary): without the tag crashPoint is a no-op
// (killhook_off.go) and no binary reads the variable.
const KillAtEnv = "FASD_TEST_KILL_AT"

var killAt struct {
	once  sync.Once
	stage string
	n     int
	mu    sync.Mutex
	seen  int
}

// crashPoint is called at every progress report of stage; see KillAtEnv.
func crashPoint(stage string) {
	killAt.once.Do(func() {
		spec := os.Getenv(KillAtEnv)
		if spec == "" {
			return
		}
		i := strings.LastIndexByte(spec, ':')
		n, err := strconv.Atoi(spec[i+1:])
		if i < 0 || err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "fasd: ignoring %s=%q (want STAGE:N, N ≥ 1)\n", KillAtEnv, spec)
			return
		}
		killAt.stage, killAt.n = spec[:i], n
	})
	if killAt.stage == "" || stage != killAt.stage {
		return
	}
	killAt.mu.Lock()
	killAt.seen++
	hit := killAt.seen == killAt.n
	killAt.mu.Unlock()
	if hit {
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			_ = p.Kill()
			time.Sleep(time.Minute) // the signal arrives first
		}
	}
}
