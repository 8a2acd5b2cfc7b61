package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseRetune(t *testing.T) {
	cases := []struct {
		in      string
		want    []string // labels
		wantErr bool
	}{
		{in: "debias.dt_rev=0.05", want: []string{"debias.dt_rev=0.05"}},
		{in: " debias.dt_rev=0.05 ; debias.dt_rev=0.05, debias.steps=10 ;", want: []string{"debias.dt_rev=0.05", "debias.dt_rev=0.05,debias.steps=10"}},
		{in: "", wantErr: true},
		{in: " ; ", wantErr: true},
	}
	for _, c := range cases {
		rs, err := ParseRetune(c.in)
		if (err != nil) != c.wantErr {
			t.Fatalf("ParseRetune(%q): err %v, want error %v", c.in, err, c.wantErr)
		}
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Errorf("ParseRetune(%q): %v is not ErrConfig", c.in, err)
			}
			continue
		}
		var got []string
		for _, r := range rs {
			got = append(got, r.Label())
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("ParseRetune(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestRetune_Apply(t *testing.T) {
	base, err := Preset("nba")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		set     []string
		wantErr bool
	}{
		{set: []string{"debias.dt_rev=0.05", "debias.steps=10"}},
		{set: []string{"debias.tau=0.3"}},
		{set: []string{"score.epochs=3"}, wantErr: true},       // needs retraining
		{set: []string{"diffusion.lambda_x=1"}, wantErr: true}, // needs retraining
		{set: []string{"debias.steps=-1"}, wantErr: true},      // invalid value
		{set: []string{"debias.nope=1"}, wantErr: true},        // unknown key
		{set: []string{"debias.steps"}, wantErr: true},         // not key=value
	}
	for _, c := range cases {
		got, err := Retune{Set: c.set}.Apply(base)
		if (err != nil) != c.wantErr {
			t.Errorf("Apply(%v): err %v, want error %v", c.set, err, c.wantErr)
			continue
		}
		if err == nil && c.set[0] == "debias.dt_rev=0.05" && (got.Debias.DtRev != 0.05 || got.Debias.Steps != 10 || base.Debias.DtRev == 0.05) {
			t.Errorf("Apply(%v): got dt_rev %v steps %d (base dt_rev %v)", c.set, got.Debias.DtRev, got.Debias.Steps, base.Debias.DtRev)
		}
	}
}

// A retune that repeats the run's own debiasing settings must reproduce the
// base variants exactly (same networks, same f seeds); a different Δt_rev
// must edit the subgraphs more.
func TestRun_RetuneReusesScoreNetworks(t *testing.T) {
	g := newToyGraph(160, 8, 8, 0.8, 0.4, 0.8, 2)
	in := g.input(t, 3, 5)
	cfg := fastConfig(t)
	cfg.Seed = 5
	same := fmt.Sprintf("debias.dt_rev=%v", cfg.Debias.DtRev)
	opt := &Options{
		Variants: []Variant{VariantFASD, VariantNoFairness},
		Retune:   []Retune{{Set: []string{same}}, {Name: "strong", Set: []string{"debias.dt_rev=0.05", "debias.steps=8"}}},
	}
	r, err := Run(context.Background(), cfg, in, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := []Variant{VariantFASD, Variant("fasd@" + same), "fasd@strong", VariantNoFairness, Variant("no_fairness@" + same), "no_fairness@strong"}
	if len(r.Variants) != len(want) {
		t.Fatalf("got %d variants, want %v", len(r.Variants), want)
	}
	for i, v := range r.Variants {
		if v.Variant != want[i] {
			t.Fatalf("variant %d is %q, want %q", i, v.Variant, want[i])
		}
	}
	for _, pair := range [][2]int{{0, 1}, {3, 4}} {
		a, b := r.Variants[pair[0]], r.Variants[pair[1]]
		if a.Test != b.Test || a.BestEpoch != b.BestEpoch {
			t.Errorf("%s %+v (epoch %d) != %s %+v (epoch %d)", a.Variant, a.Test, a.BestEpoch, b.Variant, b.Test, b.BestEpoch)
		}
	}
	for _, k := range []int{1, 2, 4, 5} {
		if r.Variants[k].Edits == nil {
			t.Fatalf("%s: no edit statistics", r.Variants[k].Variant)
		}
	}
	if s, w := r.Variants[2].Edits.FeatureChange, r.Variants[1].Edits.FeatureChange; !(s > w) {
		t.Errorf("stronger debiasing changed features by %v, default by %v", s, w)
	}
}

// FuzzParseRetune: the grid parser never panics, never yields empty
// settings or assignments, and re-parsing the labels of what it accepted
// gives the same grid.
func FuzzParseRetune(f *testing.F) {
	for _, s := range []string{"debias.dt_rev=0.05", "debias.dt_rev=0.05,debias.steps=10;debias.tau=0.3", ";;", " , ;", "a=b=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseRetune(s)
		if err != nil {
			return
		}
		labels := make([]string, len(rs))
		for i, r := range rs {
			if len(r.Set) == 0 {
				t.Fatalf("%q: empty setting %d", s, i)
			}
			for _, kv := range r.Set {
				if kv == "" || strings.TrimSpace(kv) != kv || strings.ContainsAny(kv, ",;") {
					t.Fatalf("%q: assignment %q", s, kv)
				}
			}
			labels[i] = r.Label()
		}
		again, err := ParseRetune(strings.Join(labels, ";"))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(rs) {
			t.Fatalf("%q: re-parse of %v gave %v (%v)", s, labels, again, err)
		}
	})
}
