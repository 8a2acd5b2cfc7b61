package fasd

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// randomAdj returns an n×n matrix whose entries are, at random, +0, −0, 1
// or a weight (unit-only when ones).
func randomAdj(n int, seed uint64, ones bool) []float32 {
	rng := NewRand(seed)
	a := make([]float32, n*n)
	for i := range a {
		switch r := rng.IntN(8); {
		case r == 0:
			a[i] = 1
		case r == 1 && !ones:
			a[i] = float32(rng.NormFloat64())
		case r == 2 && !ones:
			a[i] = float32(math.Copysign(0, -1))
		}
	}
	return a
}

func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// ensure that the compact form gives back the dense matrix bit for bit
// (−0 included), with unit weights left out, and that scattering it into
// a padded block writes exactly that block.
func TestSparseAdj_RoundTrip(t *testing.T) {
	for _, c := range []struct {
		n    int
		ones bool
	}{{1, false}, {2, true}, {5, false}, {21, true}, {21, false}, {64, false}} {
		for seed := uint64(1); seed <= 5; seed++ {
			a := randomAdj(c.n, seed, c.ones)
			s := CompactAdj(a, c.n)
			nz, ones := 0, true
			for _, v := range a {
				if b := math.Float32bits(v); b != 0 {
					nz++
					ones = ones && v == 1
				}
			}
			if s.Entries() != nz || ones != (s.W == nil) {
				t.Fatalf("n=%d seed %d: %d entries (weights %t), want %d", c.n, seed, s.Entries(), s.W != nil, nz)
			}
			if want := 4 * int64(len(s.Idx)+len(s.W)); s.Bytes() != want {
				t.Fatalf("Bytes %d, want %d", s.Bytes(), want)
			}
			got := make([]float32, c.n*c.n)
			for i := range got {
				got[i] = 7 // Dense overwrites every entry
			}
			if err := s.Dense(got); err != nil || !sameBits(got, a) {
				t.Fatalf("n=%d seed %d: Dense differs from the matrix (%v)", c.n, seed, err)
			}
			m := c.n + 3
			pad := make([]float32, m*m)
			pad[m*m-1] = 9
			if err := s.Scatter(pad, m); err != nil {
				t.Fatal(err)
			}
			for i := range m {
				for j := range m {
					want := float32(0)
					if i < c.n && j < c.n {
						want = a[i*c.n+j]
					} else if i == m-1 && j == m-1 {
						want = 9
					}
					if math.Float32bits(pad[i*m+j]) != math.Float32bits(want) {
						t.Fatalf("n=%d seed %d: padded[%d,%d] = %v, want %v", c.n, seed, i, j, pad[i*m+j], want)
					}
				}
			}
		}
	}
}

func TestSparseAdj_Errors(t *testing.T) {
	s := CompactAdj([]float32{0, 1, 1, 0}, 2)
	if err := s.Dense(make([]float32, 3)); !errors.Is(err, ErrShape) {
		t.Errorf("Dense into 3 values: %v", err)
	}
	if err := s.Scatter(make([]float32, 1), 1); !errors.Is(err, ErrShape) {
		t.Errorf("Scatter into a 1×1 block: %v", err)
	}
	bad := SparseAdj{N: 2, Idx: []uint32{4}}
	if err := bad.Dense(make([]float32, 4)); !errors.Is(err, ErrShape) {
		t.Errorf("position outside the matrix: %v", err)
	}
	bad = SparseAdj{N: 2, Idx: []uint32{1, 2}, W: []float32{1}}
	if err := bad.Dense(make([]float32, 4)); !errors.Is(err, ErrShape) {
		t.Errorf("weights and positions differ in number: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("CompactAdj of 3 values as 2×2 did not panic")
		}
	}()
	CompactAdj(make([]float32, 3), 2)
}

// ensure that a compact subgraph validates, counts its edges, clones and
// reads back like the dense one, and that Validate still catches a broken
// adjacency in compact form.
func TestSubgraph_Compact(t *testing.T) {
	n := 4
	a := []float32{
		0, 1, 0, 0.5,
		1, 0, 0, 0,
		0, 0, 0, 2,
		0.5, 0, 2, 0,
	}
	g := &Subgraph{Nodes: []uint32{7, 3, 9, 1}, D: 1, X: []float32{1, 2, 3, 4}, A: slices.Clone(a),
		S: []int8{0, 1, -1, 0}, Y: []int8{1, -1, 0, 0}, Split: []Split{SplitTrain, SplitNone, SplitVal, SplitTest}}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	edges := g.NumEdges()
	g.Compact()
	if g.A != nil || g.Adj.N != n || g.Adj.Entries() != 6 {
		t.Fatalf("after Compact: A %v, Adj %+v", g.A, g.Adj)
	}
	if err := g.Validate(); err != nil {
		t.Fatalf("compact subgraph: %v", err)
	}
	if g.NumEdges() != edges || edges != 3 {
		t.Errorf("NumEdges %d compact, %d dense, want 3", g.NumEdges(), edges)
	}
	got, err := g.DenseA(nil)
	if err != nil || !sameBits(got, a) {
		t.Fatalf("DenseA: %v (%v)", got, err)
	}
	c := g.Clone()
	c.Adj.W[0] = 42
	if got, _ := g.DenseA(nil); !sameBits(got, a) {
		t.Error("Clone shares the compact weights")
	}
	g.Compact() // already compact: unchanged
	if g.Adj.Entries() != 6 {
		t.Error("a second Compact changed the adjacency")
	}
	asym := slices.Clone(a)
	asym[1] = 3
	h := &Subgraph{Nodes: g.Nodes, D: 1, X: g.X, S: g.S, Y: g.Y, Split: g.Split, Adj: CompactAdj(asym, n)}
	if err := h.Validate(); !errors.Is(err, ErrInvalidSubgraph) {
		t.Errorf("asymmetric compact adjacency: %v", err)
	}
	h.Adj = CompactAdj(a[:9], 3)
	if err := h.Validate(); !errors.Is(err, ErrInvalidSubgraph) {
		t.Errorf("3×3 compact adjacency for 4 nodes: %v", err)
	}
	if _, err := h.DenseA(nil); !errors.Is(err, ErrShape) {
		t.Errorf("DenseA of a 3×3 adjacency for 4 nodes: %v", err)
	}
}
