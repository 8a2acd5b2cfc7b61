package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// FuzzUnmarshalModels checks that no bundle panics the decoder and that
// whatever it accepts re-encodes to a canonical bundle of the same models
// (to the same bytes when the header was not edited).
//
// A raw-bytes target does not work here, for two reasons. A mutated bundle
// whose SHA-256 trailer no longer matches stops at the checksum, before the
// header, config and part decoders (TestModels_RoundTripSamePath covers the
// checksum itself). And even the smallest bundle is about a kilobyte (its
// header carries the whole config as TOML): every new input the fuzzer
// finds is then minimized for tens of seconds, during which the target sits
// at 0 execs/s. So the target edits one of a few small valid bundles, built
// directly rather than trained, with a short patch (replace del bytes at off
// by ins), keeps the header length true when the patch lies in the header,
// and seals the result with its checksum: the inputs are a few bytes, and
// every one reaches the decoders.
func FuzzUnmarshalModels(f *testing.F) {
	cfg := fastConfig(f)
	cfg.Sens.Hidden, cfg.Classifier.Hidden = 4, 2
	rng := rand.New(rand.NewPCG(1, 2))
	var bodies [][]byte
	for _, p := range []struct{ gsen, f, fbase bool }{{}, {f: true}, {gsen: true, f: true, fbase: true}, {fbase: true}} {
		m, err := newModels(&cfg, 2, p.gsen, false, p.f, p.fbase, rng)
		if err != nil {
			f.Fatal(err)
		}
		m.FeatureHash = FeatureHash([]string{"a", "b"})
		b, err := m.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		bodies = append(bodies, b[:len(b)-sha256.Size])
	}
	// Each base unchanged, and patches aimed at the header's fields.
	for i := range bodies {
		f.Add(uint8(i), uint16(0), uint16(0), []byte{})
	}
	full := bodies[2]
	for _, p := range []struct{ at, ins string }{
		{`"d":2`, `"d":16777216`},
		{`"d":2`, `"d":-1`},
		{`"format":1`, `"format":2`},
		{`"parts":["gsen"`, `"parts":["score_x","score_a"`},
		{`"parts":["gsen","f"`, `"parts":["f","gsen"`},
		{`hidden = 4`, `hidden = 4000000`},
		{`[classifier]`, `[classifier`},
		{`"parts":["gsen","f","f_base"]`, `"parts":["gsen","f","f_base","f"]`},
		{`hidden = 4`, `hidden = -4`},
	} {
		at := bytes.Index(full, []byte(p.at))
		if at < 0 {
			f.Fatalf("seed patch: %q not in the bundle", p.at)
		}
		f.Add(uint8(2), uint16(at), uint16(len(p.at)), []byte(p.ins))
	}
	hl := 12 + int(binary.LittleEndian.Uint32(full[8:12]))
	for _, p := range []struct {
		off, del int
		ins      string
	}{
		{0, 1, "G"},                // magic
		{8, 4, "\xff\xff\x00\x00"}, // header length beyond the end
		{12, 1, "["},               // header not a JSON object
		{hl, 8, "\xff\xff\xff\xff\xff\xff\xff\x7f"}, // first part length beyond the end
		{hl + 8 + 20, 1, "X"},                       // a byte inside the first part
		{hl, len(full) - hl, ""},                    // no parts
		{len(full) - 4, 4, ""},                      // last part cut short
		{len(full), 0, "\x00"},                      // a trailing byte
	} {
		f.Add(uint8(2), uint16(p.off), uint16(p.del), []byte(p.ins))
	}
	f.Fuzz(func(t *testing.T, base uint8, off, del uint16, ins []byte) {
		b := bodies[int(base)%len(bodies)]
		o := min(int(off), len(b))
		end := min(o+int(del), len(b))
		data := make([]byte, 0, len(b)-(end-o)+len(ins)+sha256.Size)
		data = append(append(append(data, b[:o]...), ins...), b[end:]...)
		// A patch inside the JSON header (or appended to it) keeps its
		// length field true, as the checksum is kept true: the decoders
		// behind are the target, not these two framing checks.
		hdrEnd := 12 + int(binary.LittleEndian.Uint32(b[8:12]))
		inHeader := o >= 12 && end <= hdrEnd
		if inHeader {
			binary.LittleEndian.PutUint32(data[8:12], uint32(hdrEnd-12+len(ins)-(end-o)))
		}
		sum := sha256.Sum256(data)
		data = append(data, sum[:]...)
		m, err := UnmarshalModels(data)
		if err != nil {
			return
		}
		again, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		// An edited header may be accepted in a non-canonical spelling (JSON
		// escapes, TOML layout): the bundle must then re-encode to a
		// canonical one that decodes to the same models. With the header
		// untouched, the bytes must come back exactly.
		m2, err := UnmarshalModels(again)
		if err != nil {
			t.Fatalf("re-encoded bundle rejected: %v", err)
		}
		third, err := m2.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(third, again) || m2.Config.TOML() != m.Config.TOML() || m2.D != m.D || m2.FeatureHash != m.FeatureHash {
			t.Fatal("re-encoding is not a fixed point")
		}
		if !inHeader && (o >= hdrEnd || end <= 8) && !bytes.Equal(again, data) {
			t.Fatal("accepted bundle with an untouched header does not re-encode to the same bytes")
		}
	})
}
