package pipeline

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/fasd-db/fasd/fasd"
)

// TestExportFBench writes the subgraphs of BenchmarkFStage (the 3,000-node
// Bail-shaped graph) as JSON to the file named by FASD_EXPORT_FBENCH, for
// docs/bench/f_torch.py, the same stage in PyTorch; without the variable
// it is skipped. Each subgraph: its global node ids, its adjacency and
// features as f reads them, its labels and which local nodes carry f's
// loss (training nodes with a label); then the validation nodes and every
// node's label.
func TestExportFBench(t *testing.T) {
	path := os.Getenv("FASD_EXPORT_FBENCH")
	if path == "" {
		t.Skip("FASD_EXPORT_FBENCH names no file")
	}
	cfg, err := Preset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	v, ev, d := fBenchInput(t, 3000, &cfg)
	type sg struct {
		Nodes []uint32  `json:"nodes"`
		A     []float32 `json:"a"`
		X     []float32 `json:"x"`
		Y     []int8    `json:"y"`
		W     []int8    `json:"w"`
	}
	out := struct {
		D   int      `json:"d"`
		Val []uint32 `json:"val"`
		Y   []int8   `json:"labels"`
		SGs []sg     `json:"sgs"`
	}{D: d, Val: ev.val, Y: ev.labels}
	for i, g := range v.sgs {
		x := make([]float32, g.N()*d)
		if err := v.fillX(i, x); err != nil {
			t.Fatal(err)
		}
		w := make([]int8, g.N())
		for u := range w {
			if g.Split[u] == fasd.SplitTrain && g.Y[u] >= 0 {
				w[u] = 1
			}
		}
		a, err := v.a(i, nil)
		if err != nil {
			t.Fatal(err)
		}
		out.SGs = append(out.SGs, sg{Nodes: g.Nodes, A: a, X: x, Y: g.Y, W: w})
	}
	b, _ := json.Marshal(out)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
