package dump_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/index/synth"
)

// benchDump writes a synthetic dump once per benchmark: the small preset, or
// the Pokec-sized one when FASD_BENCH_POKEC is set (opt-in: ~45 MB).
func benchDump(b *testing.B, gz bool) (synth.Files, synth.Stats) {
	b.Helper()
	cfg := synth.Small()
	if os.Getenv("FASD_BENCH_POKEC") != "" {
		cfg = synth.Pokec()
	}
	f, st, err := synth.Write(context.Background(), b.TempDir(), cfg, &synth.Options{Gzip: gz})
	if err != nil {
		b.Fatal(err)
	}
	return f, st
}

// cpuTime returns the user+system CPU time of the process so far; the
// benchmarks report it per op (the machine is shared, so wall time is noisy).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func gzName(gz bool) string {
	if gz {
		return "gzip"
	}
	return "plain"
}

// BenchmarkNodes measures both passes over a node file (rows/s in the
// custom metric).
func BenchmarkNodes(b *testing.B) {
	for _, gz := range []bool{false, true} {
		b.Run(gzName(gz), func(b *testing.B) {
			f, st := benchDump(b, gz)
			p, _ := dump.LookupPreset("synth")
			fi, _ := os.Stat(f.Nodes)
			b.SetBytes(fi.Size())
			cpu0 := cpuTime()
			for b.Loop() {
				tab, err := dump.AnalyzeFile(context.Background(), f.Nodes, p.Spec)
				if err != nil {
					b.Fatal(err)
				}
				rr, err := tab.OpenRows(f.Nodes)
				if err != nil {
					b.Fatal(err)
				}
				for rr.Next() {
				}
				rr.Close()
				if rr.Err() != nil {
					b.Fatal(rr.Err())
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(st.Nodes)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkNodesSpill measures pass 1 with a spill to a temporary file and
// pass 2 from the spill, as index.Load does (rows/s in the custom metric).
func BenchmarkNodesSpill(b *testing.B) {
	f, st := benchDump(b, false)
	p, _ := dump.LookupPreset("synth")
	fi, _ := os.Stat(f.Nodes)
	b.SetBytes(fi.Size())
	cpu0 := cpuTime()
	for b.Loop() {
		tmp, err := os.CreateTemp(b.TempDir(), "spill")
		if err != nil {
			b.Fatal(err)
		}
		bw := bufio.NewWriterSize(tmp, 1<<20)
		in, err := dump.Open(f.Nodes)
		if err != nil {
			b.Fatal(err)
		}
		tab, err := dump.AnalyzeSpill(context.Background(), in, in.Name(), p.Spec, bw)
		in.Close()
		if err == nil {
			err = bw.Flush()
		}
		if err == nil {
			_, err = tmp.Seek(0, io.SeekStart)
		}
		if err != nil {
			b.Fatal(err)
		}
		rr := tab.NewSpillReader(bufio.NewReaderSize(tmp, 1<<20))
		for rr.Next() {
		}
		tmp.Close()
		if rr.Err() != nil {
			b.Fatal(rr.Err())
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(st.Nodes)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkEdges measures reading an edge list (edges/s in the custom
// metric).
func BenchmarkEdges(b *testing.B) {
	for _, gz := range []bool{false, true} {
		b.Run(gzName(gz), func(b *testing.B) {
			f, st := benchDump(b, gz)
			fi, _ := os.Stat(f.Edges)
			b.SetBytes(fi.Size())
			for b.Loop() {
				er, err := dump.OpenEdges(f.Edges)
				if err != nil {
					b.Fatal(err)
				}
				for er.Next() {
				}
				er.Close()
				if er.Err() != nil {
					b.Fatal(er.Err())
				}
			}
			b.ReportMetric(float64(st.EdgeLines)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}
