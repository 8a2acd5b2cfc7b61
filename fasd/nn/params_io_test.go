package nn

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd/tensor"
)

func scoreXFor(t testing.TB, seed uint64) *ScoreX[float32] {
	m, err := NewScoreX[float32](DefaultScoreXConfig(7), rand.New(rand.NewPCG(seed, 0)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// ensure that saved parameters load back bit-exactly, also into float64, and
// that bad magic, version, checksum, truncation and shape mismatch are
// reported with their sentinel errors without touching the parameters.
func TestParams_SaveLoad(t *testing.T) {
	src, dst := scoreXFor(t, 1), scoreXFor(t, 2)
	var buf bytes.Buffer
	if err := SaveParams(&buf, src.Params()); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	if err := LoadParams(bytes.NewReader(file), dst.Params()); err != nil {
		t.Fatal(err)
	}
	for i, p := range dst.Params() {
		for j, v := range p.Value.Data {
			if v != src.Params()[i].Value.Data[j] {
				t.Fatalf("%s[%d] = %v want %v", p.Name, j, v, src.Params()[i].Value.Data[j])
			}
		}
	}
	d64, _ := NewScoreX[float64](DefaultScoreXConfig(7), rand.New(rand.NewPCG(3, 0)))
	if err := LoadParams(bytes.NewReader(file), d64.Params()); err != nil {
		t.Fatal(err)
	}
	if float32(d64.Params()[0].Value.Data[5]) != src.Params()[0].Value.Data[5] {
		t.Fatal("float32→float64 load changed a value")
	}

	fresh := scoreXFor(t, 9)
	before := fresh.Params()[0].Value.Data[0]
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), file...)) }
	other, _ := NewScoreX[float32](DefaultScoreXConfig(8), rand.New(rand.NewPCG(1, 0)))
	cases := []struct {
		name string
		data []byte
		into []*Param[float32]
		want error
	}{
		{"magic", mut(func(b []byte) []byte { b[0] = 'X'; return b }), fresh.Params(), ErrBadMagic},
		{"version", mut(func(b []byte) []byte { b[8] = 2; return b }), fresh.Params(), ErrVersion},
		{"checksum", mut(func(b []byte) []byte { b[len(b)-20] ^= 1; return b }), fresh.Params(), ErrChecksum},
		{"truncated", file[:len(file)-9], fresh.Params(), ErrCorrupt},
		{"empty", nil, fresh.Params(), ErrCorrupt},
		{"shape", file, other.Params(), ErrShapeMismatch},
		{"count", file, fresh.Params()[:3], ErrShapeMismatch},
	}
	for _, c := range cases {
		err := LoadParams(bytes.NewReader(c.data), c.into)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	if fresh.Params()[0].Value.Data[0] != before {
		t.Fatal("a failed load modified parameters")
	}
}

// FuzzLoadParams: arbitrary bytes never panic; whatever loads re-saves to the
// same bytes (the format has one encoding).
func FuzzLoadParams(f *testing.F) {
	m := scoreXFor(f, 1)
	var buf bytes.Buffer
	if err := SaveParams(&buf, m.Params()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("FASDPRM\x00\x01\x00\x00\x00\x04"))
	small := func() []*Param[float32] {
		return []*Param[float32]{
			{Name: "w", Value: tensor.New[float32](2, 3), Grad: make([]float32, 6)},
			{Name: "b", Value: tensor.New[float32](3), Grad: make([]float32, 3)},
		}
	}
	buf.Reset()
	if err := SaveParams(&buf, small()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		target := &ScoreX[float32]{params: small()}
		if err := LoadParams(bytes.NewReader(data), target.Params()); err != nil {
			return
		}
		var out bytes.Buffer
		if err := SaveParams(&out, target.Params()); err != nil {
			t.Fatal(err)
		}
		if data[12] == 4 && !bytes.Equal(out.Bytes(), data[:out.Len()]) {
			t.Fatal("round trip changed the encoding")
		}
	})
}
