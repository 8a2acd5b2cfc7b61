package query

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// Ensure that encodeBitmap writes the bytes of the set rebuilt value by
// value and run-optimised (the canonical form), whatever edits, set
// operations and decodings led to the bitmap: adds and removes that turn
// containers from array to bitmap and back, ranges that make and split
// runs, unions and differences, a round trip through the bytes.
func TestEncodeBitmapCanonical(t *testing.T) {
	rebuild := func(bm *roaring.Bitmap) []byte {
		c := roaring.BitmapOf(bm.ToArray()...)
		c.RunOptimize()
		b, err := c.ToBytes()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range []struct {
		name     string
		universe uint32
	}{{"sparse", 1 << 20}, {"one container", 1 << 16}, {"dense", 3 << 16}, {"tiny", 300}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(c.universe)))
			bm := roaring.New()
			for step := range 800 {
				x := rng.Uint32N(c.universe)
				switch op := rng.IntN(10); op {
				case 0, 1, 2:
					for range 1 + rng.IntN(2000) {
						bm.Add(rng.Uint32N(c.universe))
					}
				case 3, 4:
					for range 1 + rng.IntN(2000) {
						bm.Remove(rng.Uint32N(c.universe))
					}
				case 5:
					bm.AddRange(uint64(x), uint64(x)+uint64(rng.IntN(5000)))
				case 6:
					bm.RemoveRange(uint64(x), uint64(x)+uint64(rng.IntN(70000)))
				case 7:
					o := roaring.New()
					o.AddRange(uint64(x), uint64(x)+uint64(rng.IntN(3000)))
					for range rng.IntN(100) {
						o.Add(rng.Uint32N(c.universe))
					}
					if rng.IntN(2) == 0 {
						bm.Or(o)
					} else {
						bm.AndNot(o)
					}
				case 8:
					b, err := bm.ToBytes()
					if err != nil {
						t.Fatal(err)
					}
					bm = roaring.New()
					if _, err := bm.FromBuffer(b); err != nil {
						t.Fatal(err)
					}
					bm = bm.Clone()
				case 9:
					bm.RunOptimize()
				}
				got, err := encodeBitmap(bm)
				if err != nil {
					t.Fatal(err)
				}
				if want := rebuild(bm); !bytes.Equal(got, want) {
					t.Fatalf("step %d (%d values): encodeBitmap wrote %d bytes, the rebuild %d", step, bm.GetCardinality(), len(got), len(want))
				}
			}
		})
	}
}
