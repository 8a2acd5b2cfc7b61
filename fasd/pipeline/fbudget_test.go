package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/nn"
)

// Ensure f's default budget: 15000·m^(1/3) subgraph-steps, at most epochs
// passes, at least one batch, growing sublinearly.
func TestClassifierBudget(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		m, batch, epochs     int
		lo, hi               int
		passesLo, passesHigh float64
	}{
		{"NBA: epoch cap", 313, 64, 300, 93900, 93900, 300, 300},
		{"Income", 8411, 64, 300, 305000, 305100, 36.2, 36.3},
		{"Pokec-z size", 27115, 64, 300, 450600, 450700, 16.6, 16.7},
		{"1M-node graph", 769753, 64, 300, 1374600, 1374800, 1.78, 1.79},
		{"epoch cap", 10, 64, 300, 3000, 3000, 300, 300},
		{"one batch", 1, 64, 10, 64, 64, 64, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := ClassifierBudget(tc.m, tc.batch, tc.epochs)
			if b < tc.lo || b > tc.hi {
				t.Errorf("ClassifierBudget(%d, %d, %d) = %d, want in [%d, %d]", tc.m, tc.batch, tc.epochs, b, tc.lo, tc.hi)
			}
			if p := float64(b) / float64(tc.m); p < tc.passesLo || p > tc.passesHigh {
				t.Errorf("%d subgraph-steps are %.3f passes, want in [%v, %v]", b, p, tc.passesLo, tc.passesHigh)
			}
		})
	}
	// Sublinear: 10× the subgraphs, at most 2.2× the budget.
	if a, b := ClassifierBudget(10000, 64, 300), ClassifierBudget(100000, 64, 300); float64(b)/float64(a) > 2.2 {
		t.Errorf("budget grows %d → %d for 10× the subgraphs", a, b)
	}
}

// Ensure the step plan: ceil(budget/batch) steps, an evaluation every
// steps/evals steps and at the last one, the budget derived when 0.
func TestPlanClassifier(t *testing.T) {
	for _, tc := range []struct {
		name                          string
		budget, batch, evals, m       int
		steps, every, nEvals, wantBud int
	}{
		{"even", 640, 64, 5, 100, 10, 2, 5, 640},
		{"remainder", 650, 64, 3, 100, 11, 3, 4, 650},
		{"more evals than steps", 128, 64, 20, 100, 2, 1, 2, 128},
		{"derived", 0, 64, 20, 313, 1468, 73, 21, ClassifierBudget(313, 64, 300)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := ClassifierConfig{Budget: tc.budget, Batch: tc.batch, Evals: tc.evals, Epochs: 300}
			p := planClassifier(&fc, tc.m)
			if p.steps != tc.steps || p.evalEvery != tc.every || p.evals != tc.nEvals || p.budget != tc.wantBud {
				t.Errorf("plan %+v, want steps %d, every %d, evals %d, budget %d", p, tc.steps, tc.every, tc.nEvals, tc.wantBud)
			}
		})
	}
	cfg := fastConfig(t)
	if u := ClassifierUnits(&cfg, 100); u != cfg.Classifier.Epochs {
		t.Errorf("epochs schedule: %d units, want %d epochs", u, cfg.Classifier.Epochs)
	}
	cfg.Classifier.Schedule, cfg.Classifier.Budget = ClassBudget, 640
	if u := ClassifierUnits(&cfg, 100); u != 10 {
		t.Errorf("budget schedule: %d units, want 10 steps", u)
	}
}

// Ensure the validation sample: at most the cap, validation nodes only,
// ascending, the same for the same seed, every node when under the cap or
// uncapped; and that the covering subgraphs are exactly those holding a
// sampled node.
func TestFValNodes(t *testing.T) {
	val := make([]uint32, 500)
	for i := range val {
		val[i] = uint32(3*i + 1)
	}
	for _, tc := range []struct {
		name       string
		limit, len int
	}{
		{"capped", 100, 100},
		{"under the cap", 1000, 500},
		{"no cap", 0, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := fValNodes(val, tc.limit, fasd.NewRand(5))
			b := fValNodes(val, tc.limit, fasd.NewRand(5))
			if len(a) != tc.len || !slices.Equal(a, b) || !slices.IsSorted(a) {
				t.Fatalf("%d nodes (want %d), same seed same nodes %v, sorted %v", len(a), tc.len, slices.Equal(a, b), slices.IsSorted(a))
			}
			for k, u := range a {
				if _, ok := slices.BinarySearch(val, u); !ok || (k > 0 && a[k-1] == u) {
					t.Fatalf("node %d not a validation node, or twice", u)
				}
			}
		})
	}
	if slices.Equal(fValNodes(val, 100, fasd.NewRand(5)), fValNodes(val, 100, fasd.NewRand(6))) {
		t.Error("seeds 5 and 6 drew the same sample")
	}

	in := newToyGraph(120, 4, 5, 0.8, 0.4, 0.8, 3).input(t, 1, 4)
	sgs, _, v, _, err := in.validate()
	if err != nil {
		t.Fatal(err)
	}
	nodes := fValNodes(v, 5, fasd.NewRand(1))
	cover := coveringSubgraphs(sgs, nodes, in.NumNodes)
	if len(cover) == 0 || len(cover) == len(sgs) {
		t.Fatalf("setup: %d of %d subgraphs cover 5 nodes", len(cover), len(sgs))
	}
	for i, g := range sgs {
		holds := slices.ContainsFunc(g.Nodes, func(u uint32) bool { return slices.Contains(nodes, u) })
		if _, in := slices.BinarySearch(cover, i); in != holds {
			t.Errorf("subgraph %d: covering %v, holds a sampled node %v", i, in, holds)
		}
	}
}

// fBudgetCase trains f under the budget schedule on the original
// subgraphs of in and returns its weights and result.
func fBudgetCase(t *testing.T, cfg Config, in *Input) ([]float32, VariantResult) {
	t.Helper()
	sgs, train, val, test, err := in.validate()
	if err != nil {
		t.Fatal(err)
	}
	ev := newEvalData(&cfg, in, train, val, test)
	w := nn.NewWorkers[float32](2)
	defer w.Close()
	f, vr, err := trainClassifier(context.Background(), &cfg, originalView(sgs, in.D, nil), in.D, w, ev, VariantNoDiffusion, 11, 12, &reporter{})
	if err != nil {
		t.Fatal(err)
	}
	var p []float32
	for _, q := range f.Params() {
		p = append(p, q.Value.Data...)
	}
	return p, vr
}

// jsonOf is x as JSON (NaN metrics as null, so that equal results compare
// equal).
func jsonOf(t *testing.T, x any) string {
	t.Helper()
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fBudgetConfig(t *testing.T) Config {
	cfg := fastConfig(t)
	cfg.Classifier.Schedule, cfg.Classifier.Batch, cfg.Classifier.Budget = ClassBudget, 16, 16*40
	cfg.Classifier.Evals, cfg.Classifier.EvalPatience, cfg.Classifier.ValCap = 10, 0, 20
	return cfg
}

// Ensure that the budget schedule takes the planned steps and evaluations,
// validates on the capped sample through its covering subgraphs, reports
// the full validation set's metrics, and is deterministic.
func TestTrainClassifierBudget_StepsAndDeterminism(t *testing.T) {
	in := newToyGraph(160, 6, 6, 0.8, 0.4, 0.8, 6).input(t, 1, 5)
	cfg := fBudgetConfig(t)
	p1, vr := fBudgetCase(t, cfg, in)
	st := vr.FBudget
	_, _, val, _, _ := in.validate()
	if st == nil {
		t.Fatal("no budget stats")
	}
	m := len(in.Subgraphs)
	wantSub := (40/((m+15)/16))*m + min(m, 40%((m+15)/16)*16) // whole passes, then the next pass's first batches
	if st.Budget != 640 || st.Steps != 40 || st.SubgraphSteps != wantSub || st.EvalEvery != 4 || st.Evals != 10 || len(vr.ValCurve) != 10 || st.StoppedEarly {
		t.Errorf("stats %+v (want 40 steps, %d subgraph-steps, 10 evaluations every 4), curve %d", *st, wantSub, len(vr.ValCurve))
	}
	if st.ValNodes != 20 || st.ValSubgraphs < 1 || st.ValSubgraphs >= m {
		t.Errorf("validated on %d nodes through %d of %d subgraphs, want 20 through fewer than all", st.ValNodes, st.ValSubgraphs, m)
	}
	if vr.Val.N != len(val) || vr.Test.N == 0 || vr.BestEpoch < 0 || st.BestStep != (vr.BestEpoch+1)*4 {
		t.Errorf("reported metrics on %d validation nodes (want all %d), %d test nodes, best evaluation %d at step %d",
			vr.Val.N, len(val), vr.Test.N, vr.BestEpoch, st.BestStep)
	}
	p2, vr2 := fBudgetCase(t, cfg, in)
	if !slices.Equal(p1, p2) || jsonOf(t, vr) != jsonOf(t, vr2) {
		t.Error("two runs with the same seeds differ")
	}
	cfg.Seed++
	if _, vr3 := fBudgetCase(t, cfg, in); reflect.DeepEqual(vr.FBudget, vr3.FBudget) && slices.Equal(vr.ValCurve, vr3.ValCurve) {
		t.Error("another run seed drew the same validation sample and curve")
	}
}

// Ensure that early stopping ends training eval_patience evaluations after
// the best one and that the weights returned are the best evaluation's:
// with every validation node in the sample and selection on accuracy, the
// full pass's validation accuracy equals the curve's at the best
// evaluation, not at the last.
func TestTrainClassifierBudget_EarlyStopKeepsBest(t *testing.T) {
	in := newToyGraph(160, 6, 6, 0.8, 0.4, 0.8, 6).input(t, 1, 5)
	cfg := fBudgetConfig(t)
	cfg.Classifier.LR = 0.2 // a noisy curve: the last evaluation is not the best
	cfg.Classifier.Budget, cfg.Classifier.Evals, cfg.Classifier.EvalPatience, cfg.Classifier.ValCap = 16*400, 200, 3, 0
	_, vr := fBudgetCase(t, cfg, in)
	st, c := vr.FBudget, vr.ValCurve
	if !st.StoppedEarly || st.Steps >= 400 || len(c) != vr.BestEpoch+4 {
		t.Fatalf("patience 3: %d steps, early %v, best evaluation %d of %d", st.Steps, st.StoppedEarly, vr.BestEpoch, len(c))
	}
	first := slices.Index(c, slices.Max(c))
	if vr.BestEpoch != first {
		t.Errorf("best evaluation %d, the curve's first maximum is %d: %v", vr.BestEpoch, first, c)
	}
	if !(c[len(c)-1] < c[vr.BestEpoch]) {
		t.Fatalf("setup: the last evaluation (%v) is as good as the best (%v)", c[len(c)-1], c[vr.BestEpoch])
	}
	if vr.ValAcc != c[vr.BestEpoch] {
		t.Errorf("validation accuracy of the weights kept %v, best evaluation's %v, last %v", vr.ValAcc, c[vr.BestEpoch], c[len(c)-1])
	}
}

// Ensure that no test label reaches the budget schedule's training or
// selection: rewriting every test label leaves the sample, the curve, the
// selected evaluation and the validation metrics as they were.
func TestTrainClassifierBudget_NoTestLabels(t *testing.T) {
	in := newToyGraph(160, 6, 6, 0.8, 0.4, 0.8, 6).input(t, 1, 5)
	flipped := *in
	flipped.Labels = slices.Clone(in.Labels)
	for v, sp := range in.Split {
		if sp == fasd.SplitTest {
			flipped.Labels[v] = 1 - flipped.Labels[v]
		}
	}
	for _, sel := range []Select{SelectAcc, SelectAUC} {
		t.Run(string(sel), func(t *testing.T) {
			cfg := fBudgetConfig(t)
			cfg.Classifier.Select = string(sel)
			pa, a := fBudgetCase(t, cfg, in)
			pb, b := fBudgetCase(t, cfg, &flipped)
			if !slices.Equal(pa, pb) || !reflect.DeepEqual(a.FBudget, b.FBudget) || !slices.Equal(a.ValCurve, b.ValCurve) ||
				a.BestEpoch != b.BestEpoch || jsonOf(t, a.Val) != jsonOf(t, b.Val) || a.Threshold != b.Threshold {
				t.Errorf("selection moved with the test labels: best %d/%d, curves %v / %v", a.BestEpoch, b.BestEpoch, a.ValCurve, b.ValCurve)
			}
			if math.Abs(float64(a.Test.Acc+b.Test.Acc)-1) > 1e-12 {
				t.Errorf("test accuracies %v and %v on complementary labels do not sum to 1", a.Test.Acc, b.Test.Acc)
			}
		})
	}
}

// Ensure that the budget schedule's options are validated.
func TestValidate_ClassifierBudget(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		ok         bool
	}{
		{"classifier.schedule", "budget", true},
		{"classifier.budget", "0", true},
		{"classifier.budget", "-1", false},
		{"classifier.evals", "0", false},
		{"classifier.eval_patience", "-1", false},
		{"classifier.val_cap", "0", true},
		{"classifier.val_cap", "-5", false},
	} {
		c, _ := Preset(DefaultPreset)
		if err := c.Set(tc.key, tc.value); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrConfig)) {
			t.Errorf("%s=%s: %v", tc.key, tc.value, err)
		}
	}
	for _, p := range Presets() {
		if c, _ := Preset(p); c.Classifier.Schedule != ClassEpochs {
			t.Errorf("preset %s: classifier.schedule %q, want epochs (the default stays off)", p, c.Classifier.Schedule)
		}
	}
}

// Ensure the estimate's shape of f under the budget schedule: passes of
// the expected steps, checks over the covering subgraphs plus one pass
// over all of them, and the cap at the whole budget; and that EstimateRun
// runs the schedule and reports it.
func TestEstimate_FBudget(t *testing.T) {
	cfg, err := Preset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Classifier.Schedule = ClassBudget
	cfg.Classifier.Arch = string(ArchGCN) // one f (auto doubles the shape: TestEstimateShapes)
	m := 27115
	sh := estimateShapes(&cfg, &cfg, m, 48, 0, 0, 5000)[StageClassifier]
	p := planClassifier(&cfg.Classifier, m)
	nb := float64((m + 63) / 64)
	exp := expectFSteps(&cfg.Classifier, p)
	if exp >= float64(p.steps) || sh.epochs != exp/nb || sh.maxEpochs != float64(p.steps)/nb ||
		sh.evalN != 5000 || sh.checks != math.Ceil(exp/float64(p.evalEvery))+float64(m)/5000 ||
		sh.maxChecks != float64(p.evals)+float64(m)/5000 || sh.trainScale != float64(m)/48 {
		t.Errorf("shape %+v, plan %+v, expected steps %v", sh, p, exp)
	}

	in := newToyGraph(160, 6, 6, 0.8, 0.4, 0.8, 6).input(t, 1, 5)
	fc := fastConfig(t)
	fc.Classifier.Schedule, fc.Classifier.EvalPatience = ClassBudget, 2
	est, err := EstimateRun(context.Background(), fc, in, &Options{Variants: []Variant{VariantNoDiffusion}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range est.Stages {
		if s.Stage == StageNoDiffusion && (!(s.Seconds > 0) || s.MaxSeconds < s.Seconds) {
			t.Errorf("%+v", s)
		}
	}
}

// Ensure that a run under the budget schedule trains every f variant by
// it and reports their stages in optimizer steps.
func TestRun_FBudget(t *testing.T) {
	in := newToyGraph(160, 6, 6, 0.8, 0.4, 0.8, 6).input(t, 1, 5)
	cfg := fastConfig(t)
	cfg.Classifier.Schedule, cfg.Classifier.Batch, cfg.Classifier.Budget = ClassBudget, 16, 16*30
	res, err := Run(context.Background(), cfg, in, &Options{Variants: []Variant{VariantFASD, VariantNoDiffusion, VariantNoFairness}})
	if err != nil {
		t.Fatal(err)
	}
	want := ClassifierUnits(&cfg, len(in.Subgraphs))
	if want != 30 {
		t.Fatalf("setup: %d steps planned, want 30", want)
	}
	for _, s := range res.Timings {
		if (s.Stage == StageClassifier || s.Stage == StageNoDiffusion || s.Stage == StageClassNoFair) && s.Units != want {
			t.Errorf("%s: %d units, want %d steps", s.Stage, s.Units, want)
		}
	}
	for _, v := range res.Variants {
		if v.FBudget == nil || v.FBudget.Steps < 1 || v.FBudget.Steps > want || v.Test.N == 0 {
			t.Errorf("%s: budget stats %+v, %d test nodes", v.Variant, v.FBudget, v.Test.N)
		}
	}
	if len(res.Variants) != 3 {
		t.Errorf("%d variants", len(res.Variants))
	}
}

// Ensure that a model bundle written before the budget schedule's keys
// existed (no classifier.schedule, budget, evals, eval_patience, val_cap)
// still decodes, with the epochs schedule.
func TestUnmarshalModels_BeforeFBudget(t *testing.T) {
	cfg := fastConfig(t)
	m, err := newModels(&cfg, 6, false, false, true, false, fasd.NewRand(1))
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	hl := int(le.Uint32(b[8:12]))
	var hdr bundleHeader
	if err := json.Unmarshal(b[12:12+hl], &hdr); err != nil {
		t.Fatal(err)
	}
	var kept []string
	section := ""
	for _, line := range strings.Split(hdr.Config, "\n") {
		if s := strings.TrimSpace(line); strings.HasPrefix(s, "[") {
			section = s
		} else if k, _, ok := strings.Cut(s, " ="); ok && section == "[classifier]" &&
			slices.Contains([]string{"schedule", "budget", "evals", "eval_patience", "val_cap"}, k) {
			continue
		}
		kept = append(kept, line)
	}
	if len(kept) != strings.Count(hdr.Config, "\n")+1-5 {
		t.Fatalf("setup: removed %d lines, want 5", strings.Count(hdr.Config, "\n")+1-len(kept))
	}
	hdr.Config = strings.Join(kept, "\n")
	hj, err := json.Marshal(hdr)
	if err != nil {
		t.Fatal(err)
	}
	old := append(append(append([]byte(nil), b[:8]...), le.AppendUint32(nil, uint32(len(hj)))...), hj...)
	old = append(old, b[12+hl:len(b)-32]...)
	sum := sha256.Sum256(old)
	old = append(old, sum[:]...)
	got, err := UnmarshalModels(old)
	if err != nil {
		t.Fatalf("bundle without the budget keys: %v", err)
	}
	if got.Config.Classifier.Schedule != ClassEpochs {
		t.Errorf("schedule %q, want epochs", got.Config.Classifier.Schedule)
	}
}
