package split

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
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
// docs/method.md §1 and a full permutation.
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

// Ensure that NIFTY shuffles each class with one continuing CPython stream,
// cuts each class at 50 % and 75 % with the training part capped at
// labelNumber/2, filters unknown-sensitive test nodes and refuses bad input.
func TestNIFTY(t *testing.T) {
	var c0, c1 []uint32
	for i := range 37 {
		c0 = append(c0, uint32(2*i))
	}
	for i := range 91 {
		c1 = append(c1, uint32(2*i+1))
	}
	all := append(slices.Clone(c0), c1...)
	cases := []struct {
		labelNumber                int
		train0, train1, val0, val1 int
	}{
		{1000, 18, 45, 9, 23}, // the 50 % bound: int(0.5*37) = 18
		{20, 10, 10, 9, 23},   // the label-number bound
		{21, 10, 10, 9, 23},   // label_number//2 floors
		{0, 0, 0, 9, 23},
	}
	for _, c := range cases {
		s, err := NIFTY(c0, c1, nil, c.labelNumber, DefaultSeed)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, s, all, nil)
		n0 := func(x []uint32) (n int) {
			for _, v := range x {
				if v%2 == 0 {
					n++
				}
			}
			return n
		}
		if n0(s.Train) != c.train0 || len(s.Train)-n0(s.Train) != c.train1 || n0(s.Val) != c.val0 || len(s.Val)-n0(s.Val) != c.val1 ||
			len(s.Test) != 37-27+91-68 {
			t.Errorf("label number %d: train %d+%d val %d+%d test %d", c.labelNumber, n0(s.Train), len(s.Train)-n0(s.Train),
				n0(s.Val), len(s.Val)-n0(s.Val), len(s.Test))
		}
		// Class-0 nodes come first in every part.
		for _, part := range [][]uint32{s.Train, s.Val, s.Test} {
			k := n0(part)
			for i, v := range part {
				if (i < k) != (v%2 == 0) {
					t.Fatalf("part %v: class 0 nodes not first", part)
				}
			}
		}
	}
	// CPython 3.11: random.seed(20); a = list(range(0, 74, 2)); b = list(range(1, 182, 2));
	// random.shuffle(a); random.shuffle(b) → a[:5] = [56, 10, 22, 52, 48], b[:5] = [119, 125, 107, 141, 27].
	s, _ := NIFTY(c0, c1, nil, 1000, DefaultSeed)
	if !slices.Equal(s.Train[:5], []uint32{56, 10, 22, 52, 48}) || !slices.Equal(s.Train[18:23], []uint32{119, 125, 107, 141, 27}) {
		t.Errorf("shuffle differs from CPython: %v… %v…", s.Train[:5], s.Train[18:23])
	}
	// Unknown sensitive values leave test only.
	known := func(v uint32) bool { return v%3 != 0 }
	s2, _ := NIFTY(c0, c1, known, 1000, DefaultSeed)
	checkPartition(t, s2, all, known)
	if !slices.Equal(s2.Train, s.Train) || !slices.Equal(s2.Val, s.Val) || len(s2.Test) >= len(s.Test) {
		t.Errorf("known filter changed train/val or kept test: %d vs %d", len(s2.Test), len(s.Test))
	}
	for _, bad := range []struct {
		c0, c1 []uint32
		ln     int
	}{
		{c0, c1, -1},
		{[]uint32{3, 2}, nil, 10},
		{[]uint32{1, 2}, []uint32{2, 5}, 10},
	} {
		if _, err := NIFTY(bad.c0, bad.c1, nil, bad.ln, DefaultSeed); !errors.Is(err, ErrParams) {
			t.Errorf("NIFTY(%v, %v, %d) = %v, want ErrParams", bad.c0, bad.c1, bad.ln, err)
		}
	}
	if s, err := NIFTY(nil, nil, nil, 100, DefaultSeed); err != nil || len(s.Train)+len(s.Val)+len(s.Test) != 0 {
		t.Errorf("empty classes: %+v %v", s, err)
	}
}
