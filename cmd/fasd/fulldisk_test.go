//go:build crashtest

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fasd-db/fasd/cmd/fasd/command"
)

// mountTmpfs mounts a tmpfs of size bytes at a new directory and
// unmounts it at the end of the test; it skips the test where mounting is
// not allowed (it needs root, or CAP_SYS_ADMIN).
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("a real full disk needs a tmpfs mount: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk writes a file in dir until the file system has at most left
// bytes free, and returns its path.
func fillDisk(t *testing.T, dir string, left int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	path := filepath.Join(dir, "fill")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for n := free - left; n > 0; n -= int64(len(buf)) {
		if _, err := f.Write(buf[:min(int64(len(buf)), n)]); err != nil {
			break // full
		}
	}
	if err := f.Sync(); err != nil && left > 0 {
		t.Fatal(err)
	}
	return path
}

// TestFullDisk reproduces D11 and D12 of issue 23 on a real full file
// system (a tmpfs) for both engines: fasd update --refresh on a full disk
// ends by itself with exit 1 and a one-line error (no panic), fasd check
// there answers within 5 s with bounded output, and once space is freed
// the store checks, the update completes and every prediction is the one
// of a run that never saw the full disk. With some space left the update
// may succeed or fail, never otherwise.
func TestFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two stores and mounts file systems")
	}
	r := newRunner(t)
	work := t.TempDir()
	dump := filepath.Join(work, "dump")
	r.must(t, "gen", "--out", dump, "--nodes", "400", "--features", "6", "--seed", "3")
	for _, backend := range []string{"pebble", "badger"} {
		t.Run(backend, func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "db")
			r.must(t, "load", "--db", base, "--backend", backend, "--dataset", "synth", "--dir", dump)
			r.must(t, append([]string{"train", "--db", base}, tinyTrain...)...)
			r.must(t, "materialize", "--db", base)
			var edges strings.Builder
			all := predictAll(t, r, base)
			for i := range 150 {
				fmt.Fprintf(&edges, "%d %d\n", all[(i*7)%len(all)].ID, all[(i*13+5)%len(all)].ID)
			}
			ef := filepath.Join(t.TempDir(), "edges.txt")
			if err := os.WriteFile(ef, []byte(edges.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			ref := copyStore(t, base)
			r.must(t, "update", "--db", ref, "--add-edges", ef, "--refresh")
			clean := byID(predictAll(t, r, ref))

			for _, left := range []int64{0, 256 << 10} {
				t.Run(fmt.Sprintf("free=%d", left), func(t *testing.T) {
					mnt := mountTmpfs(t, 128<<20)
					db := filepath.Join(mnt, "db")
					if err := os.CopyFS(db, os.DirFS(base)); err != nil {
						t.Fatal(err)
					}
					fill := fillDisk(t, mnt, left)
					upd := []string{"update", "--db", db, "--add-edges", ef, "--refresh"}
					res := r.start(t, nil, time.Minute, upd...)
					var tl faultTally
					judgeRun(t, "update --refresh on a full disk", res, &tl)
					if left == 0 && res.code != command.ExitFailure {
						t.Errorf("update --refresh on a full disk: exit %d, want 1\n%s", res.code, res.errOut)
					}
					// D12: check on the full disk.
					chk := r.start(t, nil, time.Minute, "check", "--db", db)
					if chk.code != 0 || chk.dur > 5*time.Second || len(chk.out)+len(chk.errOut) > 4096 {
						t.Errorf("check on a full disk: exit %d in %v, %d bytes of output\n%.1000s", chk.code, chk.dur, len(chk.out)+len(chk.errOut), chk.errOut)
					}
					t.Logf("%s, %d bytes free: update --refresh exit %d in %v (%d lines on stderr); check exit %d in %v",
						backend, left, res.code, res.dur.Round(time.Millisecond), strings.Count(res.errOut, "\n"), chk.code, chk.dur.Round(time.Millisecond))
					if err := os.Remove(fill); err != nil {
						t.Fatal(err)
					}
					r.must(t, "check", "--db", db)
					if res.code != 0 {
						r.must(t, "refresh", "--db", db) // views of the old or the new graph
						if st := r.must(t, "stats", "--db", db, "--json"); strings.Contains(st.out, `"version": 1,`) {
							r.must(t, upd...)
						}
					}
					var final tally
					f := &crashFixture{r: r}
					f.checkFinal(t, db, clean, &final, "after the full disk")
				})
			}
		})
	}
}

// Ensure that fillDisk fills: a write of a byte more fails with ENOSPC.
func TestFillDisk(t *testing.T) {
	mnt := mountTmpfs(t, 1<<20)
	fillDisk(t, mnt, 0)
	f, err := os.Create(filepath.Join(mnt, "more"))
	if err == nil {
		_, err = io.WriteString(f, strings.Repeat("x", 8192))
		f.Close()
	}
	if err == nil {
		t.Fatal("writing to a filled file system succeeded")
	}
}
