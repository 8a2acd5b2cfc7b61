package dump

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// Ensure that a dump written with NodeWriter and EdgeWriter, plain and gzip,
// reads back to the same ids, attributes, unscaled features and edges.
func TestWriter_RoundTrip(t *testing.T) {
	h := Header{ID: "user_id", Sensitive: "sens", Label: "label",
		Features: []string{"a b", "c,d", `e"f`, "g%/-()"}}
	type node struct {
		id   int64
		s, y int8
		f    []float32
	}
	nodes := []node{
		{1 << 40, 0, 1, []float32{0, 1, -1.5, 3.1415927}},
		{-7, 1, -1, []float32{1e-30, -3e38, 0.1, 1}},
		{42, -1, 0, []float32{float32(math.SmallestNonzeroFloat32), 2, 1e10, -0}},
	}
	edges := [][2]int64{{1 << 40, -7}, {42, 1 << 40}}
	dir := t.TempDir()
	for _, ext := range []string{"", ".gz"} {
		np, ep := filepath.Join(dir, "n.csv"+ext), filepath.Join(dir, "e.txt"+ext)
		out, err := Create(np)
		if err != nil {
			t.Fatal(err)
		}
		nw, err := NewNodeWriter(out, h)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			if err := nw.WriteRow(n.id, n.s, n.y, n.f); err != nil {
				t.Fatal(err)
			}
		}
		if err := nw.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		out, err = Create(ep)
		if err != nil {
			t.Fatal(err)
		}
		ew := NewEdgeWriter(out)
		for _, e := range edges {
			ew.WriteEdge(e[0], e[1])
		}
		if err := ew.Flush(); err != nil {
			t.Fatal(err)
		}
		out.Close()

		raw, _ := os.ReadFile(np)
		if gz := len(raw) > 1 && raw[0] == 0x1f && raw[1] == 0x8b; gz != (ext == ".gz") {
			t.Errorf("%s: gzip = %v", np, gz)
		}
		tab, err := AnalyzeFile(context.Background(), np, h.Spec(false))
		if err != nil {
			t.Fatal(err)
		}
		rr, err := tab.OpenRows(np)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for rr.Next() {
			r, n := rr.Row(), nodes[i]
			if r.ID != n.id || r.Sensitive != n.s || r.Label != n.y {
				t.Errorf("row %d: %+v, want %+v", i, r, n)
			}
			for j := range n.f {
				if r.Features[j] != n.f[j] {
					t.Errorf("row %d feature %d: %v, want %v", i, j, r.Features[j], n.f[j])
				}
			}
			i++
		}
		rr.Close()
		if rr.Err() != nil || i != len(nodes) {
			t.Fatalf("%d rows, %v", i, rr.Err())
		}
		er, err := OpenEdges(ep)
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for er.Next() {
			u, v := er.Edge()
			if u != edges[k][0] || v != edges[k][1] {
				t.Errorf("edge %d: %d %d", k, u, v)
			}
			if _, ok := tab.Resolve(u); !ok {
				t.Errorf("edge %d: endpoint %d unknown", k, u)
			}
			k++
		}
		er.Close()
		if er.Err() != nil || k != len(edges) {
			t.Errorf("%d edges, %v", k, er.Err())
		}
	}
}

// Ensure that the writer refuses bad headers and non-finite features.
func TestNodeWriter_Refuses(t *testing.T) {
	var b bytes.Buffer
	if _, err := NewNodeWriter(&b, Header{Sensitive: "s", Label: "s"}); err == nil {
		t.Error("repeated column accepted")
	}
	nw, err := NewNodeWriter(&b, Header{Sensitive: "s", Label: "y", Features: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := nw.WriteRow(0, 0, 0, []float32{float32(math.NaN())}); err == nil {
		t.Error("NaN accepted")
	}
	if err := nw.WriteRow(0, 0, 0, nil); err == nil {
		t.Error("short row accepted")
	}
}
