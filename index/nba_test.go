package index

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/fasd-db/fasd/index/dump"
)

// nbaDir is the shared NBA dump, relative to this package.
var nbaDir = filepath.Join("..", "..", "shared", "datasets", "nba")

func nbaOptions(t testing.TB) *LoadOptions {
	t.Helper()
	if _, err := os.Stat(nbaDir); errors.Is(err, fs.ErrNotExist) {
		t.Skip("shared NBA dump not present")
	}
	p, err := dump.LookupPreset("nba")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := dump.FindFile(nbaDir, p.NodeFile)
	if err != nil {
		t.Fatal(err)
	}
	edges, err := dump.FindFile(nbaDir, p.EdgeFile)
	if err != nil {
		t.Fatal(err)
	}
	return &LoadOptions{Nodes: nodes, Edges: edges, Spec: p.Spec, Source: "nba", Split: PresetSplit(p)}
}

// Ensure that loading the NBA dump gives the published figures on both
// backends and a graph that passes Check.
func TestLoad_NBA(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			opts := nbaOptions(t)
			s := openMem(t, b)
			rep, err := Load(context.Background(), s, opts)
			if err != nil {
				t.Fatal(err)
			}
			want := EdgeReport{Lines: 16570, Kept: 10621, Duplicates: 5949}
			if rep.Edges != want {
				t.Errorf("edges %+v, want %+v", rep.Edges, want)
			}
			if rep.Nodes != 403 || rep.Features != 95 {
				t.Errorf("nodes %d features %d, want 403 95", rep.Nodes, rep.Features)
			}
			if (rep.Splits != SplitCounts{Train: 62, Val: 110, Test: 141}) {
				t.Errorf("splits %+v, want 62/110/141", rep.Splits)
			}
			g, err := Open(s)
			if err != nil {
				t.Fatal(err)
			}
			checkGraph(t, g)
			v, err := g.View()
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			st, err := v.Stats(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Nodes != 403 || st.Edges != 10621 || st.Features != 95 || st.Isolated != 3 {
				t.Errorf("stats %+v", st)
			}
			if (st.Groups != GroupCounts{G0: 296, G1: 107}) {
				t.Errorf("groups %+v", st.Groups)
			}
			if (st.Labels != LabelCounts{Y0: 154, Y1: 159, Unlabelled: 90}) {
				t.Errorf("labels %+v", st.Labels)
			}
			// Joint counts from the dataset README.
			if (st.LabelsByGroup.G0 != LabelCounts{Y0: 111, Y1: 119, Unlabelled: 66}) || (st.LabelsByGroup.G1 != LabelCounts{Y0: 43, Y1: 40, Unlabelled: 24}) {
				t.Errorf("labels by group %+v", st.LabelsByGroup)
			}
			t.Logf("homophily %+v", st.Homophily)
		})
	}
}
