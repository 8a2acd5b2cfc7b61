package split

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fasd-db/fasd/index/dump"
)

// Ensure that the generator reproduces CPython 3.11 outputs (values printed
// by python3 -c "import random; random.seed(S); ...").
func TestMT19937_CPython(t *testing.T) {
	cases := []struct {
		seed uint64
		want []uint32
	}{
		{20, []uint32{3889692776, 3104401924, 2947439163, 3378761696, 3292132170}},
		{0, []uint32{3626764237, 1654615998, 3255389356}},
		{1, []uint32{577090037, 2444712010, 3639700191}},
		{1<<32 + 7, []uint32{968553300, 3287823873, 1540179448}},
		{1<<63 + 12345, []uint32{1308997459, 1668775168, 912389232}},
	}
	for _, c := range cases {
		m := NewMT19937(c.seed)
		for i, w := range c.want {
			if got := m.Uint32(); got != w {
				t.Errorf("seed %d output %d: %d, want %d", c.seed, i, got, w)
			}
		}
	}
	// random.seed(20); random.random(), getrandbits(64), getrandbits(40), randrange(1000)
	m := NewMT19937(20)
	if got := m.Random(); got != 0.9056396761745207 {
		t.Errorf("random() = %v", got)
	}
	if got := m.GetRandBits(64); got != 14511670988244933179 {
		t.Errorf("getrandbits(64) = %d", got)
	}
	if got := m.GetRandBits(40); got != 969659773770 {
		t.Errorf("getrandbits(40) = %d", got)
	}
	if got := m.RandBelow(1000); got != 926 {
		t.Errorf("randbelow(1000) = %d", got)
	}
}

// Ensure that Shuffle matches random.shuffle: the check sequence of
// method.md §1 and a full permutation.
func TestMT19937_Shuffle(t *testing.T) {
	perm := func(seed uint64, n int) []int {
		x := make([]int, n)
		for i := range x {
			x[i] = i
		}
		NewMT19937(seed).Shuffle(n, func(i, j int) { x[i], x[j] = x[j], x[i] })
		return x
	}
	got := perm(20, 313)
	if want := []int{33, 272, 311, 14, 266, 161, 300, 233, 238, 259}; !slices.Equal(got[:10], want) {
		t.Errorf("n=313 head %v, want %v", got[:10], want)
	}
	if want := []int{293, 167, 51, 133, 77}; !slices.Equal(got[308:], want) {
		t.Errorf("n=313 tail %v, want %v", got[308:], want)
	}
	if want := []int{17, 15, 11, 18, 7, 6, 19, 3, 14, 0, 9, 5, 16, 8, 13, 2, 1, 12, 4, 10}; !slices.Equal(perm(7, 20), want) {
		t.Errorf("seed 7 n=20: %v", perm(7, 20))
	}
}

// Ensure that RandBelow stays in range and hits every value (a property over
// many draws; rejection must not bias away from the top value).
func TestMT19937_RandBelow(t *testing.T) {
	m := NewMT19937(3)
	for _, n := range []int{1, 2, 3, 5, 7, 8, 9, 1 << 20, 1<<32 + 1, 1<<62 + 3} {
		seen := map[int]bool{}
		for range 2000 {
			r := m.RandBelow(n)
			if r < 0 || r >= n {
				t.Fatalf("RandBelow(%d) = %d", n, r)
			}
			seen[r] = true
		}
		if n <= 9 && len(seen) != n {
			t.Errorf("RandBelow(%d) hit %d values", n, len(seen))
		}
	}
}

func checkPartition(t *testing.T, s Split, labelled []uint32, known func(uint32) bool) {
	t.Helper()
	seen := map[uint32]int{}
	for _, part := range [][]uint32{s.Train, s.Val, s.Test} {
		for _, v := range part {
			seen[v]++
		}
	}
	in := map[uint32]bool{}
	for _, v := range labelled {
		in[v] = true
	}
	for v, n := range seen {
		if n != 1 || !in[v] {
			t.Errorf("node %d appears %d times (labelled %v)", v, n, in[v])
		}
	}
	for _, v := range s.Test {
		if known != nil && !known(v) {
			t.Errorf("test node %d has unknown sensitive attribute", v)
		}
	}
}

// Ensure that the DIG split on 313 labelled nodes gives 62/110/141, caps
// training, drops unknown-sensitive test nodes and refuses bad input.
func TestDIG(t *testing.T) {
	l := make([]uint32, 313)
	for i := range l {
		l[i] = uint32(2 * i)
	}
	s, err := DIG(l, nil, NBA, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Train) != 62 || len(s.Val) != 110 || len(s.Test) != 141 {
		t.Errorf("sizes %d/%d/%d", len(s.Train), len(s.Val), len(s.Test))
	}
	if s.Train[0] != 2*33 || s.Train[1] != 2*272 {
		t.Errorf("train starts %v", s.Train[:2])
	}
	checkPartition(t, s, l, nil)

	known := func(v uint32) bool { return v%3 != 0 }
	s, _ = DIG(l, known, Params{A: 0.5, B: 0.6, Cap: 10}, DefaultSeed)
	if len(s.Train) != 10 || len(s.Val) != 187-156 {
		t.Errorf("capped sizes %d/%d", len(s.Train), len(s.Val))
	}
	checkPartition(t, s, l, known)
	for _, v := range s.Test {
		if v%3 == 0 {
			t.Fatal("unknown node in test")
		}
	}
	if _, err := DIG([]uint32{3, 1}, nil, NBA, 20); !errors.Is(err, ErrParams) {
		t.Errorf("unsorted: %v", err)
	}
	if _, err := DIG(l, nil, Params{A: 0.6, B: 0.5}, 20); !errors.Is(err, ErrParams) {
		t.Errorf("A > B: %v", err)
	}
	if s, err := DIG(nil, nil, Pokec, 20); err != nil || len(s.Train)+len(s.Val)+len(s.Test) != 0 {
		t.Errorf("empty: %v %v", s, err)
	}
	if p, err := ParamsFor("pokec"); err != nil || p != Pokec {
		t.Errorf("ParamsFor(pokec) = %v %v", p, err)
	}
	if _, err := ParamsFor("x"); !errors.Is(err, ErrParams) {
		t.Errorf("ParamsFor(x) = %v", err)
	}
}

// Ensure that Random is deterministic for a seed, honours the fractions and
// partitions its input.
func TestRandom(t *testing.T) {
	l := make([]uint32, 1000)
	for i := range l {
		l[i] = uint32(i)
	}
	known := func(v uint32) bool { return v%10 != 0 }
	s1, err := Random(l, known, Fractions{Train: 0.5, Val: 0.25}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := Random(l, known, Fractions{Train: 0.5, Val: 0.25}, rand.New(rand.NewPCG(1, 2)))
	if !slices.Equal(s1.Train, s2.Train) || !slices.Equal(s1.Test, s2.Test) {
		t.Error("same seed, different split")
	}
	s3, _ := Random(l, known, Fractions{Train: 0.5, Val: 0.25}, rand.New(rand.NewPCG(3, 4)))
	if slices.Equal(s1.Train, s3.Train) {
		t.Error("different seeds, same split")
	}
	if len(s1.Train) != 500 || len(s1.Val) != 250 || len(s1.Test) >= 250 || len(s1.Test) < 200 {
		t.Errorf("sizes %d/%d/%d", len(s1.Train), len(s1.Val), len(s1.Test))
	}
	checkPartition(t, s1, l, known)
	if _, err := Random(l, nil, Fractions{Train: 0.8, Val: 0.3}, rand.New(rand.NewPCG(1, 2))); !errors.Is(err, ErrParams) {
		t.Errorf("fractions > 1: %v", err)
	}
}

// Ensure that the DIG split of the real NBA dump gives 62/110/141.
func TestDIG_NBA(t *testing.T) {
	p, _ := dump.LookupPreset("nba")
	path, err := dump.FindFile("../../../shared/datasets/nba", p.NodeFile)
	if err != nil {
		t.Skip("NBA dump not present:", err)
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
	var labelled []uint32
	sens := map[uint32]int8{}
	for rr.Next() {
		r := rr.Row()
		if r.Label >= 0 {
			labelled = append(labelled, uint32(r.Index))
		}
		sens[uint32(r.Index)] = r.Sensitive
	}
	if rr.Err() != nil {
		t.Fatal(rr.Err())
	}
	params, err := ParamsFor(p.Split)
	if err != nil {
		t.Fatal(err)
	}
	s, err := DIG(labelled, func(v uint32) bool { return sens[v] >= 0 }, params, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if len(labelled) != 313 || len(s.Train) != 62 || len(s.Val) != 110 || len(s.Test) != 141 {
		t.Errorf("labelled %d, split %d/%d/%d, want 313, 62/110/141", len(labelled), len(s.Train), len(s.Val), len(s.Test))
	}
	checkPartition(t, s, labelled, nil)
	// Reference values printed by CPython 3.11 for the same protocol.
	sum := func(x []uint32) (n int) {
		for _, v := range x {
			n += int(v)
		}
		return n
	}
	if !slices.Equal(s.Train[:5], []uint32{42, 345, 401, 20, 338}) || !slices.Equal(s.Val[:3], []uint32{71, 40, 112}) ||
		sum(s.Train) != 12679 || sum(s.Val) != 23019 || sum(s.Test) != 26337 {
		t.Errorf("split differs from CPython: train %v… (Σ %d), val %v… (Σ %d), test Σ %d",
			s.Train[:5], sum(s.Train), s.Val[:3], sum(s.Val), sum(s.Test))
	}
}
