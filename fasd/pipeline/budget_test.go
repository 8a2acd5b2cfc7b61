package pipeline

import (
	"context"
	"testing"

	"github.com/fasd-db/fasd/fasd/nn"
)

func TestAutoBudget(t *testing.T) {
	for _, tc := range []struct{ m, batch, lo, hi int }{
		{313, 128, 20000, 21000},   // NBA: ≈ 65 passes
		{27115, 128, 89000, 91000}, // Pokec-z size
		{1, 128, 1000, 1000},       // never more than 1000 passes
		{4, 2, 4000, 4000},
	} {
		if b := AutoBudget(tc.m, tc.batch); b < tc.lo || b > tc.hi {
			t.Errorf("AutoBudget(%d, %d) = %d, want in [%d, %d]", tc.m, tc.batch, b, tc.lo, tc.hi)
		}
	}
	// Sub-linear: 10× the subgraphs, less than 2.2× the budget.
	if a, b := AutoBudget(1000, 128), AutoBudget(10000, 128); float64(b)/float64(a) > 2.2 {
		t.Errorf("budget grows %d → %d for 10× the subgraphs", a, b)
	}
}

func TestPlanScore(t *testing.T) {
	sc := ScoreConfig{Schedule: "budget", Batch: 32, HoldOut: 0.1, Evals: 10, Budget: 3200}
	p := planScore(&sc, 100)
	if len(p.held) != 10 || len(p.train) != 90 || p.steps != 100 || p.evalEvery != 10 {
		t.Fatalf("plan %d held, %d train, %d steps, eval every %d", len(p.held), len(p.train), p.steps, p.evalEvery)
	}
	seen := map[int]bool{}
	for _, i := range append(append([]int(nil), p.held...), p.train...) {
		if seen[i] || i < 0 || i >= 100 {
			t.Fatalf("index %d twice or out of range", i)
		}
		seen[i] = true
	}
	sc.Schedule, sc.Epochs = "epochs", 7
	if p := planScore(&sc, 100); p.steps != 28 || len(p.held) != 0 || p.evalEvery != 0 {
		t.Fatalf("epochs plan: %+v", p)
	}
}

func TestPatience(t *testing.T) {
	p := patience{limit: 3}
	for i, tc := range []struct {
		improved, stop bool
	}{{true, false}, {false, false}, {false, false}, {true, false}, {false, false}, {false, false}, {false, true}} {
		if got := p.observe(tc.improved); got != tc.stop {
			t.Fatalf("step %d: stop %v, want %v", i, got, tc.stop)
		}
	}
	never := patience{}
	for i := 0; i < 100; i++ {
		if never.observe(false) {
			t.Fatal("limit 0 stopped")
		}
	}
}

// ensure that the budget schedule spends its budget (or stops early with
// patience), keeps the best held-out weights, and is deterministic.
func TestTrainScore_Budget(t *testing.T) {
	g := newToyGraph(120, 6, 6, 0.8, 0.4, 0.8, 6)
	in := g.input(t, 1, 6)
	cfg := fastConfig(t)
	cfg.Score.Schedule, cfg.Score.Budget, cfg.Score.Evals, cfg.Score.HoldOut = "budget", 32*20, 5, 0.1
	sgs, _, _, _, err := in.validate()
	if err != nil {
		t.Fatal(err)
	}
	v := originalView(sgs, in.D, nil)
	w := nn.NewWorkers[float32](2)
	defer w.Close()
	ctx := context.Background()
	run := func(c Config) (*ScoreStats, []float32) {
		sx, _, st, err := trainScore(ctx, &c, v, nil, in.D, w, 7, 8, &reporter{})
		if err != nil {
			t.Fatal(err)
		}
		return st, append([]float32(nil), sx.Params()[0].Value.Data...)
	}
	st, p1 := run(cfg)
	if st.Steps != 20 || len(st.HeldOutCurve) != 5 || st.HeldOut != len(sgs)/10 || st.StoppedEarly {
		t.Fatalf("stats: steps %d, %d checks, %d held out, early %v", st.Steps, len(st.HeldOutCurve), st.HeldOut, st.StoppedEarly)
	}
	best := st.HeldOutCurve[0]
	for _, l := range st.HeldOutCurve {
		best = min(best, l)
	}
	if st.HeldOutBest != best {
		t.Errorf("best %v, curve %v", st.HeldOutBest, st.HeldOutCurve)
	}
	if st.HeldOutCurve[len(st.HeldOutCurve)-1] >= st.HeldOutCurve[0] {
		t.Errorf("held-out loss did not fall: %v", st.HeldOutCurve)
	}
	_, p2 := run(cfg)
	for i := range p1 {
		if p1[i] != p2[i] {
			t.Fatalf("param %d differs between identical runs", i)
		}
	}
	// A huge budget with patience 1 stops early.
	c := cfg
	c.Score.Budget, c.Score.Evals, c.Score.Patience = 32*400, 100, 1
	st, _ = run(c)
	if !st.StoppedEarly || st.Steps >= 400 {
		t.Errorf("patience 1 over 400 steps: steps %d, early %v, curve %v", st.Steps, st.StoppedEarly, st.HeldOutCurve)
	}
}

func TestDefaultPreset(t *testing.T) {
	c, err := Preset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Score.Schedule != "budget" || c.Score.Budget != 0 || c.Classifier.Patience == 0 || c.Sens.Patience == 0 {
		t.Errorf("default preset is not budgeted: %+v", c.Score)
	}
	p, _ := Preset("nba")
	if p.Score.Schedule != "epochs" || p.Score.Epochs != 1000 || p.Classifier.Patience != 0 {
		t.Errorf("paper preset changed: %+v", p.Score)
	}
}
