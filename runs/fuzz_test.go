package runs

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd/nn"
	"github.com/fasd-db/fasd/fasd/pipeline"
)

// smallBundle returns the body (without its SHA-256 trailer) of a model
// bundle with small random classifiers f and f_base, as fasd train stores
// it.
func smallBundle(tb testing.TB) []byte {
	tb.Helper()
	cfg, err := pipeline.Preset("synth")
	if err != nil {
		tb.Fatal(err)
	}
	cfg.Classifier.Hidden = 4
	const d = 3
	m := &pipeline.Models{Config: cfg, D: d, FeatureHash: pipeline.FeatureHash([]string{"a", "b", "c"})}
	rng := rand.New(rand.NewPCG(5, 6))
	arch := nn.GCNNetConfig{In: d, GCN: []int{4, 4}, FC: []int{4}, Out: 2}
	if m.F, err = nn.NewGCNNet[float32](arch, rng); err != nil {
		tb.Fatal(err)
	}
	if m.FBase, err = nn.NewGCNNet[float32](arch, rng); err != nil {
		tb.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := pipeline.UnmarshalModels(b); err != nil {
		tb.Fatalf("the seed bundle does not decode: %v", err)
	}
	return b[:len(b)-sha256.Size]
}

// FuzzModelBundle feeds the stored model-bundle decoder (what LoadModels
// runs on a run's chunks) arbitrary bodies with their SHA-256 trailer
// recomputed, so that the checksum, checked first, stops no input and
// the fuzzer reaches the header and parameter decoding; the raw input is
// decoded too. Nothing may panic, and an accepted bundle must re-encode to
// the same bytes. The seeds start with the real magic bytes.
func FuzzModelBundle(f *testing.F) {
	body := smallBundle(f)
	f.Add(body)
	f.Add(body[:40])
	f.Add(append([]byte(nil), body[:len(body)-7]...))
	f.Add([]byte("FASDMDL\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sum := sha256.Sum256(data)
		for _, in := range [][]byte{append(append([]byte(nil), data...), sum[:]...), data} {
			m, err := pipeline.UnmarshalModels(in)
			if err != nil {
				continue
			}
			again, err := m.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, in) {
				t.Fatal("an accepted bundle does not re-encode to the same bytes")
			}
		}
	})
}
