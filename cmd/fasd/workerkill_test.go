//go:build crashtest

package main

// A distributed materialize on PostgreSQL whose worker process is killed
// (SIGKILL by PID) in the middle of a part: the coordinator computes the
// part itself once the dead worker's lease expires, and the views equal a
// single-process materialize's byte for byte. It reuses the crash suite's
// child processes (fasdRunner); skipped without FASD_TEST_POSTGRES.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/postgres/pgtest"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// Keys of distributed work (query/dist_stage.go, query/lease.go): a lease
// "V" "L" part:u32 (value: generation u64, deadline i64, owner) and a
// stage "V" "T" part:u32.
var leasePrefix = []byte{index.PrefixViews, 'L'}

func stageKey(part uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{index.PrefixViews, 'T'}, part)
}

// viewKeys renders every key of the views (prefix 'V') of s.
func viewKeys(t *testing.T, s storage.Reader) string {
	t.Helper()
	it, err := s.NewIter([]byte{index.PrefixViews}, []byte{index.PrefixViews + 1})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var b strings.Builder
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.Value()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%q=%x\n", it.Key(), v)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// heldPart returns a part whose lease owner is owner and that has no
// stage yet: the owner is computing it.
func heldPart(s storage.Store, owner string) (part uint32, ok bool, err error) {
	it, err := s.NewIter(leasePrefix, storage.PrefixEnd(leasePrefix))
	if err != nil {
		return 0, false, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.Value()
		if err != nil {
			return 0, false, err
		}
		if len(v) < 16 || !bytes.Equal(v[16:], []byte(owner)) || len(it.Key()) != 6 {
			continue
		}
		p := binary.BigEndian.Uint32(it.Key()[2:])
		if _, err := s.Get(stageKey(p)); err == nil {
			continue
		}
		return p, true, nil
	}
	return 0, false, it.Err()
}

// trainedOnPostgres is the fixture of the worker tests (skipped without a
// server): the runner, a 400-node generated graph loaded and trained with
// tinyTrain in a local store, and a fresh table holding a copy of it.
func trainedOnPostgres(t *testing.T) (r fasdRunner, trained, dsn string) {
	t.Helper()
	if os.Getenv(storagetest.PostgresEnv) == "" {
		t.Skipf("no PostgreSQL server: set %s", storagetest.PostgresEnv)
	}
	r = newRunner(t)
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump")
	r.must(t, "gen", "--out", dump, "--nodes", "400", "--features", "6", "--seed", "3")
	trained = filepath.Join(dir, "trained")
	r.must(t, "load", "--db", trained, "--dataset", "synth", "--dir", dump)
	r.must(t, append([]string{"train", "--db", trained}, tinyTrain...)...)
	return r, trained, pgtest.CopyOf(t, trained)
}

func TestWorkerKilledMidPart(t *testing.T) {
	r, trained, dsn := trainedOnPostgres(t)
	clean := copyStore(t, trained)
	r.must(t, "materialize", "--db", clean, "--workers", "1")

	// On a loaded machine the coordinator can compute every part before
	// the victim has loaded its models and claimed one; that run shows
	// nothing about a killed worker, so it is checked (the views must
	// still be right) and tried again on a fresh copy of the store.
	const attempts = 4
	for i := 1; ; i++ {
		if i > 1 {
			dsn = pgtest.CopyOf(t, trained)
		}
		if killMidPart(t, r, dsn, clean) {
			return
		}
		if i == attempts {
			t.Fatalf("in %d attempts the coordinator finished every part before the victim held one", attempts)
		}
		t.Logf("attempt %d: the coordinator finished before the victim held a part; trying again", i)
	}
}

// killMidPart runs one attempt of TestWorkerKilledMidPart on the store at
// dsn: a victim worker and a coordinator; the victim is killed by its PID
// as soon as it holds a part it has not staged. It reports false when the
// coordinator ended before that (its views checked all the same).
func killMidPart(t *testing.T, r fasdRunner, dsn, clean string) bool {
	t.Helper()
	const lease = "2s"
	victim := exec.Command(r.path, "worker", "--db", dsn, "--workers", "1", "--name", "victim", "--lease", lease, "--poll", "10ms")
	victim.Env = append(os.Environ(), r.env...)
	var vOut bytes.Buffer
	victim.Stdout, victim.Stderr = &vOut, &vOut
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = victim.Process.Kill()
		_ = victim.Wait()
	}()
	coord := make(chan result, 1)
	go func() {
		coord <- r.start(t, nil, 0, "materialize", "--db", dsn, "--workers", "1", "--distributed", "--lease", lease, "--poll", "10ms")
	}()

	obs, err := storage.Open(dsn, &storage.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	deadline := time.Now().Add(2 * time.Minute)
	var part uint32
	for {
		p, ok, err := heldPart(obs, "victim")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			part = p
			break
		}
		select {
		case res := <-coord:
			if res.code != 0 {
				t.Fatalf("coordinator: exit %d before the victim held a part\n%s%s\nvictim:\n%s", res.code, res.out, res.errOut, vOut.String())
			}
			sameViews(t, obs, clean, "of a coordinator that computed every part")
			return false
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the victim held no part within 2 minutes\n%s", vOut.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	proc, err := os.FindProcess(victim.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = victim.Wait()
	if victim.ProcessState.Exited() {
		t.Fatalf("the victim exited by itself (code %d) instead of being killed\n%s", victim.ProcessState.ExitCode(), vOut.String())
	}
	// Killed mid-part: its lease is there, its stage is not.
	if _, err := obs.Get(stageKey(part)); err == nil {
		t.Logf("part %d was staged as the kill landed: the kill fell between computing and the next claim", part)
	} else {
		t.Logf("killed the victim (pid %d) while it computed part %d", victim.Process.Pid, part)
	}

	res := <-coord
	if res.code != 0 {
		t.Fatalf("coordinator: exit %d\n%s%s", res.code, res.out, res.errOut)
	}
	sameViews(t, obs, clean, "after a killed worker")
	return true
}

// sameViews fails t unless the views of s equal those of the local store
// at dir (a single-process materialize), key for key; what says which run
// s holds.
func sameViews(t *testing.T, s storage.Reader, dir, what string) {
	t.Helper()
	cs, err := storage.Open(dir, &storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	got, want := viewKeys(t, s), viewKeys(t, cs)
	if got != want {
		t.Fatalf("views %s differ from a single-process materialize:\n%s", what, firstDiff(got, want))
	}
	t.Logf("%d view keys equal", strings.Count(got, "\n"))
}

// TestWorkerFollowsNewModels: a fasd worker started before a fasd train
// on the store does not stage records of its old models into the new
// models' views: it reopens the store, loads the new models and works on,
// and the views equal a single-process materialize with the new models
// byte for byte.
func TestWorkerFollowsNewModels(t *testing.T) {
	r, trained, dsn := trainedOnPostgres(t)
	r.must(t, "materialize", "--db", dsn, "--workers", "1") // the views of the first models
	retrain := append(append([]string{}, tinyTrain...), "--seed", "6")
	clean := copyStore(t, trained)
	r.must(t, append([]string{"train", "--db", clean}, retrain...)...)
	r.must(t, "materialize", "--db", clean, "--workers", "1")

	// The worker opens on the first models and waits for work.
	w := exec.Command(r.path, "worker", "--db", dsn, "--workers", "1", "--name", "old", "--poll", "10ms")
	w.Env = append(os.Environ(), r.env...)
	var wOut bytes.Buffer
	w.Stdout, w.Stderr = &wOut, &wOut
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Process.Kill()
	time.Sleep(2 * time.Second) // time to open and load the models
	r.must(t, append([]string{"train", "--db", dsn}, retrain...)...)
	r.must(t, "materialize", "--db", dsn, "--workers", "1", "--distributed", "--poll", "10ms")
	if err := w.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = w.Wait()
	out := wOut.String()
	t.Logf("worker:\n%s", out)
	if strings.Contains(out, "staged") && !strings.Contains(out, "reopening the store for the newest models") && !strings.Contains(out, "staged 0 parts") {
		t.Errorf("the worker staged parts without reopening for the new models")
	}

	obs, err := storage.Open(dsn, &storage.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	sameViews(t, obs, clean, "with a worker of the old models (the reference: the new models)")
}
