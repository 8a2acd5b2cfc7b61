package index

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// A small valid dump: 6 nodes, ids 10..60, a named sensitive column, two
// features, one unlabelled node; the edges hold a duplicate (reversed) and a
// self-loop.
const (
	smallNodes = `id,group,label,f1,f2
10,a,1,0.5,3
20,b,0,1.5,4
30,a,-1,2.5,5
40,b,1,3.5,6
50,a,0,4.5,7
60,b,1,5.5,8
`
	smallEdges = "10 20\n20 10\n20\t30\n30 30\n40 50\n\n50 60\n10 60\n"
)

func smallSpec() dump.Spec {
	return dump.Spec{
		IDColumn:  "id",
		Sensitive: dump.SensitiveSpec{Column: "group", Named: map[string]int8{"a": 0, "b": 1}},
		Label:     dump.LabelSpec{Column: "label"},
		Scale:     true,
	}
}

func smallOptions(t testing.TB, nodes, edges string) *LoadOptions {
	dir := t.TempDir()
	return &LoadOptions{
		Nodes: writeFile(t, dir, "nodes.csv", nodes),
		Edges: writeFile(t, dir, "edges.txt", edges),
		Spec:  smallSpec(),
		Split: SplitOptions{Mode: SplitFractions, Fractions: split5050()},
	}
}

// Ensure that a small dump loads with the documented edge accounting and a
// consistent graph.
func TestLoad_Small(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := openMem(t, b)
			rep, err := Load(context.Background(), s, smallOptions(t, smallNodes, smallEdges))
			if err != nil {
				t.Fatal(err)
			}
			want := EdgeReport{Lines: 7, Kept: 5, Duplicates: 1, SelfLoops: 1}
			if rep.Edges != want {
				t.Errorf("edges %+v, want %+v", rep.Edges, want)
			}
			g, err := Open(s)
			if err != nil {
				t.Fatal(err)
			}
			checkGraph(t, g)
			v, _ := g.View()
			defer v.Close()
			id, err := v.InternalID(40)
			if err != nil || id != 3 {
				t.Fatalf("InternalID(40) = %d, %v", id, err)
			}
			nb, err := v.Neighbors(0, nil)
			if err != nil || fmt.Sprint(nb) != "[1 5]" {
				t.Errorf("neighbours of 0: %v %v", nb, err)
			}
			f, _ := v.Features(5, nil)
			if fmt.Sprint(f) != "[1 1]" {
				t.Errorf("scaled features of last node %v, want [1 1]", f)
			}
			n, _ := v.Node(2)
			if n.ExternalID != 30 || n.Sensitive != 0 || n.Label != Unlabelled || n.Split != SplitNone {
				t.Errorf("node 2 %+v", n)
			}
			if _, err := v.InternalID(70); !errors.Is(err, ErrUnknownID) {
				t.Errorf("InternalID(70) err %v", err)
			}
		})
	}
}

// Ensure that every kind of bad input fails with its file:line message and
// leaves the store byte-for-byte unchanged, both when it is empty and when
// it holds a graph that Replace would overwrite.
func TestLoad_BadInput(t *testing.T) {
	badRow := func(row string) string { return strings.Replace(smallNodes, "30,a,-1,2.5,5", row, 1) }
	cases := []struct {
		name, nodes, edges string
		strict             bool
		kind               error
		msg                string
	}{
		{"field count", badRow("30,a,-1,2.5,5,9"), smallEdges, false, dump.ErrFieldCount, "nodes.csv:4: wrong field count"},
		{"non-numeric", badRow("30,a,-1,abc,5"), smallEdges, false, dump.ErrNotNumber, `nodes.csv:4: column "f1": not a number`},
		{"NaN", badRow("30,a,-1,2.5,NaN"), smallEdges, false, dump.ErrNonFinite, `nodes.csv:4: column "f2": not finite`},
		{"Inf", badRow("30,a,-1,-Inf,5"), smallEdges, false, dump.ErrNonFinite, `nodes.csv:4: column "f1": not finite`},
		{"duplicate id", badRow("20,a,-1,2.5,5"), smallEdges, false, dump.ErrDuplicateID, `nodes.csv:4: column "id": duplicate node id`},
		{"unmapped sensitive", badRow("30,c,-1,2.5,5"), smallEdges, false, dump.ErrUnmappedSensitive, `nodes.csv:4: column "group": unmapped sensitive value`},
		{"malformed edge", smallNodes, "10 20\n20 x\n", false, dump.ErrBadEdge, "edges.txt:2: field 2: malformed edge line"},
		{"three fields", smallNodes, "10 20\n20 30\n20 30 40\n", false, dump.ErrBadEdge, "edges.txt:3: malformed edge line"},
		{"unknown endpoint strict", smallNodes, "10 20\n\n20 99\n", true, ErrUnknownEndpoint, "edges.txt:3: field 2: index: unknown edge endpoint: 99"},
	}
	for _, b := range backends {
		for _, pre := range []string{"empty", "loaded"} {
			for _, c := range cases {
				t.Run(fmt.Sprintf("%s/%s/%s", b, pre, c.name), func(t *testing.T) {
					s := openMem(t, b)
					if pre == "loaded" {
						if _, err := Load(context.Background(), s, smallOptions(t, smallNodes, smallEdges)); err != nil {
							t.Fatal(err)
						}
					}
					before := storagetest.Dump(t, s)
					opts := smallOptions(t, c.nodes, c.edges)
					opts.Strict, opts.Replace = c.strict, true
					_, err := Load(context.Background(), s, opts)
					if !errors.Is(err, c.kind) {
						t.Fatalf("err %v, want kind %v", err, c.kind)
					}
					if !strings.HasPrefix(err.Error(), c.msg) {
						t.Errorf("message %q, want prefix %q", err, c.msg)
					}
					if after := storagetest.Dump(t, s); after != before {
						t.Errorf("store changed by a failed load:\nbefore:\n%s\nafter:\n%s", before, after)
					}
				})
			}
		}
	}
}

// Ensure that unknown endpoints are skipped and counted without Strict.
func TestLoad_UnknownEndpointsCounted(t *testing.T) {
	s := openMem(t, storage.Pebble)
	rep, err := Load(context.Background(), s, smallOptions(t, smallNodes, "10 20\n20 99\n98 97\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (EdgeReport{Lines: 3, Kept: 1, UnknownEndpoints: 2}); rep.Edges != want {
		t.Errorf("edges %+v, want %+v", rep.Edges, want)
	}
}

// Ensure that a load into a store holding a graph is refused without
// Replace (store unchanged) and replaces the graph with it, with a higher
// version.
func TestLoad_ReplaceAndRefuse(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := openMem(t, b)
			ctx := context.Background()
			r1, err := Load(ctx, s, smallOptions(t, smallNodes, smallEdges))
			if err != nil {
				t.Fatal(err)
			}
			before := storagetest.Dump(t, s)
			if _, err := Load(ctx, s, smallOptions(t, smallNodes, "10 20\n")); !errors.Is(err, ErrGraphExists) {
				t.Fatalf("second load without Replace: %v", err)
			}
			if storagetest.Dump(t, s) != before {
				t.Fatal("refused load changed the store")
			}
			// Replace with a smaller graph: nothing of the old one may survive.
			opts := smallOptions(t, "id,group,label,f1,f2\n7,a,1,1,2\n8,b,0,3,4\n", "7 8\n")
			opts.Replace = true
			r2, err := Load(ctx, s, opts)
			if err != nil {
				t.Fatal(err)
			}
			if r2.Version <= r1.Version {
				t.Errorf("version %d after replace, was %d", r2.Version, r1.Version)
			}
			g, err := Open(s)
			if err != nil {
				t.Fatal(err)
			}
			checkGraph(t, g)
			v, _ := g.View()
			defer v.Close()
			if v.NumNodes() != 2 || v.NumEdges() != 1 {
				t.Errorf("replaced graph has %d nodes %d edges", v.NumNodes(), v.NumEdges())
			}
			if _, err := v.InternalID(10); !errors.Is(err, ErrUnknownID) {
				t.Errorf("old id 10 still mapped: %v", err)
			}
		})
	}
}

// Ensure that Replace refuses, before writing anything, while the store
// holds keys of an owner whose data depends on the graph (views, runs),
// naming them, and that it keeps keys it does not own.
func TestLoad_ReplaceRefusesDependents(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, "")
	if _, err := Load(ctx, s, smallOptions(t, smallNodes, smallEdges)); err != nil {
		t.Fatal(err)
	}
	put := func(k string) {
		b := s.NewBatch()
		defer b.Close()
		if err := errors.Join(b.Set([]byte(k), []byte{1}), b.Commit()); err != nil {
			t.Fatal(err)
		}
	}
	del := func(k string) {
		b := s.NewBatch()
		defer b.Close()
		if err := errors.Join(b.Delete([]byte(k)), b.Commit()); err != nil {
			t.Fatal(err)
		}
	}
	put("Vm")
	put("Tr\x00")
	put("Zforeign")
	before := storagetest.Dump(t, s)
	opts := smallOptions(t, "id,group,label,f1,f2\n7,a,1,1,2\n8,b,0,3,4\n", "7 8\n")
	opts.Replace = true
	_, err := Load(ctx, s, opts)
	if !errors.Is(err, ErrDependents) || !strings.Contains(err.Error(), "package query") || !strings.Contains(err.Error(), "package runs") {
		t.Fatalf("replace with views and runs: %v", err)
	}
	if storagetest.Dump(t, s) != before {
		t.Fatal("the refused replace changed the store")
	}
	del("Vm")
	if _, err := Load(ctx, s, opts); !errors.Is(err, ErrDependents) || strings.Contains(err.Error(), "package query") {
		t.Fatalf("replace with runs only: %v", err)
	}
	// Dropping them: bad input drops nothing, good input drops what Drop
	// names, and Drop must name a prefix that depends on the graph.
	put("Vm")
	bad := smallOptions(t, "id,group,label,f1,f2\n7,a,1,1,2\n7,b,0,3,4\n", "7 8\n")
	bad.Replace = true
	bad.Drop = []byte{PrefixViews, PrefixRuns}
	before = storagetest.Dump(t, s)
	if _, err := Load(ctx, s, bad); err == nil || storagetest.Dump(t, s) != before {
		t.Fatalf("bad input with Drop: %v, store changed %v", err, storagetest.Dump(t, s) != before)
	}
	for _, drop := range [][]byte{{prefixNode}, {'Z'}} {
		opts.Drop = drop
		if _, err := Load(ctx, s, opts); !errors.Is(err, ErrInvalid) || storagetest.Dump(t, s) != before {
			t.Fatalf("Drop %q: %v", drop, err)
		}
	}
	opts.Drop = bad.Drop
	if _, err := Load(ctx, s, opts); err != nil {
		t.Fatalf("replace with Drop: %v", err)
	}
	for _, k := range []string{"Vm", "Tr\x00"} {
		if _, err := s.Get([]byte(k)); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("%q survived: %v", k, err)
		}
	}
	if v, err := s.Get([]byte("Zforeign")); err != nil || len(v) != 1 {
		t.Fatalf("a key of no index prefix was touched: %v", err)
	}
}

// Ensure that a load cancelled in the write phase leaves the marker, that
// Open, Create, Update and a non-Replace Load report the incomplete load,
// and that Replace recovers.
func TestLoad_IncompleteInProcess(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := openMem(t, b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opts := smallOptions(t, smallNodes, smallEdges)
			opts.BatchBytes = 1 // one node per batch
			opts.AfterCommit = func(n int) {
				if n == 3 {
					cancel()
				}
			}
			if _, err := Load(ctx, s, opts); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled load: %v", err)
			}
			if _, err := Open(s); !errors.Is(err, ErrIncompleteLoad) {
				t.Fatalf("Open after interrupted load: %v", err)
			}
			if _, err := Create(s, Schema{}); !errors.Is(err, ErrIncompleteLoad) {
				t.Errorf("Create: %v", err)
			}
			if _, err := Load(context.Background(), s, smallOptions(t, smallNodes, smallEdges)); !errors.Is(err, ErrIncompleteLoad) {
				t.Errorf("Load without Replace: %v", err)
			}
			opts = smallOptions(t, smallNodes, smallEdges)
			opts.Replace = true
			if _, err := Load(context.Background(), s, opts); err != nil {
				t.Fatal(err)
			}
			g, err := Open(s)
			if err != nil {
				t.Fatal(err)
			}
			checkGraph(t, g)
		})
	}
}

// killEnv makes the test binary act as the loading child of
// TestLoad_KilledSubprocess.
const killEnv = "FASD_INDEX_TEST_KILL_CHILD"

// TestMain lets the test binary double as a loading subprocess.
func TestMain(m *testing.M) {
	if spec := os.Getenv(killEnv); spec != "" {
		os.Exit(runLoadChild(spec))
	}
	code := m.Run()
	for _, d := range genDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// runLoadChild loads the dump named in spec ("backend|db|nodes|edges") with
// tiny batches, prints "committed" after the third batch and then stalls
// forever inside the commit hook, waiting to be killed.
func runLoadChild(spec string) int {
	f := strings.Split(spec, "|")
	s, err := storage.Open(f[1], &storage.Options{Backend: storage.Backend(f[0])})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	opts := &LoadOptions{Nodes: f[2], Edges: f[3], Spec: smallSpec(), BatchBytes: 1, Split: SplitOptions{Mode: SplitNoSplit}}
	opts.AfterCommit = func(n int) {
		if n == 3 {
			fmt.Println("committed")
			os.Stdout.Sync()
			for {
				time.Sleep(time.Hour)
			}
		}
	}
	if _, err := Load(context.Background(), s, opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// Ensure that a load process killed (SIGKILL) after some batches were
// committed leaves a store that reopens with ErrIncompleteLoad, and that a
// Replace load recovers it.
func TestLoad_KilledSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a subprocess")
	}
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			dir := t.TempDir()
			nodes := writeFile(t, dir, "nodes.csv", smallNodes)
			edges := writeFile(t, dir, "edges.txt", smallEdges)
			db := filepath.Join(dir, "db")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), killEnv+"="+strings.Join([]string{string(b), db, nodes, edges}, "|"))
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || line != "committed\n" {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("child said %q (%v), stderr %s", line, err, stderr.String())
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			s, err := storage.Open(db, nil)
			if err != nil {
				t.Fatalf("reopen after kill: %v", err)
			}
			defer s.Close()
			if _, err := Open(s); !errors.Is(err, ErrIncompleteLoad) {
				t.Fatalf("Open after killed load: %v", err)
			}
			opts := &LoadOptions{Nodes: nodes, Edges: edges, Spec: smallSpec(), Replace: true}
			if _, err := Load(context.Background(), s, opts); err != nil {
				t.Fatal(err)
			}
			g, err := Open(s)
			if err != nil {
				t.Fatal(err)
			}
			checkGraph(t, g)
		})
	}
}

// Ensure that Load leaves no spill file and no goroutine behind, whether it
// succeeds, fails on bad node or edge input, or is cancelled in either
// phase, on both backends.
func TestLoad_NoLeftovers(t *testing.T) {
	badRow := strings.Replace(smallNodes, "30,a,-1,2.5,5", "30,a,-1,x,5", 1)
	cases := []struct {
		name, nodes, edges string
		cancelAt           int // cancel after this many commits (0: never)
		cancelFirst        bool
		wantErr            error
	}{
		{"ok", smallNodes, smallEdges, 0, false, nil},
		{"bad node", badRow, smallEdges, 0, false, dump.ErrNotNumber},
		{"bad node and bad edge", badRow, "10 x\n", 0, false, dump.ErrNotNumber},
		{"bad edge", smallNodes, "10 20\n10 x\n", 0, false, dump.ErrBadEdge},
		{"missing edge file", smallNodes, "", 0, false, os.ErrNotExist},
		{"cancelled before", smallNodes, smallEdges, 0, true, context.Canceled},
		{"cancelled writing", smallNodes, smallEdges, 4, false, context.Canceled},
	}
	for _, b := range backends {
		for _, c := range cases {
			for _, mem := range []int{0, 40, -1} { // in memory, crossing to a file, file
				t.Run(fmt.Sprintf("%s/%s/spill%d", b, c.name, mem), func(t *testing.T) {
					s := openMem(t, b)
					tmp := t.TempDir()
					opts := smallOptions(t, c.nodes, c.edges)
					if c.edges == "" {
						opts.Edges = filepath.Join(tmp, "none.txt")
					}
					opts.TempDir, opts.Replace, opts.BatchBytes, opts.SpillMemory = tmp, true, 1, mem
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					if c.cancelFirst {
						cancel()
					}
					opts.AfterCommit = func(n int) {
						if n == c.cancelAt {
							cancel()
						}
					}
					before := runtime.NumGoroutine()
					_, err := Load(ctx, s, opts)
					if !errors.Is(err, c.wantErr) || (err == nil) != (c.wantErr == nil) {
						t.Fatalf("err %v, want %v", err, c.wantErr)
					}
					if left, _ := os.ReadDir(tmp); len(left) != 0 {
						t.Errorf("left in the temporary directory: %v", left)
					}
					deadline := time.Now().Add(2 * time.Second)
					for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
						time.Sleep(10 * time.Millisecond)
					}
					if n := runtime.NumGoroutine(); n > before {
						t.Errorf("%d goroutines after Load, %d before", n, before)
					}
				})
			}
		}
	}
}

// Ensure that the spill in memory, in a file, or moved to a file midway
// gives the same graph, on both backends.
func TestLoad_SpillModes(t *testing.T) {
	for _, b := range backends {
		var want string
		for _, mem := range []int{0, 1, 100, -1} {
			s := openMem(t, b)
			opts := smallOptions(t, smallNodes, smallEdges)
			opts.SpillMemory, opts.TempDir = mem, t.TempDir()
			if _, err := Load(context.Background(), s, opts); err != nil {
				t.Fatal(err)
			}
			got := stripReport(t, s)
			if want == "" {
				want = got
			} else if got != want {
				t.Errorf("%s: SpillMemory %d gives\n%s\nwant\n%s", b, mem, got, want)
			}
		}
	}
}

// stripReport renders the store without the load report (it holds a time).
func stripReport(t *testing.T, st storage.Store) string {
	t.Helper()
	var keep []string
	for _, line := range strings.Split(storagetest.Dump(t, st), "\n") {
		if !strings.HasPrefix(line, fmt.Sprintf("%x=", keyLoad)) {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// Ensure that the write phase stores what the validation phase checked:
// a node file rewritten after pass 1 (here, while the edges are resolved)
// changes nothing in the loaded graph.
func TestLoad_NodeFileChangedAfterValidation(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			ref := openMem(t, b)
			if _, err := Load(context.Background(), ref, smallOptions(t, smallNodes, smallEdges)); err != nil {
				t.Fatal(err)
			}
			s := openMem(t, b)
			opts := smallOptions(t, smallNodes, smallEdges)
			changed := false
			opts.Progress = func(stage string, done, total int64) {
				if stage == "scan edges" && !changed {
					changed = true
					other := strings.ReplaceAll(smallNodes, ",b,", ",a,")
					if err := os.WriteFile(opts.Nodes, []byte(other), 0o644); err != nil {
						t.Error(err)
					}
				}
			}
			if _, err := Load(context.Background(), s, opts); err != nil {
				t.Fatal(err)
			}
			if !changed {
				t.Fatal("the node file was not rewritten")
			}
			if got, want := stripReport(t, s), stripReport(t, ref); got != want {
				t.Errorf("graph differs from the one validated:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// Ensure that in Strict mode an unknown endpoint before a malformed line is
// the error reported (file order), with its line counted over blank lines.
func TestLoad_EdgeErrorOrder(t *testing.T) {
	s := openMem(t, storage.Pebble)
	opts := smallOptions(t, smallNodes, "10 20\n\n\n20 99\n10 x\n")
	opts.Strict = true
	_, err := Load(context.Background(), s, opts)
	if !errors.Is(err, ErrUnknownEndpoint) || !strings.HasPrefix(err.Error(), "edges.txt:4: field 2:") {
		t.Errorf("got %v", err)
	}
	opts.Strict = false
	if _, err = Load(context.Background(), s, opts); !errors.Is(err, dump.ErrBadEdge) || !strings.HasPrefix(err.Error(), "edges.txt:5:") {
		t.Errorf("not strict: got %v", err)
	}
}

// Ensure that a node file big enough for the parallel pass 1 (more than one
// 1 MiB block) loads, and that a bad row deep inside it fails with its
// file:line and leaves the store unchanged, on both backends.
func TestLoad_LargeNodeFile(t *testing.T) {
	if testing.Short() {
		t.Skip("loads an 80,000-node file (1.3 MB)")
	}
	const rows = 80000
	var nb, eb strings.Builder
	nb.WriteString("id,group,label,f1,f2\n")
	for i := range rows {
		fmt.Fprintf(&nb, "%d,%s,%d,%d,%d.5\n", 1000+i, []string{"a", "b"}[i%2], i%3-1, i%2, i%7)
	}
	for i := range rows - 1 {
		fmt.Fprintf(&eb, "%d %d\n", 1000+i, 1000+i+1)
	}
	good := nb.String()
	bad := strings.Replace(good, "\n51234,", "\n51234x,", 1)
	if bad == good {
		t.Fatal("bad row not placed")
	}
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := openMem(t, b)
			rep, err := Load(context.Background(), s, smallOptions(t, good, eb.String()))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Nodes != rows || rep.Edges.Kept != rows-1 {
				t.Errorf("report %+v", rep)
			}
			before := storagetest.Dump(t, s)
			opts := smallOptions(t, bad, eb.String())
			opts.Replace = true
			_, err = Load(context.Background(), s, opts)
			// Data row 50234 (id 51234) is on line 50236.
			if !errors.Is(err, dump.ErrBadID) || !strings.HasPrefix(err.Error(), `nodes.csv:50236: column "id": bad node id`) {
				t.Errorf("got %v", err)
			}
			if storagetest.Dump(t, s) != before {
				t.Error("a failed load changed the store")
			}
		})
	}
}
