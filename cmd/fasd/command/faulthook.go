//go:build crashtest

package command

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/fasd-db/fasd/storage"
)

// FaultAtEnv names the environment variable of the I/O-fault injection
// test hook: with FASD_TEST_FAULT_AT=OP:N:ERRNO set, every store the
// command opens (through Pebble's file-system seam, see
// storage.Options.InjectFault) fails its N-th file operation of kind OP
// with ERRNO, and every later one of that kind too, as a disk that fills
// up stays full. OP is create, write, sync, rename or any (all four);
// ERRNO is ENOSPC or EIO. N = 0 injects nothing and only counts: main
// then prints "fasd: fault hook: OP K" with the count K to stderr before
// it exits. The I/O-fault tests of cmd/fasd use it; it is inert when
// unset. A command run with it on a Badger store fails at Open. It exists
// only in a build with the crashtest tag, like the kill hook: without the
// tag storageOptions and FaultHookReport do nothing (faulthook_off.go).
const FaultAtEnv = "FASD_TEST_FAULT_AT"

var faultAt struct {
	once  sync.Once
	on    bool
	op    string
	n     int64
	errno syscall.Errno
	seen  atomic.Int64
}

func loadFaultHook() {
	faultAt.once.Do(func() {
		spec := os.Getenv(FaultAtEnv)
		if spec == "" {
			return
		}
		parts := strings.Split(spec, ":")
		bad := func() {
			fmt.Fprintf(os.Stderr, "fasd: ignoring %s=%q (want OP:N:ERRNO, OP create|write|sync|rename|any, N ≥ 0, ERRNO ENOSPC|EIO)\n", FaultAtEnv, spec)
		}
		if len(parts) != 3 {
			bad()
			return
		}
		n, err := strconv.ParseInt(parts[1], 10, 64)
		if err != nil || n < 0 {
			bad()
			return
		}
		switch parts[0] {
		case "any", string(storage.OpCreate), string(storage.OpWrite), string(storage.OpSync), string(storage.OpRename):
		default:
			bad()
			return
		}
		switch parts[2] {
		case "ENOSPC":
			faultAt.errno = syscall.ENOSPC
		case "EIO":
			faultAt.errno = syscall.EIO
		default:
			bad()
			return
		}
		faultAt.on, faultAt.op, faultAt.n = true, parts[0], n
	})
}

// injectFault is storage.Options.InjectFault under the hook.
func injectFault(op storage.FileOp, path string) error {
	if faultAt.op != "any" && string(op) != faultAt.op {
		return nil
	}
	k := faultAt.seen.Add(1)
	if faultAt.n == 0 || k < faultAt.n {
		return nil
	}
	return &os.PathError{Op: string(op) + " (injected fault)", Path: path, Err: faultAt.errno}
}

// storageOptions returns o (nil meaning the defaults) with the fault
// hook's injector when FaultAtEnv is set.
func storageOptions(ctx context.Context, o *storage.Options) *storage.Options {
	o = withCacheOf(ctx, o)
	loadFaultHook()
	if !faultAt.on {
		return o
	}
	var c storage.Options
	if o != nil {
		c = *o
	}
	c.InjectFault = injectFault
	return &c
}

// FaultHookReport writes the fault hook's count to w when FaultAtEnv asks
// for counting only (N = 0); main calls it before it exits.
func FaultHookReport(w io.Writer) {
	loadFaultHook()
	if faultAt.on && faultAt.n == 0 {
		fmt.Fprintf(w, "fasd: fault hook: %s %d\n", faultAt.op, faultAt.seen.Load())
	}
}
