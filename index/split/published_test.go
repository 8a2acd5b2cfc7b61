package split_test

import (
	"context"
	"slices"
	"testing"

	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/index/split"
)

// sharedDir is the shared dataset folder, relative to this package.
const sharedDir = "../../../shared/datasets/"

// readPreset reads the node file of a preset from the shared datasets and
// returns the labelled rows by class and the sensitive values; it skips the
// test when the files are absent.
func readPreset(t *testing.T, name string) (p dump.Preset, byClass [2][]uint32, sens map[uint32]int8) {
	t.Helper()
	p, err := dump.LookupPreset(name)
	if err != nil {
		t.Fatal(err)
	}
	path, err := dump.FindFile(sharedDir+name, p.NodeFile)
	if err != nil {
		t.Skipf("%s dump not present: %v", name, err)
	}
	tab, err := dump.AnalyzeFile(context.Background(), path, p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := tab.OpenRows(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	sens = map[uint32]int8{}
	for rr.Next() {
		r := rr.Row()
		if r.Label >= 0 {
			byClass[r.Label] = append(byClass[r.Label], uint32(r.Index))
		}
		sens[uint32(r.Index)] = r.Sensitive
	}
	if rr.Err() != nil {
		t.Fatal(rr.Err())
	}
	return p, byClass, sens
}

func sum(x []uint32) (n int) {
	for _, v := range x {
		n += int(v)
	}
	return n
}

// Ensure that the DIG split of the real NBA dump gives 62/110/141.
func TestDIG_NBA(t *testing.T) {
	p, byClass, sens := readPreset(t, "nba")
	labelled := append(slices.Clone(byClass[0]), byClass[1]...)
	slices.Sort(labelled)
	if p.Split != dump.SplitDIG || p.DIG != split.NBA {
		t.Fatalf("nba preset split %q %+v", p.Split, p.DIG)
	}
	known := func(v uint32) bool { return sens[v] >= 0 }
	s, err := split.DIG(labelled, known, p.DIG, split.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if len(labelled) != 313 || len(s.Train) != 62 || len(s.Val) != 110 || len(s.Test) != 141 {
		t.Errorf("labelled %d, split %d/%d/%d, want 313, 62/110/141", len(labelled), len(s.Train), len(s.Val), len(s.Test))
	}
	split.CheckPartition(t, s, labelled, nil)
	// Reference values printed by CPython 3.11 for the same protocol.
	if !slices.Equal(s.Train[:5], []uint32{42, 345, 401, 20, 338}) || !slices.Equal(s.Val[:3], []uint32{71, 40, 112}) ||
		sum(s.Train) != 12679 || sum(s.Val) != 23019 || sum(s.Test) != 26337 {
		t.Errorf("split differs from CPython: train %v… (Σ %d), val %v… (Σ %d), test Σ %d",
			s.Train[:5], sum(s.Train), s.Val[:3], sum(s.Val), sum(s.Test))
	}
}

// Ensure that the NIFTY split of the real German credit dump gives
// 100/250/250 and the very nodes of NIFTY's load_german.
func TestNIFTY_German(t *testing.T) {
	p, byClass, _ := readPreset(t, "german")
	if p.Split != dump.SplitNIFTY || p.LabelNumber != 100 {
		t.Fatalf("german preset split %q label number %d", p.Split, p.LabelNumber)
	}
	if len(byClass[0]) != 300 || len(byClass[1]) != 700 {
		t.Fatalf("classes %d/%d, want 300/700", len(byClass[0]), len(byClass[1]))
	}
	s, err := split.NIFTY(byClass[0], byClass[1], nil, p.LabelNumber, split.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Train) != 100 || len(s.Val) != 250 || len(s.Test) != 250 {
		t.Errorf("split %d/%d/%d, want 100/250/250", len(s.Train), len(s.Val), len(s.Test))
	}
	all := append(slices.Clone(byClass[0]), byClass[1]...)
	split.CheckPartition(t, s, all, nil)
	// Reference values printed by CPython 3.11 running load_german's split
	// (random.seed(20); shuffle class 0; shuffle class 1; cut) on the file.
	if !slices.Equal(s.Train[:5], []uint32{953, 963, 642, 918, 611}) || !slices.Equal(s.Train[50:55], []uint32{433, 23, 637, 396, 264}) ||
		!slices.Equal(s.Val[:3], []uint32{561, 633, 610}) || !slices.Equal(s.Test[:3], []uint32{127, 598, 120}) ||
		sum(s.Train) != 47904 || sum(s.Val) != 122552 || sum(s.Test) != 119242 {
		t.Errorf("split differs from CPython: train %v… %v… (Σ %d), val %v… (Σ %d), test %v… (Σ %d)",
			s.Train[:5], s.Train[50:55], sum(s.Train), s.Val[:3], sum(s.Val), s.Test[:3], sum(s.Test))
	}
}
