package pipeline

import (
	"context"
	"testing"
)

// FuzzUnmarshalModels checks that arbitrary bytes never panic the bundle
// decoder and that whatever it accepts re-encodes to the same bytes.
func FuzzUnmarshalModels(f *testing.F) {
	g := newToyGraph(60, 3, 5, 0.8, 0.4, 0.8, 9)
	in := g.input(f, 1, 4)
	cfg := fastConfig(f)
	cfg.Sens.Epochs, cfg.Score.Epochs, cfg.Classifier.Epochs = 1, 1, 1
	cfg.Sens.Hidden, cfg.Classifier.Hidden = 8, 8
	res, err := Run(context.Background(), cfg, in, &Options{Variants: []Variant{VariantFASD, VariantNoDiffusion}})
	if err != nil {
		f.Fatal(err)
	}
	b, err := res.Models.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:100])
	f.Add([]byte("FASDMDL\\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := UnmarshalModels(data)
		if err != nil {
			return
		}
		again, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != string(data) {
			t.Fatal("accepted bundle does not re-encode to the same bytes")
		}
	})
}
