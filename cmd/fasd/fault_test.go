//go:build crashtest

package main

// The I/O-fault injection suite of the fasd command. It runs load,
// update --refresh, train, materialize and refresh on the crash suite's
// small generated graph with the FASD_TEST_FAULT_AT hook of package
// command: the store's N-th file operation (create, write, sync or rename,
// through Pebble's file-system seam) fails with ENOSPC or EIO, and so does
// every later one, as on a disk that filled up. For each run it checks:
//
//   - the process ends by itself within a bound (a hang is a failure) and
//     without a panic, with exit 0 or 1 and, on 1, a one-line "fasd: …"
//     error as the last line of stderr (the store's rate-limited log lines
//     may come before it);
//   - once the fault is lifted (the next command runs without the hook),
//     the store opens and fasd check passes (after a failed load: or the
//     store says it holds no complete graph), every prediction read is the
//     clean run's or flagged stale (wrong reads), and a run that exited 0
//     left its whole result (lost commits);
//   - the operation resumed without a fault ends with the clean run's
//     store and predictions.
//
// Pebble v2 itself ends the process, on purpose, at some fault points: a
// failed sync of the store's directory while it moves its MANIFEST marker
// (on a flush's goroutine), and a failed close of the full log or
// creation of the next one (DB.rotateWAL). Those runs are counted apart
// ("pebble" in the figures, see pebbleAbort) and checked after like every
// other; any other panic fails the suite.
//
// First each operation runs with the hook counting only (N = 0) to learn
// its total K of file operations. The short version (go test) injects at
// a few N spread over 1…K, ENOSPC and EIO alternately; with
// FASD_FAULT_ALL=1 (make crash sets it) it injects at every N from 1 to
// K, with both errors.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fasd-db/fasd/cmd/fasd/command"
)

// faultTally counts what one operation's fault points showed.
type faultTally struct {
	total                  int // file operations of a clean run (K)
	points, runs, failed   int // fault points, runs, runs that exited 1
	panics, hangs, badExit int
	// pebbleAborts counts runs that Pebble itself ended on an injected
	// fault, by design, on a goroutine fasd cannot recover on (see
	// pebbleAbort). The store is checked after such a run like after any
	// other.
	pebbleAborts                  int
	reads, wrong, lost, resumedOK int
}

var faultCountRE = regexp.MustCompile(`fasd: fault hook: any (\d+)`)

// engineLogBurst is the burst of the store's rate-limited log
// (storage/internal/engine.LogBurst).
const engineLogBurst = 5

// faultBound bounds every faulty run: far above any clean run of the
// suite's graph, so that only a hang reaches it.
const faultBound = 90 * time.Second

// faultOps counts the file operations of fasd args on a copy of base.
func (f *crashFixture) faultOps(t *testing.T, base string, args func(db string) []string) int {
	t.Helper()
	db := filepath.Join(t.TempDir(), "db")
	if base != "" {
		db = copyStore(t, base)
	}
	res := f.r.start(t, []string{command.FaultAtEnv + "=any:0:ENOSPC"}, faultBound, args(db)...)
	m := faultCountRE.FindStringSubmatch(res.errOut)
	if res.code != 0 || m == nil {
		t.Fatalf("counting run of %v: exit %d\n%s", args(db), res.code, res.errOut)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// faultPoints returns the N at which to inject for an operation of total
// file operations, each with its error.
func faultPoints(total int, all bool) []string {
	var pts []string
	if all {
		for n := 1; n <= total; n++ {
			pts = append(pts, fmt.Sprintf("%d:ENOSPC", n), fmt.Sprintf("%d:EIO", n))
		}
		return pts
	}
	seen := map[int]bool{}
	for i, n := range []int{1, total / 3, 2 * total / 3, total} {
		if n < 1 || seen[n] {
			continue
		}
		seen[n] = true
		errno := "ENOSPC"
		if i%2 == 1 {
			errno = "EIO"
		}
		pts = append(pts, fmt.Sprintf("%d:%s", n, errno))
	}
	return pts
}

// pebbleAbort reports a crash that Pebble v2 raises on purpose when a
// file operation fails where it will not go on: a failed sync of the
// directory when it moves its MANIFEST or format marker
// (atomicfs.Marker.Move panics, on a flush's or compaction's goroutine),
// or a failed close of the full log or creation of the next one
// (DB.rotateWAL panics with DB.mu released, and its caller's deferred
// Unlock then raises a fatal runtime error no recover can catch, and the
// report shows the error only as a pointer). It holds when the first
// frame of the crashing goroutine, past the runtime's, is DB.rotateWAL,
// or is Pebble's and the panic is an injected fault. A third: an open
// that fails on the fault while Pebble retries the flush of the replayed
// log in the background tears its file cache down under that flush, which
// then crashes in the closed cache (fileCacheKey.Shard's division by zero,
// genericcache's bookkeeping) on Pebble's own goroutine, after the open
// returned its error and possibly before any report of the fault was
// printed: a crash at a Pebble site on a goroutine Pebble started.
func pebbleAbort(errOut string) bool {
	site := pebbleAbortSite(errOut)
	pebbleSite := strings.HasPrefix(site, "github.com/cockroachdb/pebble/")
	return strings.HasPrefix(site, "github.com/cockroachdb/pebble/v2.(*DB).rotateWAL(") ||
		pebbleSite && (strings.Contains(errOut, "(injected fault)") || pebbleGoroutine(errOut))
}

// pebbleGoroutine reports whether the crashing goroutine of a Go crash
// report was started by Pebble (a flush or compaction of its own).
func pebbleGoroutine(errOut string) bool {
	i := strings.Index(errOut, "\ngoroutine ")
	if i < 0 {
		return false
	}
	block := errOut[i+1:]
	if j := strings.Index(block, "\n\n"); j >= 0 {
		block = block[:j]
	}
	return strings.Contains(block, "\ncreated by github.com/cockroachdb/pebble/")
}

// pebbleAbortSite returns the first frame past the runtime's of the
// crashing goroutine in a Go crash report, or "".
func pebbleAbortSite(errOut string) string {
	i := strings.Index(errOut, "\ngoroutine ")
	if i < 0 {
		return ""
	}
	for _, line := range strings.Split(errOut[i+1:], "\n")[1:] {
		if line == "" || strings.HasPrefix(line, "\t") || strings.HasPrefix(line, " ") ||
			strings.HasPrefix(line, "panic(") || strings.HasPrefix(line, "runtime.") ||
			strings.HasPrefix(line, "internal/sync.") || strings.HasPrefix(line, "sync.") {
			continue
		}
		return line
	}
	return ""
}

// judgeRun checks how a faulty run ended: no hang, no panic, exit 0 or 1,
// and on 1 a one-line error last.
func judgeRun(t *testing.T, what string, res result, tl *faultTally) {
	t.Helper()
	tl.runs++
	switch {
	case res.killed:
		tl.hangs++
		t.Errorf("%s: still running after %v (killed)\n%.2000s", what, faultBound, res.errOut)
		return
	case pebbleAbort(res.errOut):
		// A known limit of Pebble v2 (see pebbleAborts).
		tl.pebbleAborts++
		t.Logf("%s: Pebble aborted the process (%s)", what, pebbleAbortSite(res.errOut))
		return
	case strings.Contains(res.errOut, "panic:") || strings.Contains(res.errOut, "fatal error:") || strings.Contains(res.errOut, "goroutine "):
		tl.panics++
		t.Errorf("%s: panic, exit %d\n%.3000s", what, res.code, res.errOut)
		return
	case res.code != 0 && res.code != command.ExitFailure:
		tl.badExit++
		t.Errorf("%s: exit %d, want 0 or 1\n%.2000s", what, res.code, res.errOut)
		return
	}
	if res.code == 0 {
		return
	}
	tl.failed++
	lines := strings.Split(strings.TrimRight(res.errOut, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "fasd: ") || strings.Count(res.errOut, "fasd: ") != 1 {
		tl.badExit++
		t.Errorf("%s: exit 1 without a one-line error last:\n%.2000s", what, res.errOut)
	}
	if n := strings.Count(res.errOut, "storage: background"); n > 2*engineLogBurst {
		tl.badExit++
		t.Errorf("%s: %d lines of background errors on stderr (the log is rate-limited)", what, n)
	}
}

// faultReads reads every stored prediction of db through predict --all
// and counts the wrong ones: a prediction not flagged stale that is
// neither the clean run's nor, when alt is given, the one before the
// operation (the graph version tells which).
func (f *crashFixture) faultReads(t *testing.T, db string, clean, alt map[int64]prediction, tl *faultTally, what string) {
	t.Helper()
	all := f.r.start(t, nil, faultBound, "predict", "--db", db, "--all", "--json")
	if all.code == command.ExitStoreState {
		return // no graph or no models yet: an error, not a wrong answer
	}
	if all.code != 0 {
		tl.wrong++
		t.Errorf("%s: predict --all: exit %d: %s", what, all.code, all.errOut)
		return
	}
	for _, p := range decodeAll(t, all.out) {
		tl.reads++
		if p.Stale {
			continue
		}
		if c, ok := clean[p.ID]; ok && p.same(c) {
			continue
		}
		if c, ok := alt[p.ID]; ok && p.same(c) {
			continue
		}
		tl.wrong++
		t.Errorf("%s: node %d: %+v, clean %+v", what, p.ID, p, clean[p.ID])
	}
}

// TestFaultInjection is the suite (see the top of the file). It logs one
// line of figures per operation.
func TestFaultInjection(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault suite runs the command about 100 times")
	}
	f := buildCrashFixture(t)
	all := os.Getenv("FASD_FAULT_ALL") == "1"
	oldKeys, newKeys := graphKeys(t, f.views), graphKeys(t, f.updated)
	report := map[string]*faultTally{}
	var order []string

	// run injects at every fault point of op, judges the run, then lifts
	// the fault and calls after (the checks and the resume).
	run := func(op, base string, args func(db string) []string, after func(t *testing.T, db string, res result, tl *faultTally, what string)) {
		tl := &faultTally{}
		report[op], order = tl, append(order, op)
		t.Run(op, func(t *testing.T) {
			tl.total = f.faultOps(t, base, args)
			for _, pt := range faultPoints(tl.total, all) {
				tl.points++
				db := filepath.Join(t.TempDir(), "db")
				if base != "" {
					db = copyStore(t, base)
				}
				what := fmt.Sprintf("%s with fault any:%s", op, pt)
				res := f.r.start(t, []string{command.FaultAtEnv + "=any:" + pt}, faultBound, args(db)...)
				judgeRun(t, what, res, tl)
				if res.killed {
					continue
				}
				after(t, db, res, tl, what)
			}
		})
	}
	resumeOK := func(tl *faultTally) { tl.resumedOK++ }

	// load: the store holds the complete graph (exit 0 must mean so) or
	// says it holds none; the resume (load --replace) gives the clean one.
	loadArgs := func(db string) []string { return append([]string{"load", "--db", db}, f.loadArgs...) }
	run("load", "", loadArgs, func(t *testing.T, db string, res result, tl *faultTally, what string) {
		st := f.r.start(t, nil, faultBound, "stats", "--db", db)
		tl.reads++
		switch {
		case st.code == 0:
			f.r.must(t, "check", "--db", db)
			if got := graphKeys(t, db); got != f.cleanGraph {
				tl.wrong++
				t.Errorf("%s: the store says it holds a graph, not the clean load's: %s", what, firstDiff(got, f.cleanGraph))
			}
		case st.code != command.ExitStoreState:
			tl.wrong++
			t.Errorf("%s: stats after the fault: exit %d: %s", what, st.code, st.errOut)
		case res.code == 0:
			tl.lost++
			t.Errorf("%s: load exited 0, stats then says: %s", what, st.errOut)
		}
		if st.code != 0 {
			if _, err := os.Stat(filepath.Join(db, "FASD-STORE")); err != nil {
				// The fault came before the store existed: start afresh.
				if err := os.RemoveAll(db); err != nil {
					t.Fatal(err)
				}
				f.r.must(t, loadArgs(db)...)
			} else {
				f.r.must(t, append(loadArgs(db), "--replace")...)
			}
		}
		f.r.must(t, "check", "--db", db)
		if got := graphKeys(t, db); got != f.cleanGraph {
			tl.wrong++
			t.Errorf("%s: the resumed load differs from the clean one: %s", what, firstDiff(got, f.cleanGraph))
			return
		}
		resumeOK(tl)
	})

	// update --refresh: the graph is the old one or the new one, never a
	// mix, and the new one if the command exited 0; reads are the clean
	// refresh's, the views before the update, or stale.
	updArgs := func(db string) []string { return []string{"update", "--db", db, "--add-edges", f.edges, "--refresh"} }
	run("update --refresh", f.views, updArgs, func(t *testing.T, db string, res result, tl *faultTally, what string) {
		f.r.must(t, "check", "--db", db)
		got := graphKeys(t, db)
		switch {
		case got != oldKeys && got != newKeys:
			tl.wrong++
			t.Errorf("%s: the graph is neither the old nor the updated one: %s", what, firstDiff(got, newKeys))
		case res.code == 0 && got != newKeys:
			tl.lost++
			t.Errorf("%s: update exited 0 but the graph is the old one", what)
		}
		f.faultReads(t, db, f.cleanRef, f.cleanMat, tl, what)
		if got == oldKeys {
			f.r.must(t, updArgs(db)...)
		} else {
			f.r.must(t, "refresh", "--db", db)
		}
		var final tally
		f.checkFinal(t, db, f.cleanRef, &final, what)
		tl.reads += final.reads
		tl.wrong += final.wrong
		if final.wrong == 0 {
			resumeOK(tl)
		}
	})

	// train: the store has no models or the trained ones; the resume
	// trains again; the materialized views must be the clean run's.
	trainArgs := func(db string) []string { return append([]string{"train", "--db", db}, tinyTrain...) }
	run("train", f.graph, trainArgs, func(t *testing.T, db string, res result, tl *faultTally, what string) {
		f.r.must(t, "check", "--db", db)
		p := f.r.start(t, nil, faultBound, "predict", "--db", db, "--all", "--json")
		tl.reads++
		if res.code == 0 && p.code != 0 {
			tl.lost++
			t.Errorf("%s: train exited 0, predict then: exit %d: %s", what, p.code, p.errOut)
		}
		if p.code != 0 {
			f.r.must(t, trainArgs(db)...)
		}
		f.r.must(t, "materialize", "--db", db)
		var final tally
		f.checkFinal(t, db, f.cleanMat, &final, what)
		tl.reads += final.reads
		tl.wrong += final.wrong
		if final.wrong == 0 {
			resumeOK(tl)
		}
	})

	// materialize and refresh: committed chunks stay (reads are the clean
	// run's or stale), exit 0 means every view is there; the resume
	// completes the views.
	engineOp := func(op, base string, clean map[int64]prediction) {
		args := func(db string) []string { return []string{op, "--db", db} }
		run(op, base, args, func(t *testing.T, db string, res result, tl *faultTally, what string) {
			f.r.must(t, "check", "--db", db)
			f.faultReads(t, db, clean, nil, tl, what)
			if res.code == 0 {
				var lost tally
				f.checkFinal(t, db, clean, &lost, what+" (exited 0)")
				tl.lost += lost.wrong
			}
			f.r.must(t, op, "--db", db)
			var final tally
			f.checkFinal(t, db, clean, &final, what)
			tl.reads += final.reads
			tl.wrong += final.wrong
			if final.wrong == 0 {
				resumeOK(tl)
			}
		})
	}
	engineOp("materialize", f.trained, f.cleanMat)
	engineOp("refresh", f.updated, f.cleanRef)

	var sum strings.Builder
	fmt.Fprintf(&sum, "%-17s %6s %6s %5s %6s %6s %6s %5s %8s %6s %5s %5s %7s\n",
		"operation", "fileops", "points", "runs", "exit1", "panics", "pebble", "hangs", "bad-exit", "reads", "wrong", "lost", "resumed")
	var tot faultTally
	for _, op := range order {
		tl := report[op]
		fmt.Fprintf(&sum, "%-17s %6d %6d %5d %6d %6d %6d %5d %8d %6d %5d %5d %7d\n",
			op, tl.total, tl.points, tl.runs, tl.failed, tl.panics, tl.pebbleAborts, tl.hangs, tl.badExit, tl.reads, tl.wrong, tl.lost, tl.resumedOK)
		tot.points += tl.points
		tot.runs += tl.runs
	}
	t.Logf("I/O-fault injection: file operations of a clean run, fault points (N × error), runs, runs that exited 1, panics, hangs, wrong exits, predictions read, wrong reads, lost commits, resumes that reached the clean result:\n%s", sum.String())
	if all {
		fmt.Print(sum.String())
	}
}

// Ensure that pebbleAbort tells Pebble's deliberate crashes on an injected
// fault from any other crash.
func TestPebbleAbort(t *testing.T) {
	marker := "panic: sync (injected fault) /tmp/db: no space left on device\n\ngoroutine 19 [running]:\n" +
		"github.com/cockroachdb/pebble/v2/vfs/atomicfs.(*Marker).Move(0x1, {0x2, 0xf})\n\t/root/go/pkg/mod/x.go:231 +0x1\n" +
		"github.com/cockroachdb/pebble/v2.(*DB).flush1(0x1)\n"
	rotate := "panic: (*fs.PathError) 0x25313e5d8090\n\tfatal error: sync: unlock of unlocked mutex\n\ngoroutine 1 [running]:\n" +
		"internal/sync.fatal({0x14d6ee9?, 0x25313e2c84c8?})\n\t/usr/x.go:1\ninternal/sync.(*Mutex).unlockSlow(0x1, 0xffffffff)\n" +
		"sync.(*Mutex).Unlock(...)\npanic({0x1334d80?, 0x25313e5d8090?})\ngithub.com/cockroachdb/pebble/v2.(*DB).rotateWAL(0x1)\n"
	ours := "panic: boom (injected fault)\n\ngoroutine 1 [running]:\ngithub.com/fasd-db/fasd/query.(*Engine).Refresh(0x1)\n" +
		"github.com/cockroachdb/pebble/v2.(*DB).Apply(0x1)\n"
	real := strings.Replace(marker, "(injected fault) ", "", 1)
	closedCache := "panic: runtime error: integer divide by zero\n\ngoroutine 38 [running]:\n" +
		"github.com/cockroachdb/pebble/v2.fileCacheKey.Shard({0x1, 0x0, 0x0}, 0x1)\n\t/root/go/pkg/mod/x.go:517 +0x25\n" +
		"github.com/cockroachdb/pebble/v2.(*DB).compact1(0x1, 0x3, 0x1)\n\t/root/go/pkg/mod/x.go:2691 +0x1b2\n" +
		"created by github.com/cockroachdb/pebble/v2.(*DB).maybeScheduleCompaction in goroutine 1\n\t/root/go/pkg/mod/x.go:2100 +0x1\n"
	ourGoroutine := strings.Replace(closedCache, "created by github.com/cockroachdb/pebble/v2.(*DB).maybeScheduleCompaction", "created by github.com/fasd-db/fasd/query.(*Engine).Materialize", 1)
	for _, c := range []struct {
		name, errOut string
		want         bool
	}{{"marker", marker, true}, {"rotateWAL", rotate, true}, {"fasd's own panic", ours, false}, {"no injected fault", real, false}, {"no crash", "fasd: refresh: disk full\n", false},
		{"closed file cache on Pebble's goroutine", closedCache, true}, {"Pebble site on fasd's goroutine", ourGoroutine, false}} {
		if got := pebbleAbort(c.errOut); got != c.want {
			t.Errorf("%s: %v, want %v (site %q)", c.name, got, c.want, pebbleAbortSite(c.errOut))
		}
	}
}
