package pipeline

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/nn"
)

// archCase builds validation data of n nodes (labels alternating, groups
// in blocks of four) and the two models' validation results from score
// functions of the node index and its label.
func archCase(n int, root, plain func(i int, y int8) float64) (*evalData, *VariantResult, *VariantResult) {
	ev := &evalData{numNodes: n, labels: make([]int8, n), sens: make([]int8, n), thr: 0.5}
	r, p := &VariantResult{}, &VariantResult{}
	for i := 0; i < n; i++ {
		ev.val = append(ev.val, uint32(i))
		ev.labels[i] = int8(i % 2)
		ev.sens[i] = int8((i / 4) % 2)
		r.ValScores = append(r.ValScores, root(i, ev.labels[i]))
		p.ValScores = append(p.ValScores, plain(i, ev.labels[i]))
	}
	return ev, r, p
}

// ensure that root weights are kept only on significantly better and no
// less fair validation rankings, and that thin evidence keeps the paper's
// layers.
func TestRootBetterOnValidation(t *testing.T) {
	// noisy ranks the labels with overlap: a deterministic hash of i.
	noisy := func(i int, y int8) float64 {
		h := float64((i*7919)%101) / 101
		return 0.35*float64(y) + 0.65*h
	}
	perfect := func(i int, y int8) float64 { return 0.1 + 0.8*float64(y) + 0.001*float64(i%7) }
	nudged := func(i int, y int8) float64 { // noisy, one positive lifted
		if i == 1 {
			return 0.99
		}
		return noisy(i, y)
	}
	for _, c := range []struct {
		name        string
		n           int
		root, plain func(int, int8) float64
		gapR, gapP  float64
		drop        bool // root's scores missing
		oneClass    bool
		want        bool
		reason      ArchReason
	}{
		{name: "clearly better", n: 400, root: perfect, plain: noisy, want: true, reason: ArchRootBetter},
		{name: "same scores", n: 400, root: noisy, plain: noisy, reason: ArchNotHigher},
		{name: "worse", n: 400, root: noisy, plain: perfect, reason: ArchNotHigher},
		{name: "better by one node, not significant", n: 400, root: nudged, plain: noisy, reason: ArchNotSignificant},
		{name: "better but less fair", n: 400, root: perfect, plain: noisy, gapR: 0.2, gapP: 0.1, reason: ArchLessFair},
		{name: "better and fairer", n: 400, root: perfect, plain: noisy, gapR: 0.1, gapP: 0.2, want: true, reason: ArchRootBetter},
		{name: "fairness undefined", n: 400, root: perfect, plain: noisy, gapR: math.NaN(), gapP: 0.1, want: true, reason: ArchRootBetter},
		{name: "too few nodes to tell", n: 8, root: perfect, plain: noisy, reason: ArchNotSignificant},
		{name: "scores missing", n: 400, root: perfect, plain: noisy, drop: true, reason: ArchNoEvidence},
		{name: "one validation class", n: 400, root: perfect, plain: noisy, oneClass: true, reason: ArchNoEvidence},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev, r, p := archCase(c.n, c.root, c.plain)
			r.Val.DP, p.Val.DP = Num(c.gapR), Num(c.gapP)
			if c.drop {
				r.ValScores = r.ValScores[:c.n-1]
			}
			if c.oneClass {
				for i := range ev.labels {
					ev.labels[i] = 1
				}
			}
			e := archCheck(ev, r, p, ArchFairPoint, fasd.NewRand(1))
			if got := e.Reason == ArchRootBetter; got != c.want {
				t.Fatalf("root kept = %v, want %v (evidence %+v)", got, c.want, e)
			}
			if e.Reason != c.reason {
				t.Errorf("reason %q, want %q (evidence %+v)", e.Reason, c.reason, e)
			}
			// The figures behind the reason are reported: AUCs once both
			// are computed, the share once the resamples ran.
			if auc := !math.IsNaN(float64(e.RootAUC)) && !math.IsNaN(float64(e.PaperAUC)); auc != (c.reason != ArchNoEvidence && c.reason != ArchLessFair) {
				t.Errorf("AUCs %v, %v under reason %q", e.RootAUC, e.PaperAUC, e.Reason)
			}
			if share := !math.IsNaN(float64(e.Share)); share != (c.reason == ArchRootBetter || c.reason == ArchNotSignificant) ||
				share && (e.Share < 0 || e.Share > 1 || (e.Share <= archLevel) != (c.reason == ArchRootBetter)) {
				t.Errorf("share %v under reason %q", e.Share, e.Reason)
			}
		})
	}
}

// ensure that classifier.arch = "auto" returns, bit for bit, one of the
// two networks "gcn" and "root" train on the same run, says which, and
// counts both in its progress units.
func TestTrainClassifierAuto_OneOfTheArms(t *testing.T) {
	g := newToyGraph(150, 6, 8, 0.8, 0.4, 0.8, 2)
	in := g.input(t, 5, 5)
	res := map[Arch]*Result{}
	for _, arch := range []Arch{ArchGCN, ArchRoot, ArchAuto} {
		cfg := fastConfig(t)
		cfg.Seed = 9
		cfg.Classifier.Arch = string(arch)
		var last, total int
		r, err := Run(context.Background(), cfg, in, &Options{Variants: []Variant{VariantFASD, VariantNoDiffusion},
			Callbacks: Callbacks{Progress: func(s Stage, done, tot int) {
				if s == StageClassifier {
					last, total = done, tot
				}
			}}})
		if err != nil {
			t.Fatal(err)
		}
		res[arch] = r
		if want := ClassifierUnits(&cfg, len(in.Subgraphs)); total != want || last > total {
			t.Errorf("%s: progress %d of %d, want of %d", arch, last, total, want)
		}
		if arch == ArchAuto && last <= classifierArmUnits(&cfg, len(in.Subgraphs))/2 {
			t.Errorf("auto: progress ended at %d of %d: the second arm did not continue the first", last, total)
		}
	}
	for _, v := range []Variant{VariantFASD, VariantNoDiffusion} {
		a := res[ArchAuto].Variant(v)
		arm := Arch(a.Arch)
		if arm != ArchGCN && arm != ArchRoot {
			t.Fatalf("%s: auto chose %q", v, a.Arch)
		}
		b := res[arm].Variant(v)
		if a.Test != b.Test || a.Val != b.Val || a.BestEpoch != b.BestEpoch || a.Threshold != b.Threshold {
			t.Errorf("%s: auto (%s) differs from the %s run: %+v vs %+v", v, arm, arm, a.Test, b.Test)
		}
		if b.Arch != "" || b.ArchEvidence != nil {
			t.Errorf("%s: arch %q (evidence %v) reported outside auto", v, b.Arch, b.ArchEvidence)
		}
		if e := a.ArchEvidence; e == nil || (e.Reason == ArchRootBetter) != (arm == ArchRoot) {
			t.Errorf("%s: auto chose %s with evidence %+v", v, arm, e)
		}
	}
	if got, want := res[ArchAuto].Models.F.Config.Root, res[ArchAuto].Variant(VariantFASD).Arch == string(ArchRoot); got != want {
		t.Errorf("served f has root weights %v, auto chose %q", got, res[ArchAuto].Variant(VariantFASD).Arch)
	}
}

// ensure that a bundle under classifier.arch = "auto" records each
// classifier's own architecture, decodes it, and refuses a header that
// leaves it out or records it under another value of classifier.arch.
func TestModels_AutoArch(t *testing.T) {
	cfg := fastConfig(t)
	cfg.Classifier.Arch = string(ArchAuto)
	const d = 4
	m, err := newModels(&cfg, d, false, false, true, true, fasd.NewRand(1))
	if err != nil {
		t.Fatal(err)
	}
	if m.F, err = nn.NewGCNNet[float32](classifierArchRoot(&cfg, d, true), fasd.NewRand(2)); err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalModels(b)
	if err != nil {
		t.Fatal(err)
	}
	if !got.F.Config.Root || got.FBase.Config.Root {
		t.Fatalf("decoded root weights f %v, f_base %v; want true, false", got.F.Config.Root, got.FBase.Config.Root)
	}
	if b2, _ := got.MarshalBinary(); !bytes.Equal(b, b2) {
		t.Fatal("re-marshalled bundle differs")
	}
	for i, p := range got.F.Params() {
		if !slices.Equal(p.Value.Data, m.F.Params()[i].Value.Data) {
			t.Fatalf("f parameter %d differs after the round trip", i)
		}
	}
	has := map[string]bool{"f": true, "f_base": true}
	tr := true
	for _, c := range []struct {
		name string
		arch Arch
		hdr  bundleHeader
	}{
		{"auto without f_root", ArchAuto, bundleHeader{FBaseRoot: &tr}},
		{"auto without f_base_root", ArchAuto, bundleHeader{FRoot: &tr}},
		{"f_root under gcn", ArchGCN, bundleHeader{FRoot: &tr}},
		{"f_base_root under root", ArchRoot, bundleHeader{FBaseRoot: &tr}},
	} {
		mm := &Models{Config: cfg, D: d}
		mm.Config.Classifier.Arch = string(c.arch)
		if err := mm.resolveArch(&c.hdr, has); !errors.Is(err, ErrModels) {
			t.Errorf("%s: %v, want ErrModels", c.name, err)
		}
	}
}

// ensure that under classifier.arch_fair = "significant" a larger
// validation ΔDP + ΔEO rules root weights out only when the paired
// bootstrap says so, and that the default ("point") is unchanged.
func TestArchCheck_FairSignificant(t *testing.T) {
	noisy := func(i int, y int8) float64 {
		h := float64((i*7919)%101) / 101
		return 0.35*float64(y) + 0.65*h
	}
	perfect := func(i int, y int8) float64 { return 0.1 + 0.8*float64(y) + 0.001*float64(i%7) }
	// biased ranks perfectly but, at its threshold 0.9, predicts only
	// group 1's positives: ΔDP 0.5, ΔEO 1.
	biased := func(i int, y int8) float64 { return 0.1 + 0.75*float64(y) + 0.1*float64((i/4)%2) }
	// val sets a result's validation metrics from its scores.
	val := func(ev *evalData, r *VariantResult, thr float64) {
		p1 := make([]float64, ev.numNodes)
		copy(p1, r.ValScores)
		m, err := fasd.EvaluateScores(p1, thr, ev.labels, ev.sens, ev.val)
		if err != nil {
			t.Fatal(err)
		}
		r.Val, r.Threshold = metricsOf(m), Num(thr)
	}
	for _, c := range []struct {
		name         string
		root         func(int, int8) float64
		rootThr      float64
		gapR, gapP   float64 // forced validation ΔDP (NaN: from the scores)
		point, signf ArchReason
	}{
		// root is fairer on every resample; the point estimate is forced.
		{"point estimate only", perfect, 0.5, 0.2, 0.1, ArchLessFair, ArchRootBetter},
		{"significantly less fair", biased, 0.9, math.NaN(), math.NaN(), ArchLessFair, ArchLessFair},
		{"fairer", perfect, 0.5, math.NaN(), math.NaN(), ArchRootBetter, ArchRootBetter},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range []ArchFair{ArchFairPoint, ArchFairSignificant} {
				ev, r, p := archCase(400, c.root, noisy)
				val(ev, r, c.rootThr)
				val(ev, p, 0.5)
				if !math.IsNaN(c.gapR) {
					r.Val.DP, p.Val.DP, r.Val.EO, p.Val.EO = Num(c.gapR), Num(c.gapP), 0, 0
				}
				e := archCheck(ev, r, p, mode, fasd.NewRand(1))
				want := c.point
				if mode == ArchFairSignificant {
					want = c.signf
				}
				if e.Reason != want {
					t.Errorf("%s: reason %q, want %q (evidence %+v)", mode, e.Reason, want, e)
				}
				larger := r.Val.DP+r.Val.EO > p.Val.DP+p.Val.EO
				if reached := !math.IsNaN(float64(e.FairShare)); reached != (mode == ArchFairSignificant && larger) {
					t.Errorf("%s: fair share %v (root's ΔDP + ΔEO the larger: %v)", mode, e.FairShare, larger)
				}
				if mode == ArchFairSignificant && larger && (e.FairShare <= archLevel) != (e.Reason == ArchLessFair) {
					t.Errorf("%s: fair share %v with reason %q", mode, e.FairShare, e.Reason)
				}
			}
		})
	}
}

// ensure that fairShare is 1 for identical networks, 0 for one that is
// unfair on every resample, and that it is a share.
func TestFairShare(t *testing.T) {
	perfect := func(i int, y int8) float64 { return 0.1 + 0.8*float64(y) }
	biased := func(i int, y int8) float64 { return 0.1 + 0.75*float64(y) + 0.1*float64((i/4)%2) }
	ev, r, p := archCase(200, perfect, perfect)
	r.Threshold, p.Threshold = 0.5, 0.5
	if got := fairShare(ev, r, p, fasd.NewRand(1)); got != 1 {
		t.Errorf("identical networks: %v, want 1", got)
	}
	ev, r, p = archCase(200, biased, perfect)
	r.Threshold, p.Threshold = 0.9, 0.5
	if got := fairShare(ev, r, p, fasd.NewRand(1)); got != 0 {
		t.Errorf("root unfair everywhere: %v, want 0", got)
	}
	if got := fairShare(ev, p, r, fasd.NewRand(1)); got != 1 {
		t.Errorf("root fair everywhere: %v, want 1", got)
	}
}
