package index

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// Ensure that every degenerate dump is refused with ErrDegenerate and a
// message naming its cause, before anything is written: a store holding a
// graph is left byte for byte as it was even with Replace; and that the
// override options load what may be meant.
func TestLoad_Guards(t *testing.T) {
	const header = "id,group,label,f1,f2\n"
	cases := []struct {
		name         string
		nodes, edges string
		spec         func(*dump.Spec)
		allow        func(*LoadOptions) // nil: no override exists
		msg          []string
	}{
		{"header-only node file", header, smallEdges, nil, nil,
			[]string{"nodes.csv has a header but no data rows"}},
		{"one label class", strings.ReplaceAll(smallNodes, ",0,", ",1,"), smallEdges, nil,
			func(o *LoadOptions) { o.AllowSingleClass = true },
			[]string{"every labelled node of nodes.csv has class 1 (5 nodes, 1 unlabelled", "--label-values 1=1,-1=0", "--allow-single-class"}},
		{"no labelled node", header + "10,a,-1,1,2\n20,b,-1,2,3\n", "10 20\n", nil,
			func(o *LoadOptions) { o.AllowSingleClass = true },
			[]string{"no node of nodes.csv is labelled", "2 unlabelled", "--allow-single-class"}},
		{"German -1 read as unlabelled", header + "10,a,1,1,2\n20,b,-1,2,3\n30,a,-1,3,4\n", "10 20\n20 30\n", nil,
			func(o *LoadOptions) { o.AllowSingleClass = true },
			[]string{"has class 1 (1 nodes, 2 unlabelled", "--label-values"}},
		{"one sensitive group", strings.ReplaceAll(smallNodes, ",b,", ",a,"), smallEdges, nil,
			func(o *LoadOptions) { o.AllowSingleGroup = true },
			[]string{"in group 0 (6 nodes, 0 unknown; sensitive column \"group\")", "--allow-single-group"}},
		{"numeric sensitive threshold", smallNodes, smallEdges,
			func(s *dump.Spec) {
				s.Sensitive, s.Exclude = dump.SensitiveSpec{Column: "f2", Threshold: 100}, []string{"group"}
			},
			func(o *LoadOptions) { o.AllowSingleGroup = true },
			[]string{"in group 0", "values > 100 in group 1", "--sens-threshold"}},
		{"empty edge file", smallNodes, "", nil,
			func(o *LoadOptions) { o.AllowNoEdges = true },
			[]string{"edges.txt holds no edge line", "--allow-no-edges"}},
		{"blank edge file", smallNodes, "\n\n", nil,
			func(o *LoadOptions) { o.AllowNoEdges = true },
			[]string{"edges.txt holds no edge line"}},
		{"row mode drops every edge", smallNodes, smallEdges,
			func(s *dump.Spec) { s.Endpoints = dump.EndpointsRow },
			func(o *LoadOptions) { o.AllowNoEdges = true },
			[]string{"all 7 edge lines of edges.txt name an endpoint that is not a node of nodes.csv",
				"0-based row indices", `id column "id", use --edge-ids id`}},
		{"id mode drops every edge", smallNodes, "0 1\n2 3\n", nil,
			func(o *LoadOptions) { o.AllowNoEdges = true },
			[]string{"all 2 edge lines", "node ids (--edge-ids id)", "use --edge-ids row"}},
		{"only self-loops", smallNodes, "10 10\n20 20\n", nil,
			func(o *LoadOptions) { o.AllowNoEdges = true },
			[]string{"all 2 edge lines of edges.txt are self-loops"}},
		{"self-loops and unknown endpoints", smallNodes, "10 10\n20 99\n", nil,
			func(o *LoadOptions) { o.AllowNoEdges = true },
			[]string{"no edge of edges.txt is kept (2 lines: 1 self-loops, 1 with an unknown endpoint)"}},
	}
	ctx := context.Background()
	for _, b := range backends {
		for _, c := range cases {
			t.Run(string(b)+"/"+c.name, func(t *testing.T) {
				s := openMem(t, b)
				if _, err := Load(ctx, s, smallOptions(t, smallNodes, smallEdges)); err != nil {
					t.Fatal(err)
				}
				before := storagetest.Dump(t, s)
				opts := smallOptions(t, c.nodes, c.edges)
				opts.Replace = true
				if c.spec != nil {
					c.spec(&opts.Spec)
				}
				_, err := Load(ctx, s, opts)
				if !errors.Is(err, ErrDegenerate) {
					t.Fatalf("got %v, want ErrDegenerate", err)
				}
				for _, m := range c.msg {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("message %q lacks %q", err, m)
					}
				}
				if storagetest.Dump(t, s) != before {
					t.Fatal("refused load changed the store")
				}
				if c.allow == nil {
					return
				}
				c.allow(opts)
				rep, err := Load(ctx, s, opts)
				if err != nil {
					t.Fatalf("with the override: %v", err)
				}
				g, err := Open(s)
				if err != nil {
					t.Fatal(err)
				}
				checkGraph(t, g)
				if rep.Nodes == 0 {
					t.Errorf("report %+v", rep)
				}
			})
		}
	}
}

// Ensure that several problems are reported together.
func TestLoad_GuardsJoined(t *testing.T) {
	s := openMem(t, storage.Pebble)
	nodes := "id,group,label,f1,f2\n10,a,1,1,2\n20,a,1,2,3\n"
	_, err := Load(context.Background(), s, smallOptions(t, nodes, ""))
	for _, m := range []string{"class 1", "group 0", "no edge line"} {
		if !errors.Is(err, ErrDegenerate) || !strings.Contains(err.Error(), m) {
			t.Errorf("message %v lacks %q", err, m)
		}
	}
}

// Ensure that Load with the NIFTY split stores the per-class split and
// PresetSplit gives each preset's split.
func TestLoad_NIFTYSplit(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("id,group,label,f1,f2\n")
	for i := range 40 {
		y := 0
		if i%4 != 0 {
			y = 1
		}
		sb.WriteString(strings.Join([]string{strconv.Itoa(100 + i), []string{"a", "b"}[i%2], strconv.Itoa(y), strconv.Itoa(i), "1"}, ",") + "\n")
	}
	opts := smallOptions(t, sb.String(), "100 101\n101 102\n")
	opts.Split = SplitOptions{Mode: SplitNIFTY, LabelNumber: 6}
	s := openMem(t, storage.Pebble)
	rep, err := Load(context.Background(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	// 10 of class 0, 30 of class 1: train min(5, 3) + min(15, 3), val
	// (7-5) + (22-15), test (10-7) + (30-22).
	if (rep.Splits != SplitCounts{Train: 6, Val: 9, Test: 11}) {
		t.Errorf("splits %+v", rep.Splits)
	}
	opts.Split.LabelNumber = 0
	opts.Replace = true
	if _, err := Load(context.Background(), s, opts); !errors.Is(err, ErrInvalid) {
		t.Errorf("label number 0: %v", err)
	}
	for _, name := range dump.PresetNames() {
		p, _ := dump.LookupPreset(name)
		so := PresetSplit(p)
		switch p.Split {
		case dump.SplitNIFTY:
			if so.Mode != SplitNIFTY || so.LabelNumber != p.LabelNumber {
				t.Errorf("%s: %+v", name, so)
			}
		default:
			if so.Mode != SplitDIG || so.Params != p.DIG {
				t.Errorf("%s: %+v", name, so)
			}
		}
	}
}
