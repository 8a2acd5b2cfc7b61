//go:build crashtest

package main

// The crash-injection suite of the fasd command. It runs load, train,
// materialize and refresh on a small generated graph and interrupts each:
//
//   - kill -9 of the process at every stage boundary (the
//     FASD_TEST_KILL_AT hook of package command: the process SIGKILLs
//     itself right after the N-th progress report of a stage, which for
//     materialize and refresh follows the N-th committed chunk);
//   - kill -9 at random moments (uniform over the clean run's duration);
//   - in-process cancellation at random moments (the command's context).
//
// After each interruption it reads through the command line (predict
// --all, audit, predict --node, predict --all again), resumes (the same
// command again; load --replace for an incomplete load; train again), and
// compares with a clean run: before the resume every prediction must equal
// the clean run's or be flagged stale (an error saying the store holds no
// graph or no models also counts as correct), after it every prediction
// must equal the clean run's; a committed load or chunk must survive the
// kill (lost commits). The short version (go test) interrupts each
// operation at a few stage boundaries and once at random each way; with
// FASD_CRASH_KILLS=N (make crash sets 20) every operation is interrupted
// at every stage boundary and gets N random kills and N random
// cancellations.
//
// The child processes are this test binary itself, which runs main when
// FASD_CRASH_CHILD=1, or the binary named by FASD_CRASH_BIN (make crash
// builds bin/fasd-crashtest and passes it). The hook exists only in builds
// with the crashtest tag, so this file has the tag too: make test runs
// go test -tags crashtest ./cmd/fasd, make crash the long version.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fasd-db/fasd/cmd/fasd/command"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/storage"
)

const childEnv = "FASD_CRASH_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main() // exits
	}
	os.Exit(m.Run())
}

// result is the outcome of one fasd run.
type result struct {
	out, errOut string
	code        int  // exit code; -1 when killed
	killed      bool // ended by a signal (or, in-process, by the cancelled context)
	dur         time.Duration
}

// fasdRunner runs fasd commands as child processes.
type fasdRunner struct {
	path string
	env  []string
}

func newRunner(t *testing.T) fasdRunner {
	t.Helper()
	if p := os.Getenv("FASD_CRASH_BIN"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return fasdRunner{path: abs}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fasdRunner{path: exe, env: []string{childEnv + "=1"}}
}

// start runs fasd args with extra environment; killAfter > 0 sends
// SIGKILL after that long.
func (r fasdRunner) start(t *testing.T, env []string, killAfter time.Duration, args ...string) result {
	t.Helper()
	cmd := exec.Command(r.path, args...)
	cmd.Env = append(append(os.Environ(), r.env...), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if killAfter > 0 {
		timer := time.AfterFunc(killAfter, func() { _ = cmd.Process.Kill() })
		defer timer.Stop()
	}
	_ = cmd.Wait()
	st := cmd.ProcessState
	return result{out: out.String(), errOut: errOut.String(), code: st.ExitCode(), killed: !st.Exited(), dur: time.Since(begin)}
}

// must runs fasd args and fails the test unless it exits 0.
func (r fasdRunner) must(t *testing.T, args ...string) result {
	t.Helper()
	res := r.start(t, nil, 0, args...)
	if res.code != 0 {
		t.Fatalf("fasd %s: exit %d\n%s%s", strings.Join(args, " "), res.code, res.out, res.errOut)
	}
	return res
}

// inProcess runs fasd args in this process with a context cancelled after
// cancelAfter.
func inProcess(cancelAfter time.Duration, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), cancelAfter)
	defer cancel()
	var out, errOut bytes.Buffer
	root := command.NewRoot(&out, &errOut)
	root.SetArgs(args)
	begin := time.Now()
	err := root.ExecuteContext(ctx)
	res := result{out: out.String(), code: command.ExitCode(err), dur: time.Since(begin)}
	if err != nil {
		res.errOut = err.Error()
		res.killed = ctx.Err() != nil
	}
	return res
}

// tinyTrain trains in about a second on 2 cores (the settings of the
// command package's tests).
var tinyTrain = []string{"--profile", "synth", "--seed", "5", "--diagnostics=false",
	"--set", "sample.fanout=4", "--set", "debias.steps=1", "--set", "sens.epochs=2", "--set", "score.epochs=1",
	"--set", "score.batch=64", "--set", "classifier.epochs=3", "--set", "baseline.epochs=3",
	"--set", "debias.reverse=ode", "--set", "debias.guide_weight=2", "--set", "debias.guide_steps=3",
	"--set", "debias.guide_net=linear", "--set", "debias.guide_rounds=2"}

// prediction is the part of predict --json the suite compares.
type prediction struct {
	Node         uint32                `json:"node"`
	ID           int64                 `json:"id"`
	Class        int                   `json:"class"`
	Probs        [2]float64            `json:"probs"`
	Subgraphs    int                   `json:"subgraphs"`
	Variants     map[string][2]float64 `json:"variants"`
	GraphVersion uint64                `json:"graph_version"`
	Stale        bool                  `json:"stale"`
	Source       string                `json:"source"`
}

// same reports whether p and q are the same prediction of the same graph.
func (p prediction) same(q prediction) bool {
	if p.ID != q.ID || p.Class != q.Class || p.Probs != q.Probs || p.Subgraphs != q.Subgraphs ||
		p.GraphVersion != q.GraphVersion || len(p.Variants) != len(q.Variants) {
		return false
	}
	for k, v := range p.Variants {
		if q.Variants[k] != v {
			return false
		}
	}
	return true
}

// decodeAll decodes a stream of JSON predictions.
func decodeAll(t *testing.T, s string) []prediction {
	t.Helper()
	var ps []prediction
	dec := json.NewDecoder(strings.NewReader(s))
	for {
		var p prediction
		if err := dec.Decode(&p); err == io.EOF {
			return ps
		} else if err != nil {
			t.Fatalf("decode predictions: %v\n%.500s", err, s)
		}
		ps = append(ps, p)
	}
}

// refreshReport is the part of materialize/refresh --json the suite uses.
type refreshReport struct {
	Subgraphs int  `json:"subgraphs"`
	Complete  bool `json:"complete"`
}

// crashFixture holds the clean runs every scenario compares with.
type crashFixture struct {
	r                          fasdRunner
	dump, graph, trained       string // stores: loaded; plus models
	views, updated             string // plus views; plus an edge update
	cleanGraph                 string // graph keys after the clean load
	cleanMat, cleanRef         map[int64]prediction
	matTotal, refTotal         int
	ids                        []int64
	durLoad, durTrain, durMat  time.Duration
	durRef                     time.Duration
	loadArgs                   []string
	edges                      string // the update's edge file
	auditNodesMat, auditNodesR int
}

const chunkRoots = 64 // query.Options.ChunkRoots' default, which the CLI uses

func copyStore(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "db")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// graphKeys renders every key of the store at dir but the views'.
func graphKeys(t *testing.T, dir string) string {
	t.Helper()
	s, err := storage.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	it, err := s.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var b strings.Builder
	for ok := it.First(); ok; ok = it.Next() {
		if k := it.Key(); len(k) > 0 && k[0] == index.PrefixViews {
			continue
		}
		v, err := it.Value()
		if err != nil {
			t.Fatal(err)
		}
		if string(it.Key()) == "Mload" {
			var m map[string]any
			if err := json.Unmarshal(v, &m); err != nil {
				t.Fatal(err)
			}
			// The report records when the load finished and how many
			// batches it wrote (a replacing load adds its deletion).
			delete(m, "finished")
			delete(m, "batches")
			if v, err = json.Marshal(m); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Fprintf(&b, "%q=%x\n", it.Key(), v)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// firstDiff returns the first line where a and b differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n  got  %.300s\n  want %.300s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(la), len(lb))
}

func predictAll(t *testing.T, r fasdRunner, db string) []prediction {
	t.Helper()
	return decodeAll(t, r.must(t, "predict", "--db", db, "--all", "--json").out)
}

func byID(ps []prediction) map[int64]prediction {
	m := make(map[int64]prediction, len(ps))
	for _, p := range ps {
		m[p.ID] = p
	}
	return m
}

func auditNodes(t *testing.T, r fasdRunner, db string) int {
	t.Helper()
	var a struct{ Nodes, Missing, Stale int }
	if err := json.Unmarshal([]byte(r.must(t, "audit", "--db", db, "--set", "labelled", "--json").out), &a); err != nil {
		t.Fatal(err)
	}
	return a.Nodes + a.Missing
}

func buildCrashFixture(t *testing.T) *crashFixture {
	t.Helper()
	f := &crashFixture{r: newRunner(t)}
	dir := t.TempDir()
	f.dump = filepath.Join(dir, "dump")
	f.r.must(t, "gen", "--out", f.dump, "--nodes", "400", "--features", "6", "--seed", "3")
	f.graph = filepath.Join(dir, "graph")
	f.loadArgs = []string{"--dataset", "synth", "--dir", f.dump}
	f.durLoad = f.r.must(t, append([]string{"load", "--db", f.graph}, f.loadArgs...)...).dur
	f.cleanGraph = graphKeys(t, f.graph)
	f.trained = copyStore(t, f.graph)
	f.durTrain = f.r.must(t, append([]string{"train", "--db", f.trained}, tinyTrain...)...).dur
	f.views = copyStore(t, f.trained)
	res := f.r.must(t, "materialize", "--db", f.views, "--json")
	f.durMat = res.dur
	var rep refreshReport
	if err := json.Unmarshal([]byte(res.out), &rep); err != nil {
		t.Fatal(err)
	}
	f.matTotal = rep.Subgraphs
	all := predictAll(t, f.r, f.views)
	f.cleanMat = byID(all)
	f.auditNodesMat = auditNodes(t, f.r, f.views)
	for _, p := range all {
		f.ids = append(f.ids, p.ID)
	}
	// An update of 150 random edges dirties most subgraphs.
	rng := rand.New(rand.NewPCG(11, 12))
	var edges strings.Builder
	for range 150 {
		fmt.Fprintf(&edges, "%d %d\n", f.ids[rng.IntN(len(f.ids))], f.ids[rng.IntN(len(f.ids))])
	}
	ef := filepath.Join(dir, "edges.txt")
	f.edges = ef
	if err := os.WriteFile(ef, []byte(edges.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f.updated = copyStore(t, f.views)
	f.r.must(t, "update", "--db", f.updated, "--add-edges", ef)
	refreshed := copyStore(t, f.updated)
	res = f.r.must(t, "refresh", "--db", refreshed, "--json")
	f.durRef = res.dur
	if err := json.Unmarshal([]byte(res.out), &rep); err != nil {
		t.Fatal(err)
	}
	f.refTotal = rep.Subgraphs
	f.cleanRef = byID(predictAll(t, f.r, refreshed))
	f.auditNodesR = auditNodes(t, f.r, refreshed)
	if f.refTotal <= chunkRoots {
		t.Fatalf("the update dirties %d subgraphs; the refresh needs several chunks", f.refTotal)
	}
	t.Logf("fixture: %d nodes, materialize %d subgraphs in %s, refresh %d in %s, load %s, train %s",
		len(f.ids), f.matTotal, f.durMat.Round(time.Millisecond), f.refTotal, f.durRef.Round(time.Millisecond),
		f.durLoad.Round(time.Millisecond), f.durTrain.Round(time.Millisecond))
	return f
}

// tally counts what one operation's kill points showed.
type tally struct {
	boundaries, kills, cancels int // interruptions that hit the run
	runs                       int // every run, also those that finished first
	reads, wrong, lost         int
}

// checkReads reads the store at db as a user would before resuming and
// counts the predictions checked and the wrong ones: a prediction not
// flagged stale that differs from clean, or an approximation for a node
// the clean run finds in some subgraph.
func (f *crashFixture) checkReads(t *testing.T, db string, clean map[int64]prediction, auditWant int, rng *rand.Rand, tl *tally, what string) {
	t.Helper()
	wrong := func(format string, args ...any) {
		tl.wrong++
		t.Errorf(what+": "+format, args...)
	}
	check := func(p prediction, via string) {
		tl.reads++
		c, ok := clean[p.ID]
		switch {
		case p.Stale:
		case !ok && (p.Source != "approx" || p.Subgraphs != 0):
			// The clean run has no view: the node is in no subgraph.
			wrong("%s: node %d is in no subgraph of the clean run: %+v", via, p.ID, p)
		case !ok:
		case p.Source == "approx" && c.Subgraphs > 0:
			wrong("%s: node %d answered approx, the clean run has %d subgraphs", via, p.ID, c.Subgraphs)
		case !p.same(c):
			wrong("%s: node %d: %+v, clean %+v", via, p.ID, p, c)
		}
	}
	all := f.r.start(t, nil, 0, "predict", "--db", db, "--all", "--json")
	if all.code == command.ExitStoreState {
		return // no graph or no models yet: an error, not a wrong answer
	}
	if all.code != 0 {
		wrong("predict --all: exit %d: %s", all.code, all.errOut)
		return
	}
	var stale []int64
	for _, p := range decodeAll(t, all.out) {
		check(p, "predict --all")
		if p.Stale {
			stale = append(stale, p.ID)
		}
	}
	res := f.r.start(t, nil, 0, "audit", "--db", db, "--set", "labelled", "--json")
	var a struct{ Nodes, Missing, Stale int }
	if res.code != 0 || json.Unmarshal([]byte(res.out), &a) != nil {
		wrong("audit: exit %d: %s", res.code, res.errOut)
	} else if a.Nodes+a.Missing != auditWant || a.Stale > len(stale) {
		wrong("audit counts %d nodes, %d missing, %d stale; want %d nodes, at most %d stale", a.Nodes, a.Missing, a.Stale, auditWant, len(stale))
	}
	// Point reads: the stale nodes first (they take the cold path and
	// write back), then random ones.
	ask := slices.Clone(stale[:min(len(stale), 25)])
	for range 15 {
		ask = append(ask, f.ids[rng.IntN(len(f.ids))])
	}
	args := []string{"predict", "--db", db, "--json"}
	for _, id := range ask {
		args = append(args, "--node", strconv.FormatInt(id, 10))
	}
	res = f.r.start(t, nil, 0, args...)
	if res.code != 0 {
		wrong("predict --node: exit %d: %s", res.code, res.errOut)
		return
	}
	ps := decodeAll(t, res.out)
	if len(ps) != len(ask) {
		wrong("predict --node: %d answers for %d nodes", len(ps), len(ask))
	}
	for _, p := range ps {
		if p.Stale {
			wrong("predict --node %d: flagged stale (Predict computes)", p.ID)
		}
		check(p, "predict --node")
	}
	// What the point reads wrote back.
	for _, p := range predictAll(t, f.r, db) {
		check(p, "predict --all after point reads")
	}
}

// checkFinal compares every prediction after the resume with the clean
// run's.
func (f *crashFixture) checkFinal(t *testing.T, db string, clean map[int64]prediction, tl *tally, what string) {
	t.Helper()
	all := predictAll(t, f.r, db)
	if len(all) != len(clean) {
		tl.wrong++
		t.Errorf("%s: %d views after the resume, the clean run has %d", what, len(all), len(clean))
	}
	for _, p := range all {
		tl.reads++
		if p.Stale || !p.same(clean[p.ID]) {
			tl.wrong++
			t.Errorf("%s: after the resume node %d: %+v, clean %+v", what, p.ID, p, clean[p.ID])
		}
	}
}

// killPoint is one interruption: a stage boundary (hook "STAGE:N"), a
// random kill after delay, or an in-process cancellation after delay.
type killPoint struct {
	hook    string
	delay   time.Duration
	process bool // kill -9 of a child; false: in-process cancellation
}

func (k killPoint) String() string {
	switch {
	case k.hook != "":
		return "kill -9 at " + k.hook
	case k.process:
		return fmt.Sprintf("kill -9 after %s", k.delay.Round(time.Millisecond))
	}
	return fmt.Sprintf("cancel after %s", k.delay.Round(time.Millisecond))
}

// interrupt runs args on db interrupted at k.
func (f *crashFixture) interrupt(t *testing.T, k killPoint, args []string) result {
	t.Helper()
	switch {
	case k.hook != "":
		return f.r.start(t, []string{command.KillAtEnv + "=" + k.hook}, 0, args...)
	case k.process:
		return f.r.start(t, nil, k.delay, args...)
	}
	return inProcess(k.delay, args...)
}

// killsPerOp returns the number of random kills (and of random
// cancellations) per operation and whether the long version runs (every
// stage boundary too).
func killsPerOp(t *testing.T) (int, bool) {
	s := os.Getenv("FASD_CRASH_KILLS")
	if s == "" {
		return 1, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("FASD_CRASH_KILLS=%q: want a positive number", s)
	}
	return n, true
}

// TestCrashInjection is the suite (see the top of the file). It logs one
// line of figures per operation.
func TestCrashInjection(t *testing.T) {
	f := buildCrashFixture(t)
	n, long := killsPerOp(t)
	rng := rand.New(rand.NewPCG(2024, uint64(n)))
	report := map[string]*tally{}
	var order []string
	// run interrupts op at each hook, then at random moments over the
	// clean run's duration until n kills and n cancellations hit the run
	// (at most 4n tries each; the long version fails with fewer), and
	// checks each interruption.
	run := func(op string, base string, args func(db string) []string, hooks []killPoint, dur time.Duration,
		before func(t *testing.T, db string, res result, k killPoint, tl *tally), resume func(t *testing.T, db string, res result, k killPoint, tl *tally)) {
		tl := &tally{}
		report[op], order = tl, append(order, op)
		t.Run(op, func(t *testing.T) {
			one := func(k killPoint) result {
				db := filepath.Join(t.TempDir(), "db")
				if base != "" {
					db = copyStore(t, base)
				}
				res := f.interrupt(t, k, args(db))
				tl.runs++
				before(t, db, res, k, tl)
				resume(t, db, res, k, tl)
				return res
			}
			for _, k := range hooks {
				if one(k).killed {
					tl.boundaries++
				}
			}
			for _, process := range []bool{true, false} {
				hits, span := 0, dur
				for try := 0; hits < n && try < 4*n; try++ {
					res := one(killPoint{delay: time.Duration(rng.Float64() * float64(span)), process: process})
					if res.killed {
						hits++
					} else {
						// It finished first: draw within its own time
						// (an in-process run skips the process start).
						span = res.dur
					}
				}
				if process {
					tl.kills = hits
				} else {
					tl.cancels = hits
				}
			}
		})
	}

	// load: before the resume the store holds the complete graph or says
	// it holds an incomplete one (or none); the resume reloads with
	// --replace; the graph must equal the clean load's byte for byte.
	loadArgs := func(db string) []string { return append([]string{"load", "--db", db}, f.loadArgs...) }
	run("load", "", loadArgs,
		[]killPoint{{hook: "scan edges:1", process: true}, {hook: "write:1", process: true}}, f.durLoad,
		func(t *testing.T, db string, res result, k killPoint, tl *tally) {
			st := f.r.start(t, nil, 0, "stats", "--db", db, "--json")
			tl.reads++
			if st.code != 0 && st.code != command.ExitStoreState {
				tl.wrong++
				t.Errorf("%s: stats: exit %d: %s", k, st.code, st.errOut)
			}
			if got := graphKeys(t, db); st.code == 0 && got != f.cleanGraph {
				tl.lost++
				t.Errorf("%s: the store says it holds a graph, not the clean load's: %s", k, firstDiff(got, f.cleanGraph))
			}
		},
		func(t *testing.T, db string, res result, k killPoint, tl *tally) {
			if st := f.r.start(t, nil, 0, "stats", "--db", db); st.code != 0 {
				f.r.must(t, append(loadArgs(db), "--replace")...)
			}
			f.r.must(t, "check", "--db", db)
			if got := graphKeys(t, db); got != f.cleanGraph {
				tl.wrong++
				t.Errorf("%s: the resumed load differs from the clean one: %s", k, firstDiff(got, f.cleanGraph))
			}
		})

	// train: before the resume the store has no models (an error) or the
	// trained ones (cold predictions equal the clean run's); the resume
	// trains again with the same seed; materialized views must equal the
	// clean run's.
	trainArgs := func(db string) []string { return append([]string{"train", "--db", db}, tinyTrain...) }
	var trainHooks []killPoint
	trainStages := []string{"score"}
	if long {
		trainStages = []string{"gsen", "gsen_grads", "score", "debias", "classifier", "no_diffusion"}
	}
	for _, s := range trainStages {
		trainHooks = append(trainHooks, killPoint{hook: s + ":1", process: true})
	}
	run("train", f.graph, trainArgs, trainHooks, f.durTrain,
		func(t *testing.T, db string, res result, k killPoint, tl *tally) {
			f.checkReads(t, db, f.cleanMat, f.auditNodesMat, rng, tl, k.String())
		},
		func(t *testing.T, db string, res result, k killPoint, tl *tally) {
			if res.code != 0 {
				f.r.must(t, trainArgs(db)...)
			}
			f.r.must(t, "materialize", "--db", db)
			f.checkFinal(t, db, f.cleanMat, tl, k.String())
		})

	// materialize and refresh: reads before the resume, then the resume
	// must compute no committed chunk again, and every view must equal
	// the clean run's.
	engineOp := func(op, base string, total int, dur time.Duration, clean map[int64]prediction, auditWant int) {
		var hooks []killPoint
		chunks := (total + chunkRoots - 1) / chunkRoots
		for c := 1; c <= chunks; c++ {
			if long || c == 1 || c == chunks {
				hooks = append(hooks, killPoint{hook: fmt.Sprintf("subgraphs:%d", c), process: true})
			}
		}
		hooks = append(hooks, killPoint{hook: "nodes:1", process: true})
		args := func(db string) []string { return []string{op, "--db", db} }
		run(op, base, args, hooks, dur,
			func(t *testing.T, db string, res result, k killPoint, tl *tally) {
				f.checkReads(t, db, clean, auditWant, rng, tl, k.String())
			},
			func(t *testing.T, db string, res result, k killPoint, tl *tally) {
				out := f.r.must(t, op, "--db", db, "--json").out
				var rep refreshReport
				if err := json.Unmarshal([]byte(out), &rep); err != nil || !rep.Complete {
					t.Fatalf("%s: resumed %s: %s (%v)", k, op, out, err)
				}
				// A kill at subgraphs:c follows c committed chunks (the
				// point reads may have computed some more).
				var c int
				if _, err := fmt.Sscanf(k.hook, "subgraphs:%d", &c); err == nil {
					if left := total - min(c*chunkRoots, total); rep.Subgraphs > left {
						tl.lost++
						t.Errorf("%s: the resume recomputed %d subgraphs, at most %d were left", k, rep.Subgraphs, left)
					}
				}
				if rep.Subgraphs > total {
					tl.lost++
					t.Errorf("%s: the resume recomputed %d subgraphs of %d", k, rep.Subgraphs, total)
				}
				f.checkFinal(t, db, clean, tl, k.String())
			})
	}
	engineOp("materialize", f.trained, f.matTotal, f.durMat, f.cleanMat, f.auditNodesMat)
	engineOp("refresh", f.updated, f.refTotal, f.durRef, f.cleanRef, f.auditNodesR)

	var sum strings.Builder
	fmt.Fprintf(&sum, "%-12s %10s %6s %8s %5s %7s %6s %8s\n", "operation", "boundaries", "kills", "cancels", "runs", "reads", "wrong", "lost")
	for _, op := range order {
		tl := report[op]
		fmt.Fprintf(&sum, "%-12s %10d %6d %8d %5d %7d %6d %8d\n", op, tl.boundaries, tl.kills, tl.cancels, tl.runs, tl.reads, tl.wrong, tl.lost)
		if long && (tl.kills < n || tl.cancels < n) {
			t.Errorf("%s: %d random kills and %d cancellations hit the run in %d tries each, want %d", op, tl.kills, tl.cancels, 4*n, n)
		}
	}
	t.Logf("crash injection: interruptions that hit the run (kill -9 at stage boundaries, kill -9 and cancellation at random moments), runs in all, predictions read, wrong reads, lost commits:\n%s", sum.String())
	if long {
		fmt.Print(sum.String())
	}
}
