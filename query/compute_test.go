package query

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Ensure that viewNodes answers NodeAttrs with the node's own sensitive
// value and label whether or not NodeFeatures of that node came just
// before (the one-entry memo), in any order of calls.
func TestViewNodes_AttrsMemo(t *testing.T) {
	const n, d = 200, 4
	_, g := newTestGraph(t, n, d, 5, 3)
	v, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	src := &viewNodes{v: v}
	rng := rand.New(rand.NewPCG(1, 2))
	dst := make([]float32, d)
	for range 2000 {
		u := uint32(rng.IntN(n))
		if rng.IntN(2) == 0 {
			if err := src.NodeFeatures(u, dst); err != nil {
				t.Fatal(err)
			}
			want, err := v.Features(u, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(dst, want) {
				t.Fatalf("node %d: NodeFeatures %v, want %v", u, dst, want)
			}
			if rng.IntN(2) == 0 {
				u = uint32(rng.IntN(n)) // NodeAttrs of another node
			}
		}
		s, y, sp, err := src.NodeAttrs(u)
		if err != nil {
			t.Fatal(err)
		}
		ws, _ := v.Sensitive(u)
		wy, _ := v.Label(u)
		wsp, _ := v.SplitOf(u)
		if s != ws || y != wy || sp != wsp {
			t.Fatalf("node %d: NodeAttrs %d %d %v, want %d %d %v", u, s, y, sp, ws, wy, wsp)
		}
	}
}
