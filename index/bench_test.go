package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/index/synth"
	"github.com/fasd-db/fasd/storage"
)

// Big-data benchmarks (the Pokec-z sized graph) run only with
// FASD_BENCH_LARGE=1; the others use the small synthetic graph.
const largeEnv = "FASD_BENCH_LARGE"

func large() bool { return os.Getenv(largeEnv) == "1" }

// genDump writes the synthetic preset into a directory shared by all
// benchmarks of the run and returns the load options for it.
var (
	genMu   sync.Mutex
	genDirs = map[string]string{}
)

func genDump(b *testing.B, preset string) *LoadOptions {
	b.Helper()
	genMu.Lock()
	defer genMu.Unlock()
	dir, ok := genDirs[preset]
	if !ok {
		var err error
		if dir, err = os.MkdirTemp("", "fasd-bench-"+preset); err != nil {
			b.Fatal(err)
		}
		cfg, err := synth.Preset(preset)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := synth.Write(context.Background(), dir, cfg, nil); err != nil {
			b.Fatal(err)
		}
		genDirs[preset] = dir
	}
	p, err := dump.LookupPreset("synth")
	if err != nil {
		b.Fatal(err)
	}
	return &LoadOptions{
		Nodes: filepath.Join(dir, p.NodeFile), Edges: filepath.Join(dir, p.EdgeFile),
		Spec: p.Spec, Source: "synth-" + preset, Split: PresetSplit(p),
	}
}

// BenchmarkLoad measures the load throughput into an on-disk store opened
// as fasd load opens it (NoSync), per backend; edges/s counts the lines of
// the edge file. With FASD_BENCH_LARGE=1 it uses the Pokec-z sized graph.
func BenchmarkLoad(b *testing.B) {
	preset := "small"
	if large() {
		preset = "pokec"
	}
	for _, backend := range backends {
		b.Run(fmt.Sprintf("%s/%s", preset, backend), func(b *testing.B) {
			opts := genDump(b, preset)
			var lines int
			var elapsed, cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				dir := b.TempDir()
				s, err := storage.Open(filepath.Join(dir, "db"), &storage.Options{Backend: backend, NoSync: true})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start, cpu0 := time.Now(), cpuTime()
				rep, err := Load(context.Background(), s, opts)
				if err == nil {
					err = s.Close()
				}
				elapsed += time.Since(start)
				cpu += cpuTime() - cpu0
				if err != nil {
					b.Fatal(err)
				}
				lines += rep.Edges.Lines
			}
			b.ReportMetric(float64(lines)/elapsed.Seconds(), "edges/s")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// cpuTime returns the user+system CPU time of the process so far, all
// goroutines (the store's background work included). The machine is
// shared, so it is a steadier figure than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssEnv makes the test binary a load child for BenchmarkLoadRSS.
const rssEnv = "FASD_INDEX_BENCH_RSS_CHILD"

func init() {
	// Runs before TestMain: the RSS child must not start the test framework.
	if spec := os.Getenv(rssEnv); spec != "" {
		os.Exit(runRSSChild(spec))
	}
}

func runRSSChild(spec string) int {
	f := strings.Split(spec, "|") // backend|db|nodes|edges
	s, err := storage.Open(f[1], &storage.Options{Backend: storage.Backend(f[0]), NoSync: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p, _ := dump.LookupPreset("synth")
	_, err = Load(context.Background(), s, &LoadOptions{Nodes: f[2], Edges: f[3], Spec: p.Spec, Split: PresetSplit(p)})
	if err == nil {
		err = s.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	hwm, err := peakRSSKiB()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("peak-rss-kib %d\n", hwm)
	return 0
}

// peakRSSKiB returns the peak resident set size of this process's own
// address space (VmHWM in /proc/self/status, Linux). Unlike ru_maxrss of a
// child, it does not include the parent's memory, which a child spawned
// with vfork shares until exec and which Linux carries into ru_maxrss.
func peakRSSKiB() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kib int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kib); err != nil {
				return 0, fmt.Errorf("VmHWM %q: %w", rest, err)
			}
			return kib, nil
		}
	}
	return 0, errors.New("no VmHWM in /proc/self/status")
}

// BenchmarkLoadRSS runs each load in a child process and reports its peak
// resident set size (the child's VmHWM, Linux only) and its CPU time.
func BenchmarkLoadRSS(b *testing.B) {
	preset := "small"
	if large() {
		preset = "pokec"
	}
	for _, backend := range backends {
		b.Run(fmt.Sprintf("%s/%s", preset, backend), func(b *testing.B) {
			opts := genDump(b, preset)
			var maxRSS int64
			var cpu time.Duration
			for b.Loop() {
				db := filepath.Join(b.TempDir(), "db")
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), rssEnv+"="+strings.Join([]string{string(backend), db, opts.Nodes, opts.Edges}, "|"))
				out, err := cmd.CombinedOutput()
				if err != nil {
					b.Fatalf("child: %v\n%s", err, out)
				}
				var kib int64
				if _, err := fmt.Sscanf(string(out), "peak-rss-kib %d", &kib); err != nil {
					b.Fatalf("child output %q: %v", out, err)
				}
				maxRSS = max(maxRSS, kib)
				ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
			b.ReportMetric(float64(maxRSS)/1024, "peak-RSS-MiB")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// loadedView loads the preset into an on-disk store of backend and returns
// a view of it: of the store that did the load, or, with reopen, of the
// store closed after the load and opened again (as a query process would
// find it).
func loadedView(b *testing.B, backend storage.Backend, preset string, reopen bool) *View {
	b.Helper()
	opts := genDump(b, preset)
	dir := filepath.Join(b.TempDir(), "db")
	s, err := storage.Open(dir, &storage.Options{Backend: backend, NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Load(context.Background(), s, opts); err != nil {
		s.Close()
		b.Fatal(err)
	}
	if reopen {
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		if s, err = storage.Open(dir, &storage.Options{NoSync: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() { s.Close() })
	g, err := Open(s)
	if err != nil {
		b.Fatal(err)
	}
	v, err := g.View()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { v.Close() })
	return v
}

// readModes name the stores the read benchmarks use: "" right after the
// load, "reopened" after closing and opening it again.
var readModes = []string{"", "reopened"}

func readName(preset string, backend storage.Backend, mode, suffix string) string {
	name := preset + "/" + string(backend)
	if mode != "" {
		name += "/" + mode
	}
	if suffix != "" {
		name += "/" + suffix
	}
	return name
}

func benchPreset() string {
	if large() {
		return "pokec"
	}
	return "small"
}

// BenchmarkSampleNeighbors draws k=10 neighbours of a random node per op
// from the store.
func BenchmarkSampleNeighbors(b *testing.B) {
	for _, backend := range backends {
		for _, mode := range readModes {
			b.Run(readName(benchPreset(), backend, mode, "k10"), func(b *testing.B) {
				v := loadedView(b, backend, benchPreset(), mode != "")
				rng := rand.New(rand.NewPCG(1, 2))
				n := v.NumNodes()
				buf := make([]uint32, 0, 10)
				b.ReportAllocs()
				for b.Loop() {
					var err error
					buf, err = v.SampleNeighbors(uint32(rng.IntN(n)), 10, rng, buf[:0])
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkBall2 computes the 2-hop ball of a random node per op.
func BenchmarkBall2(b *testing.B) {
	for _, backend := range backends {
		for _, mode := range readModes {
			b.Run(readName(benchPreset(), backend, mode, ""), func(b *testing.B) {
				v := loadedView(b, backend, benchPreset(), mode != "")
				rng := rand.New(rand.NewPCG(3, 4))
				n := v.NumNodes()
				var size uint64
				b.ReportAllocs()
				for b.Loop() {
					ball, err := v.Ball(uint32(rng.IntN(n)), 2)
					if err != nil {
						b.Fatal(err)
					}
					size += ball.GetCardinality()
				}
				b.ReportMetric(float64(size)/float64(b.N), "nodes/ball")
			})
		}
	}
}

// BenchmarkViewNode reads the record and split of a random node per op, as
// reading every node for training does (the split bitmaps are decoded on
// the view's first call only).
func BenchmarkViewNode(b *testing.B) {
	for _, backend := range backends {
		b.Run(readName(benchPreset(), backend, "", ""), func(b *testing.B) {
			v := loadedView(b, backend, benchPreset(), false)
			rng := rand.New(rand.NewPCG(5, 6))
			n := v.NumNodes()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Node(uint32(rng.IntN(n))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
