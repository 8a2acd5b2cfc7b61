package index

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// FuzzDecodeBitmap checks the decoder of stored bitmaps (adjacency, groups,
// labels, splits) on arbitrary bytes, as a damaged store would hand them
// over: it never panics, a refusal is ErrCorrupt, and an accepted bitmap can
// be walked, queried and re-encoded to a bitmap with the same members. The
// seeds are real encodings of array and run containers, one or several, so
// that mutations start past the format cookie and reach the container
// decoders. A bitmap container always takes 8 KiB, and the fuzzer would
// spend tens of seconds minimizing each input derived from one, at 0
// execs/s: TestDecodeBitmap_Containers covers that kind instead.
func FuzzDecodeBitmap(f *testing.F) {
	run := roaring.New()
	run.AddRange(100, 50000)
	for _, bm := range []*roaring.Bitmap{
		roaring.New(),
		roaring.BitmapOf(1, 2, 3, 1000),
		roaring.BitmapOf(0, 65535, 65536, 1<<31, 1<<32-1),
		run,
	} {
		b, err := encodeBitmap(bm)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeBitmap(t, b)
	})
}

// checkDecodeBitmap is the property of FuzzDecodeBitmap.
func checkDecodeBitmap(t *testing.T, b []byte) {
	t.Helper()
	bm, err := DecodeBitmap(append([]byte(nil), b...))
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("refusal %v is not ErrCorrupt", err)
		}
		return
	}
	// A few run containers can hold billions of members: walk a prefix.
	n := bm.GetCardinality()
	it := bm.Iterator()
	var prev uint32
	for i := 0; it.HasNext() && i < 1000; i++ {
		m := it.Next()
		if (i > 0 && m <= prev) || !bm.Contains(m) {
			t.Fatalf("member %d after %d, contained %v", m, prev, bm.Contains(m))
		}
		prev = m
	}
	if n <= 1<<16 && uint64(len(bm.ToArray())) != n {
		t.Fatalf("%d members for cardinality %d", len(bm.ToArray()), n)
	}
	again, err := encodeBitmap(bm.Clone())
	if err != nil {
		t.Fatal(err)
	}
	bm2, err := DecodeBitmap(again)
	if err != nil || !bm2.Equals(bm) {
		t.Fatalf("re-encoded bitmap does not decode to the same members: %v", err)
	}
}

// Ensure that every container kind decodes, and that damage to a bitmap
// container (its stored cardinality, and a member cleared behind it) is
// refused rather than believed.
func TestDecodeBitmap_Containers(t *testing.T) {
	dense := roaring.New()
	for i := uint32(0); i < 10000; i += 2 {
		dense.Add(i)
	}
	b, err := encodeBitmap(dense)
	if err != nil {
		t.Fatal(err)
	}
	checkDecodeBitmap(t, b)
	bm, err := DecodeBitmap(append([]byte(nil), b...))
	if err != nil || !bm.Equals(dense) {
		t.Fatalf("dense bitmap: %v", err)
	}
	// The container's 8 KiB of words end the encoding; members 0, 2, 4, 6
	// are the bits of its first byte, 65528…65535 of its last.
	for name, damage := range map[string]func([]byte){
		"members cleared": func(c []byte) { c[len(c)-8192] = 0 },
		"members added":   func(c []byte) { c[len(c)-1] = 0xff },
	} {
		c := append([]byte(nil), b...)
		damage(c)
		if _, err := DecodeBitmap(c); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s behind the stored cardinality: %v, want ErrCorrupt", name, err)
		}
	}
	if _, err := DecodeBitmap(append(append([]byte(nil), b...), 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("trailing byte: %v, want ErrCorrupt", err)
	}
}

// FuzzDecodeRecords checks the decoders of the fixed-layout records (node
// record, state, counters) on arbitrary bytes: no panic, a refusal is
// ErrCorrupt, and an accepted record re-encodes to the same bytes.
func FuzzDecodeRecords(f *testing.F) {
	f.Add(appendNodeRecord(nil, &Node{ExternalID: -7, Sensitive: 1, Label: -1, Features: []float32{0.5, -1, float32(math.Inf(1))}}), uint8(3))
	f.Add(appendNodeRecord(nil, &Node{ExternalID: 1 << 40}), uint8(0))
	f.Add(state{Version: 3, Nodes: 10, Edges: 99}.encode(), uint8(2))
	f.Add(encodeU64(12345), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, dim uint8) {
		d := int(dim % 8)
		ext, s, y, err := decodeNodeHeader(b, d)
		if err == nil {
			feat := appendFeatures(nil, b)
			if len(feat) != d {
				t.Fatalf("%d features, want %d", len(feat), d)
			}
			again := appendNodeRecord(nil, &Node{ExternalID: ext, Sensitive: s, Label: y, Features: feat})
			if string(again) != string(b) {
				t.Fatalf("node record %x re-encodes to %x", b, again)
			}
		} else if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("node record refusal %v is not ErrCorrupt", err)
		}
		if st, err := decodeState(b); err == nil {
			if string(st.encode()) != string(b) {
				t.Fatalf("state %x re-encodes differently", b)
			}
		} else if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("state refusal %v is not ErrCorrupt", err)
		}
		if x, err := decodeU64(b); err == nil {
			if binary.BigEndian.Uint64(b) != x || string(encodeU64(x)) != string(b) {
				t.Fatalf("counter %x re-encodes differently", b)
			}
		} else if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("counter refusal %v is not ErrCorrupt", err)
		}
	})
}
