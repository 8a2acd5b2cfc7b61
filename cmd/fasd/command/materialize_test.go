package command

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fasd-db/fasd/index/synth"
	"github.com/fasd-db/fasd/storage"
)

// The query commands (materialize, predict, update, refresh, audit, serve)
// share one fixture built once per test binary through the CLI itself: a
// generated 240-node graph loaded into Pebble, trained with tiny settings
// (a few seconds), and materialized. Tests work on copies of its stores.

// tinyTrain are training settings that finish in a few seconds on 2 cores.
var tinyTrain = []string{"--preset", "synth", "--seed", "5", "--diagnostics=false",
	"--set", "sample.fanout=4", "--set", "debias.steps=1", "--set", "sens.epochs=2", "--set", "score.epochs=1",
	"--set", "score.batch=64", "--set", "classifier.epochs=3", "--set", "baseline.epochs=3",
	// The default preset's debiasing (ODE, linear guides toward chance), so
	// that every engine test (materialize, audit against the run's own
	// metrics, predict --subgraph, refresh) checks that the store serves
	// what the evaluation computed with guidance on.
	"--set", "debias.reverse=ode", "--set", "debias.guide_weight=2", "--set", "debias.guide_steps=3",
	"--set", "debias.guide_net=linear", "--set", "debias.guide_rounds=2"}

const fixtureNodes = 240

// trainRecord is the part of fasd train --json the tests compare with.
type trainRecord struct {
	Result struct {
		Variants []struct {
			Variant string `json:"variant"`
			Test    struct {
				N       int     `json:"n"`
				Acc     float64 `json:"acc"`
				AUC     float64 `json:"auc"`
				F1      float64 `json:"f1"`
				MacroF1 float64 `json:"macro_f1"`
				DP      float64 `json:"dp"`
				EO      float64 `json:"eo"`
			} `json:"test"`
		} `json:"variants"`
	} `json:"result"`
	Memo *struct {
		Subgraphs int `json:"subgraphs"`
	} `json:"memo"`
}

var fixture struct {
	once sync.Once
	root string // temporary directory holding the templates
	// graph: loaded, no models; trained: plus models; views: plus
	// materialized views.
	graph, trained, views string
	dump                  string // the generated dump (synth.csv, …)
	run                   trainRecord
	err                   error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixture.root != "" {
		os.RemoveAll(fixture.root)
	}
	os.Exit(code)
}

// buildFixture generates, loads, trains and materializes the templates.
func buildFixture(t testing.TB) error {
	root, err := os.MkdirTemp("", "fasd-cmd-test-")
	if err != nil {
		return err
	}
	fixture.root = root
	fixture.dump = filepath.Join(root, "dump")
	step := func(args ...string) (string, error) {
		out, err, code := run(t, args...)
		if err != nil {
			return out, fmt.Errorf("fasd %s: %w (exit %d)", strings.Join(args, " "), err, code)
		}
		return out, nil
	}
	fixture.graph = filepath.Join(root, "graph")
	if _, err := step("gen", "--out", fixture.dump, "--nodes", fmt.Sprint(fixtureNodes), "--features", "6", "--seed", "3"); err != nil {
		return err
	}
	if _, err := step("load", "--db", fixture.graph, "--preset", "synth", "--dir", fixture.dump); err != nil {
		return err
	}
	fixture.trained = filepath.Join(root, "trained")
	if err := os.CopyFS(fixture.trained, os.DirFS(fixture.graph)); err != nil {
		return err
	}
	out, err := step(append([]string{"train", "--db", fixture.trained, "--json"}, tinyTrain...)...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(out), &fixture.run); err != nil {
		return fmt.Errorf("train --json: %w", err)
	}
	fixture.views = filepath.Join(root, "views")
	if err := os.CopyFS(fixture.views, os.DirFS(fixture.trained)); err != nil {
		return err
	}
	_, err = step("materialize", "--db", fixture.views)
	return err
}

// fixtureStore returns a private copy of the template store kind ("graph",
// "trained" or "views").
func fixtureStore(t *testing.T, kind string) string {
	t.Helper()
	fixture.once.Do(func() { fixture.err = buildFixture(t) })
	if fixture.err != nil {
		t.Fatalf("fixture: %v", fixture.err)
	}
	src := map[string]string{"graph": fixture.graph, "trained": fixture.trained, "views": fixture.views}[kind]
	if src == "" {
		t.Fatalf("unknown fixture %q", kind)
	}
	dst := filepath.Join(t.TempDir(), kind)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// emptyStore returns a store that holds no graph.
func emptyStore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "empty")
	s, err := storage.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// extID is the external id synth gives node i.
func extID(i int) string { return fmt.Sprint(synth.NodeID(i)) }

// errCase is a command line that must fail with code and a message
// containing msg.
type errCase struct {
	name string
	args []string
	code int
	msg  string
}

func checkErrCases(t *testing.T, cases []errCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err, code := run(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d (%v), want %d", code, err, c.code)
			}
			if c.msg != "" && !strings.Contains(err.Error(), c.msg) {
				t.Errorf("message %q lacks %q", err, c.msg)
			}
		})
	}
}

// refreshJSON is the shape of materialize/refresh --json.
type refreshJSON struct {
	Subgraphs    int   `json:"subgraphs"`
	Nodes        int   `json:"nodes"`
	GraphVersion int64 `json:"graph_version"`
	DurationNS   int64 `json:"duration_ns"`
	Complete     bool  `json:"complete"`
	Reused       int   `json:"reused"`
	Times        struct {
		ComputeNS int64 `json:"compute_ns"`
		FoldNS    int64 `json:"fold_ns"`
		WaitNS    int64 `json:"wait_ns"`
		NodesNS   int64 `json:"nodes_ns"`
		Parts     int   `json:"parts"`
		Staged    int   `json:"staged_parts"`
	} `json:"times"`
}

func decodeStrict(t *testing.T, s string, dst any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		t.Fatalf("decode %T: %v in\n%s", dst, err, s)
	}
}

// Ensure that fasd materialize builds every view (text and --json), that
// a second run resumes with nothing to do, and that bad flags and missing
// stores, graphs or models fail with the documented exit codes.
func TestMaterializeCommand(t *testing.T) {
	db := fixtureStore(t, "trained")
	out, err, code := run(t, "materialize", "--db", db, "--workers", "1")
	if err != nil || code != ExitOK {
		t.Fatalf("materialize: %v (exit %d)", err, code)
	}
	first := out
	t.Logf("fasd materialize after fasd train: %s", first)
	var subgraphs, nodes, version int
	var complete bool
	if _, err := fmt.Sscanf(out, "materialized %d subgraphs, %d node views in", &subgraphs, &nodes); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if _, err := fmt.Sscanf(out[strings.Index(out, "(graph version"):], "(graph version %d, complete %t)", &version, &complete); err != nil || !complete {
		t.Fatalf("output %q: %v", out, err)
	}
	// Every labelled node of the 240 is a root and lies in its own
	// subgraph; subgraphs reach unlabelled nodes too.
	if subgraphs < fixtureNodes/2 || subgraphs > fixtureNodes || nodes < subgraphs || nodes > fixtureNodes {
		t.Errorf("%d subgraphs, %d views of %d nodes", subgraphs, nodes, fixtureNodes)
	}
	// Resuming a complete materialization recomputes nothing.
	out, err, _ = run(t, "materialize", "--db", db, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep refreshJSON
	decodeStrict(t, out, &rep)
	if rep.Subgraphs != 0 || rep.Nodes != 0 || !rep.Complete || rep.GraphVersion != int64(version) {
		t.Errorf("second materialize: %+v", rep)
	}
	// The fixture's views were built with the default worker count: the
	// same views, byte for byte, as those built here with one worker.
	a, _, _ := run(t, "predict", "--db", db, "--all", "--json")
	b, _, _ := run(t, "predict", "--db", fixtureStore(t, "views"), "--all", "--json")
	if a == "" || a != b {
		t.Errorf("views differ between 1 worker and the default")
	}
	if n := strings.Count(a, "\n"); n != nodes {
		t.Errorf("predict --all: %d lines, materialize said %d views", n, nodes)
	}
	// Debiasing every subgraph again (--no-reuse) gives the same views;
	// without the flag the subgraphs fasd train debiased were not
	// debiased again, unless the models fell back (they debias nothing).
	scratch := fixtureStore(t, "trained")
	out, err, _ = run(t, "materialize", "--db", scratch, "--no-reuse", "--json")
	if err != nil {
		t.Fatal(err)
	}
	decodeStrict(t, out, &rep)
	if rep.Reused != 0 || rep.Subgraphs != subgraphs {
		t.Errorf("materialize --no-reuse: %+v", rep)
	}
	if c, _, _ := run(t, "predict", "--db", scratch, "--all", "--json"); c != a {
		t.Errorf("views differ between materialize and materialize --no-reuse")
	}
	if fixture.run.Memo != nil && fixture.run.Memo.Subgraphs > 0 {
		want := fmt.Sprintf("\n%d of the subgraphs classified with the debiasing fasd train kept", min(subgraphs, fixture.run.Memo.Subgraphs))
		if !strings.Contains(first, want) {
			t.Errorf("materialize after train: %q, want %q", first, want)
		}
	}
	checkErrCases(t, []errCase{
		{"no db", []string{"materialize"}, ExitUsage, "--db DIR is required"},
		{"negative workers", []string{"materialize", "--db", db, "--workers", "-1"}, ExitUsage, "--workers"},
		{"bad workers", []string{"materialize", "--db", db, "--workers", "two"}, ExitUsage, "invalid argument"},
		{"unknown flag", []string{"materialize", "--db", db, "--fast"}, ExitUsage, "unknown flag"},
		{"positional", []string{"materialize", "--db", db, "now"}, ExitUsage, "unexpected argument"},
		{"no store", []string{"materialize", "--db", filepath.Join(t.TempDir(), "absent")}, ExitStoreState, "no store"},
		{"no graph", []string{"materialize", "--db", emptyStore(t)}, ExitStoreState, "no graph"},
		{"no model", []string{"materialize", "--db", fixtureStore(t, "graph")}, ExitStoreState, "no trained models"},
	})
}
