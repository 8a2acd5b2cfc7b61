package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"testing"

	"github.com/fasd-db/fasd/fasd"
)

// ensure that classifier.fallback_fasd = "check" serves w/o Diffusion
// exactly where fallBack rejects the debiased classifier on the validation
// metrics: the same run with the fallback off gives the two candidates,
// and the run with it on must report (and bundle) the one the check picks
// — w/o Diffusion's result and models flagged FellBack, or fasd's result
// unchanged. The seeds cover both outcomes (checked), and w/o Diffusion is
// trained for the check even when not asked for. With "significant" the
// outcome must be one of the two candidates as well, and a fall-back only
// where the debiased classifier is less fair on the validation nodes.
func TestFallback_FASD(t *testing.T) {
	if testing.Short() {
		t.Skip("trains score networks over several seeds")
	}
	cfg, err := Preset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Sens.Epochs, cfg.Score.Budget, cfg.Classifier.Epochs = 10, 300, 15
	outcomes := map[bool]int{}
	for s := uint64(0); s < 6; s++ {
		g := newToyGraph(160, 6, 6, 0.8, 0.3, 1, 30+s)
		in := g.input(t, s, 4)
		c := cfg
		c.Seed = s
		c.Classifier.FallbackFASD = string(FallbackOff)
		off, err := Run(context.Background(), c, in, &Options{Variants: []Variant{VariantFASD, VariantNoDiffusion}})
		if err != nil {
			t.Fatal(err)
		}
		c.Classifier.FallbackFASD = string(FallbackSignificant)
		sig, err := Run(context.Background(), c, in, &Options{Variants: []Variant{VariantFASD}})
		if err != nil {
			t.Fatal(err)
		}
		c.Classifier.FallbackFASD = string(FallbackCheck)
		on, err := Run(context.Background(), c, in, &Options{Variants: []Variant{VariantFASD}})
		if err != nil {
			t.Fatal(err)
		}
		if len(on.Variants) != 1 {
			t.Fatalf("seed %d: variants %d, want fasd alone (w/o Diffusion trained for the check, not reported)", s, len(on.Variants))
		}
		f0, nd := *off.Variant(VariantFASD), *off.Variant(VariantNoDiffusion)
		want := fallBack(&f0, &nd)
		outcomes[want]++
		got := *on.Variant(VariantFASD)
		if got.FellBack != want || on.Models.FellBack != want {
			t.Fatalf("seed %d: fell back %v (models %v), the check says %v", s, got.FellBack, on.Models.FellBack, want)
		}
		exp := f0
		if want {
			exp = nd
			exp.Variant, exp.FellBack = VariantFASD, true
		}
		if !sameResult(got, exp) {
			t.Errorf("seed %d (fell back %v): fasd result\n%+v\nwant\n%+v", s, want, got, exp)
		}
		gs := *sig.Variant(VariantFASD)
		exp = f0
		if gs.FellBack {
			exp = nd
			exp.Variant, exp.FellBack = VariantFASD, true
			if !(f0.Val.DP+f0.Val.EO > nd.Val.DP+nd.Val.EO) {
				t.Errorf("seed %d: significant fell back although fasd is as fair on validation", s)
			}
		}
		if !sameResult(gs, exp) || sig.Models.FellBack != gs.FellBack {
			t.Errorf("seed %d: significant (fell back %v) is neither candidate", s, gs.FellBack)
		}
		if on.Models.FBase == nil {
			t.Fatalf("seed %d: models lack the w/o-Diffusion classifier", s)
		}
		b, err := on.Models.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		m, err := UnmarshalModels(b)
		if err != nil || m.FellBack != want {
			t.Fatalf("seed %d: bundle round trip: %v, fell back %v", s, err, m != nil && m.FellBack)
		}
		t.Logf("seed %d: val ΔDP+ΔEO fasd %.3f w/o Diffusion %.3f, AUC %.3f / %.3f: fell back %v", s,
			f0.Val.DP+f0.Val.EO, nd.Val.DP+nd.Val.EO, f0.Val.AUC, nd.Val.AUC, want)
	}
	if outcomes[true] == 0 || outcomes[false] == 0 {
		t.Fatalf("the seeds cover one outcome only (%v): choose graphs where both occur", outcomes)
	}
}

// ensure that a bundle flagged FellBack needs the w/o-Diffusion classifier
// and a reader refuses a flag it cannot honour.
func TestFallback_BundleChecks(t *testing.T) {
	cfg, err := Preset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	m, err := newModels(&cfg, 4, true, true, true, false, fasd.NewRand(1))
	if err != nil {
		t.Fatal(err)
	}
	m.FellBack = true
	if _, err := m.MarshalBinary(); err == nil {
		t.Fatal("a fell-back bundle without f_base was written")
	}
	if m, err = newModels(&cfg, 4, true, true, true, true, fasd.NewRand(1)); err != nil {
		t.Fatal(err)
	}
	m.FellBack = true
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// The same bundle claiming the format of bundles without the flag
	// (as a reader that predates it would take it): refused.
	old := []byte(`"format":2,`)
	if bytes.Count(b, old) != 1 {
		t.Fatalf("header %q not found once", old)
	}
	// Same length, so the header length stays right; re-seal the checksum.
	b = bytes.Replace(b, old, []byte(`"format":1,`), 1)
	sum := sha256.Sum256(b[:len(b)-32])
	copy(b[len(b)-32:], sum[:])
	if _, err := UnmarshalModels(b); err == nil {
		t.Fatal("a fell-back bundle in format 1 was accepted")
	}
}

// ensure that the paired bootstrap of fallback_fasd = "significant" flags
// a debiased classifier that is clearly less fair on many validation
// nodes, and keeps it when it is as fair, fairer, only slightly less fair
// on a few nodes, or when a (group, label) cell is empty; and that it is
// deterministic for a seed.
func TestLessFairOnValidation(t *testing.T) {
	// mk builds m validation nodes in four equal (group, label) cells and
	// P(1) of two models: a model predicts 1 on a node of group s and
	// label y with probability rate(s, y) (deterministic per node).
	type rates func(s, y int) float64
	mk := func(m int, deb, orig rates, dropCell int) (*evalData, *VariantResult, *VariantResult) {
		ev := &evalData{numNodes: m, labels: make([]int8, m), sens: make([]int8, m)}
		d, o := &VariantResult{Threshold: 0.5}, &VariantResult{Threshold: 0.5}
		rng := fasd.NewRand(77)
		for u := 0; u < m; u++ {
			s, y := u%2, (u/2)%2
			if 2*s+y == dropCell {
				continue
			}
			ev.labels[u], ev.sens[u] = int8(y), int8(s)
			ev.val = append(ev.val, uint32(u))
			score := func(r rates) float64 {
				if rng.Float64() < r(s, y) {
					return 0.9
				}
				return 0.1
			}
			d.ValScores = append(d.ValScores, score(deb))
			o.ValScores = append(o.ValScores, score(orig))
		}
		return ev, d, o
	}
	fair := func(s, y int) float64 { return 0.2 + 0.6*float64(y) }
	biased := func(k float64) rates {
		return func(s, y int) float64 { return min(1, 0.2+0.6*float64(y)+k*float64(s)) }
	}
	for _, tc := range []struct {
		name      string
		m         int
		deb, orig rates
		drop      int
		want      bool
	}{
		{"clearly less fair, many nodes", 4000, biased(0.15), fair, -1, true},
		{"identical", 4000, fair, fair, -1, false},
		{"fairer", 4000, fair, biased(0.15), -1, false},
		{"slightly less fair, few nodes", 80, biased(0.05), fair, -1, false},
		{"empty cell", 4000, biased(0.3), fair, 3, false},
	} {
		ev, d, o := mk(tc.m, tc.deb, tc.orig, tc.drop)
		got := lessFairOnValidation(ev, d, o, fasd.NewRand(1))
		if got != tc.want {
			t.Errorf("%s: less fair %v, want %v", tc.name, got, tc.want)
		}
		if again := lessFairOnValidation(ev, d, o, fasd.NewRand(1)); again != got {
			t.Errorf("%s: not deterministic", tc.name)
		}
	}
	// Missing validation scores keep the debiased model.
	ev, d, o := mk(400, biased(0.5), fair, -1)
	d.ValScores = nil
	if lessFairOnValidation(ev, d, o, fasd.NewRand(1)) {
		t.Error("fell back without validation scores")
	}
}
