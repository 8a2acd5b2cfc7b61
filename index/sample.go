package index

import (
	"fmt"
	"math/rand/v2"

	"github.com/RoaringBitmap/roaring/v2"
)

// SampleNeighbors appends to dst m = min(k, deg n) distinct neighbours of
// n, drawn uniformly without replacement, in draw order, never n itself
// (the graph has no self-loops), and returns the extended slice. It
// implements fasd.NeighborSampler.
//
// The draw is the algorithm fasd.DrawPositions documents, over the
// neighbour list sorted ascending: a partial Fisher–Yates shuffle of the
// positions 0..deg−1,
//
//	for i := 0; i < m; i++ {
//		j := i + rng.IntN(deg-i) // called even when deg−i = 1
//		swap(p[i], p[j])
//		emit neighbour at position p[i]
//	}
//
// so it consumes rng exactly m times and gives, for the same generator
// state, the same sample as fasd.CSRGraph. The position → id lookup is a
// roaring Select on the stored bitmap; only the swapped slots are
// remembered, so memory is O(m) whatever the degree.
func (v *View) SampleNeighbors(n uint32, k int, rng *rand.Rand, dst []uint32) ([]uint32, error) {
	if k <= 0 {
		if err := checkNode(n, v.st.Nodes); err != nil {
			return dst, err
		}
		return dst, nil
	}
	bm, err := v.NeighborBitmap(n)
	if err != nil {
		return dst, err
	}
	return sampleBitmap(bm, k, rng, dst)
}

func sampleBitmap(bm *roaring.Bitmap, k int, rng *rand.Rand, dst []uint32) ([]uint32, error) {
	deg := int(bm.GetCardinality())
	m := min(k, deg)
	if m <= 0 {
		return dst, nil
	}
	var buf [32]int
	pos := drawPositions(deg, m, rng, buf[:0])
	for _, p := range pos {
		w, err := bm.Select(uint32(p))
		if err != nil {
			return dst, fmt.Errorf("%w: select %d of %d: %w", ErrCorrupt, p, deg, err)
		}
		dst = append(dst, w)
	}
	return dst, nil
}

// drawPositions appends min(k, deg) positions of [0, deg) to dst, exactly as
// fasd.DrawPositions does (same generator calls, same output). Swapped slots
// are kept in a small slice, or a map once the sample is large.
func drawPositions(deg, k int, rng *rand.Rand, dst []int) []int {
	m := min(k, deg)
	if m <= 0 {
		return dst
	}
	if m > 64 {
		moved := make(map[int]int, m)
		for i := range m {
			j := i + rng.IntN(deg-i)
			vi, ok := moved[i]
			if !ok {
				vi = i
			}
			vj, ok := moved[j]
			if !ok {
				vj = j
			}
			moved[j] = vi
			dst = append(dst, vj)
		}
		return dst
	}
	type slot struct{ pos, val int }
	var stack [64]slot
	moved := stack[:0]
	for i := range m {
		j := i + rng.IntN(deg-i)
		vi, vj := i, j
		found := -1
		for s := range moved {
			if moved[s].pos == i {
				vi = moved[s].val
			}
			if moved[s].pos == j {
				vj = moved[s].val
				found = s
			}
		}
		if found >= 0 {
			moved[found].val = vi
		} else {
			moved = append(moved, slot{j, vi})
		}
		dst = append(dst, vj)
	}
	return dst
}

// Layers returns the breadth-first layers around src up to hops hops:
// layers[d] holds the nodes at hop distance exactly d (layers[0] = {src}).
// Trailing empty layers are left out, so len(layers)−1 is the eccentricity
// of src when it is below hops.
func (v *View) Layers(src uint32, hops int) ([]*roaring.Bitmap, error) {
	if err := checkNode(src, v.st.Nodes); err != nil {
		return nil, err
	}
	return v.layers(roaring.BitmapOf(src), hops)
}

func (v *View) layers(start *roaring.Bitmap, hops int) ([]*roaring.Bitmap, error) {
	layers := []*roaring.Bitmap{start.Clone()}
	seen := start.Clone()
	for d := 1; d <= hops; d++ {
		next := roaring.New()
		for it := layers[d-1].Iterator(); it.HasNext(); {
			u := it.Next()
			if err := checkNode(u, v.st.Nodes); err != nil {
				return nil, err
			}
			nb, err := v.bitmap(adjKey(u))
			if err != nil {
				return nil, err
			}
			next.Or(nb)
		}
		next.AndNot(seen)
		if next.IsEmpty() {
			break
		}
		seen.Or(next)
		layers = append(layers, next)
	}
	return layers, nil
}

// Ball returns the nodes within hops hops of src, src included.
func (v *View) Ball(src uint32, hops int) (*roaring.Bitmap, error) {
	if err := checkNode(src, v.st.Nodes); err != nil {
		return nil, err
	}
	return v.Expand(roaring.BitmapOf(src), hops)
}

// Expand returns the nodes within hops hops of any node of set, set
// included (a multi-source ball). set is not modified.
func (v *View) Expand(set *roaring.Bitmap, hops int) (*roaring.Bitmap, error) {
	ls, err := v.layers(set, hops)
	if err != nil {
		return nil, err
	}
	return roaring.FastOr(ls...), nil
}

// HopDistances returns the hop distance from src of every node within hops
// hops (src itself at 0).
func (v *View) HopDistances(src uint32, hops int) (map[uint32]int, error) {
	ls, err := v.Layers(src, hops)
	if err != nil {
		return nil, err
	}
	dist := make(map[uint32]int)
	for d, l := range ls {
		for it := l.Iterator(); it.HasNext(); {
			dist[it.Next()] = d
		}
	}
	return dist, nil
}
