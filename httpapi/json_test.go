package httpapi

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/query"
)

// randomFloat draws from every formatting regime of encoding/json:
// ordinary probabilities, tiny and huge magnitudes (exponent form),
// boundaries, signed zeros, and arbitrary bit patterns.
func randomFloat(rng *rand.Rand) float64 {
	switch rng.IntN(8) {
	case 0:
		return rng.Float64()
	case 1:
		return float64(float32(rng.Float64())) // f32 probabilities widened
	case 2:
		return rng.Float64() * math.Pow(10, float64(rng.IntN(40)-30))
	case 3:
		return -rng.Float64() * math.Pow(10, float64(rng.IntN(60)-30))
	case 4:
		return []float64{0, math.Copysign(0, -1), 1e-6, 1e21, 9.999999e-7, 1e20, 1, 0.5, math.SmallestNonzeroFloat64, math.MaxFloat64}[rng.IntN(10)]
	default:
		for {
			f := math.Float64frombits(rng.Uint64())
			if finite(f) {
				return f
			}
		}
	}
}

func randomString(rng *rand.Rand) string {
	alphabet := []string{"a", "Z", "0", "-", ".", " ", "\"", "\\", "<", ">", "&", "\n", "\x01", "é", "\u2028", "\xff", "🙂", "/"}
	n := rng.IntN(8)
	s := ""
	for range n {
		s += alphabet[rng.IntN(len(alphabet))]
	}
	return s
}

// Ensure that appendPrediction produces exactly encoding/json's bytes for
// random predictions covering every float regime, odd strings and a
// present or absent other variants, and that it declines non-finite values.
func TestAppendPredictionMatchesMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 20000 {
		p := query.Prediction{
			Node: rng.Uint32(), ID: int64(rng.Uint64()), Class: rng.IntN(3) - 1,
			Probs: [2]float64{randomFloat(rng), randomFloat(rng)}, Subgraphs: rng.IntN(1 << 20),
			Model: randomString(rng), ViewVersion: rng.Uint64(), GraphVersion: rng.Uint64(),
			Stale: rng.IntN(2) == 0, Source: query.Source(randomString(rng)),
		}
		if i%3 != 0 {
			p.Variants = map[string][2]float64{}
			for range 1 + rng.IntN(3) {
				p.Variants[randomString(rng)] = [2]float64{randomFloat(rng), randomFloat(rng)}
			}
		}
		checkAppendPrediction(t, &p)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for k := range 4 {
			var nd [2]float64
			p := query.Prediction{}
			*[]*float64{&p.Probs[0], &p.Probs[1], &nd[0], &nd[1]}[k] = bad
			p.Variants = map[string][2]float64{"no_diffusion": nd}
			if b, ok := appendPrediction([]byte("x"), &p); ok || string(b) != "x" {
				t.Errorf("accepted %v at %d: %q", bad, k, b)
			}
		}
	}
}

func checkAppendPrediction(t *testing.T, p *query.Prediction) {
	t.Helper()
	want, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := appendPrediction([]byte("prefix"), p)
	if !ok || !bytes.Equal(got[6:], want) || string(got[:6]) != "prefix" {
		t.Fatalf("appendPrediction(%+v)\n got %s\nwant %s", p, got, want)
	}
}

// FuzzAppendPrediction compares appendPrediction with encoding/json on
// arbitrary field values.
func FuzzAppendPrediction(f *testing.F) {
	f.Add(uint32(1), int64(1001), 1, 0.25, 0.75, 3, true, 0.5, 0.5, "test-1", uint64(2), uint64(3), false, "view")
	f.Add(uint32(0), int64(-5), 0, 1e-9, 1e22, 0, false, math.Copysign(0, -1), 7e-7, "<&>\"", uint64(0), uint64(0), true, "\xff\u2028")
	f.Fuzz(func(t *testing.T, node uint32, id int64, class int, p0, p1 float64, sub int, hasBase bool, b0, b1 float64,
		model string, vv, gv uint64, stale bool, source string) {
		p := query.Prediction{Node: node, ID: id, Class: class, Probs: [2]float64{p0, p1}, Subgraphs: sub, Model: model,
			ViewVersion: vv, GraphVersion: gv, Stale: stale, Source: query.Source(source)}
		if hasBase {
			p.Variants = map[string][2]float64{model: {b0, b1}, "no_diffusion": {b1, b0}}
		}
		if _, err := json.Marshal(&p); err != nil {
			if _, ok := appendPrediction(nil, &p); ok {
				t.Fatalf("encoded what encoding/json rejects (%v)", err)
			}
			return
		}
		checkAppendPrediction(t, &p)
	})
}
