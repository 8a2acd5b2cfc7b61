package pipeline

import (
	"context"
	"math"
	"slices"
	"testing"
)

func TestFindSensFeature(t *testing.T) {
	sens := []int8{0, 1, -1, 1, 0}
	for _, tc := range []struct {
		name string
		x    []float32 // 5×2
		want sensFlip
		ok   bool
	}{
		{"second column", []float32{0.3, 2, 0.1, 5, 9, 7, 0.2, 5, 0.3, 2}, sensFlip{col: 1, v0: 2, v1: 5}, true},
		{"first column, unknown group ignored", []float32{0, 1, 1, 2, 0.5, 3, 1, 4, 0, 5}, sensFlip{col: 0, v0: 0, v1: 1}, true},
		{"no column", []float32{0, 1, 1, 2, 0, 3, 0, 4, 0, 5}, sensFlip{}, false},
		{"constant column", []float32{1, 0, 1, 2, 1, 3, 1, 4, 1, 5}, sensFlip{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := findSensFeature(tc.x, 2, sens)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("got %+v %v, want %+v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	f := sensFlip{col: 1, v0: 2, v1: 5}
	x := []float32{0.3, 2, 0.1, 5, 9, 7}
	if got, want := f.rows(x, 2), []float32{0.3, 5, 0.1, 2, 9, 7}; !slices.Equal(got, want) {
		t.Fatalf("rows: %v, want %v", got, want)
	}
	if x[1] != 2 {
		t.Fatal("rows modified its input")
	}
}

// sensFeatureInput is the toy graph with feature 0 replaced by the
// sensitive attribute (as NIFTY keeps it); corr ties the labels to it.
func sensFeatureInput(t *testing.T, corr float64) *Input {
	t.Helper()
	g := newToyGraph(240, 6, 8, 0.7, corr, 0.2, 9)
	for v := 0; v < g.n; v++ {
		g.x[v*g.d] = float32(g.s[v])
	}
	return g.input(t, 1, 5)
}

// Ensure that the counterfactual share is measured for every variant when
// a feature encodes the sensitive attribute, only then, and that it sees
// a model's reliance on that feature: labels that follow the attribute
// make the MLP's predictions flip with it far more often than labels
// independent of it.
func TestCounterfactual(t *testing.T) {
	cfg := fastConfig(t)
	all := []Variant{VariantFASD, VariantFASDGCN, VariantNoDiffusion, VariantGCN, VariantMLP, VariantMajority}
	run := func(in *Input, on bool, vs []Variant) map[Variant]float64 {
		t.Helper()
		r, err := Run(context.Background(), cfg, in, &Options{Variants: vs, Counterfactual: on})
		if err != nil {
			t.Fatal(err)
		}
		out := map[Variant]float64{}
		for _, vr := range r.Variants {
			out[vr.Variant] = math.NaN()
			if vr.Counterfactual != nil {
				out[vr.Variant] = float64(*vr.Counterfactual)
			}
		}
		return out
	}
	biased := sensFeatureInput(t, 0.95)
	got := run(biased, true, all)
	for _, v := range all {
		if cf := got[v]; !(cf >= 0 && cf <= 1) {
			t.Errorf("%s: counterfactual share %v, want in [0, 1]", v, cf)
		}
	}
	if got[VariantMajority] != 0 {
		t.Errorf("majority: counterfactual share %v, want 0", got[VariantMajority])
	}
	for v, cf := range run(biased, false, []Variant{VariantGCN, VariantMLP}) {
		if !math.IsNaN(cf) {
			t.Errorf("%s: counterfactual share %v with Options.Counterfactual off", v, cf)
		}
	}
	plain := newToyGraph(240, 6, 8, 0.7, 0.95, 0.2, 9).input(t, 1, 5) // no feature is the attribute
	for v, cf := range run(plain, true, []Variant{VariantMLP}) {
		if !math.IsNaN(cf) {
			t.Errorf("%s: counterfactual share %v without a sensitive feature", v, cf)
		}
	}
	fair := run(sensFeatureInput(t, 0), true, []Variant{VariantMLP})[VariantMLP]
	t.Logf("counterfactual shares: %v; MLP on independent labels %.3f", got, fair)
	if !(got[VariantMLP] > fair+0.2) {
		t.Errorf("MLP counterfactual share %.3f with labels following the attribute, %.3f without: want a clear gap", got[VariantMLP], fair)
	}
}
