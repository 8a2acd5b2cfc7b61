package dump_test

import (
	"context"
	"os"
	"testing"

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
			b.ReportMetric(float64(st.Nodes)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
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
