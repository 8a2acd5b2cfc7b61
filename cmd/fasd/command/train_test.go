package command

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fasd-db/fasd/fasd/pipeline"
)

// smallSynthStore generates and loads a 200-node biased graph.
func smallSynthStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err, code := run(t, "gen", "--out", dir, "--nodes", "200", "--features", "6", "--seed", "3"); err != nil {
		t.Fatalf("gen: %v (exit %d)", err, code)
	}
	db := filepath.Join(dir, "db")
	if _, err, code := run(t, "load", "--db", db, "--preset", "synth", "--dir", dir); err != nil {
		t.Fatalf("load: %v (exit %d)", err, code)
	}
	return db
}

var fastSets = []string{"--set", "sens.epochs=3", "--set", "score.epochs=1", "--set", "classifier.epochs=3", "--set", "baseline.epochs=5",
	"--set", "debias.steps=1", "--set", "score.batch=64"}

// Ensure that fasd train stores a run, prints its metrics, and that bad
// configs are usage errors.
func TestTrainCommand(t *testing.T) {
	db := smallSynthStore(t)
	out, err, code := run(t, append([]string{"train", "--db", db, "--preset", "synth", "--seed", "4"}, fastSets...)...)
	if err != nil {
		t.Fatalf("train: %v (exit %d)", err, code)
	}
	for _, want := range []string{"run 1 (seed 4", "fasd", "no_diffusion", "diagnostics", "stage times", "‖γG‖/‖σε‖ per t bin   X: ["} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// With λ = 0 (the default profile's) there is no fairness-to-noise
	// ratio to print: one line says so instead of ten NaN.
	out, err, _ = run(t, append([]string{"train", "--db", db, "--preset", "synth", "--no-save", "--variants", "fasd",
		"--set", "diffusion.lambda_x=0", "--set", "diffusion.lambda_a=0"}, fastSets...)...)
	if err != nil {
		t.Fatal(err)
	}
	if want := "‖γG‖/‖σε‖: none (diffusion.lambda_x = lambda_a = 0"; !strings.Contains(out, want) || strings.Contains(out, "NaN") {
		t.Errorf("with lambda 0 the output lacks %q or prints NaN:\n%s", want, out)
	}
	out, err, _ = run(t, append([]string{"train", "--db", db, "--preset", "synth", "--json", "--no-save"}, fastSets...)...)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Seed   uint64 `json:"seed"`
		Result struct {
			Variants []struct {
				Variant string `json:"variant"`
			} `json:"variants"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil || len(rec.Result.Variants) != 2 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	// Keeping the debiased features in memory instead of a temporary file
	// changes nothing in the record but the timings.
	mem, err, _ := run(t, append([]string{"train", "--db", db, "--preset", "synth", "--json", "--no-save", "--spill=false"}, fastSets...)...)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := withoutTimings(t, out), withoutTimings(t, mem); a != b {
		t.Errorf("--spill=false changed the run record:\n%s\n%s", a, b)
	}
	toml := filepath.Join(t.TempDir(), "c.toml")
	os.WriteFile(toml, []byte("[score]\nepochs = -3\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"bad preset", []string{"train", "--db", db, "--preset", "huge"}},
		{"bad set", []string{"train", "--db", db, "--preset", "synth", "--set", "score.nope=1"}},
		{"invalid value", []string{"train", "--db", db, "--preset", "synth", "--set", "debias.order=XY"}},
		{"bad toml", []string{"train", "--db", db, "--preset", "synth", "--config", toml}},
		{"bad variant", []string{"train", "--db", db, "--preset", "synth", "--variants", "magic"}},
	} {
		if _, err, code := run(t, tc.args...); code != ExitUsage {
			t.Errorf("%s: exit %d (%v), want %d", tc.name, code, err, ExitUsage)
		}
	}
	if _, _, code := run(t, "train", "--db", filepath.Join(t.TempDir(), "none"), "--preset", "synth"); code != ExitStoreState {
		t.Errorf("missing store: exit %d", code)
	}
	// An estimate over --max-time refuses the run before training.
	if out, err, code := run(t, append([]string{"train", "--db", db, "--max-time", "1ms"}, tinyTrain...)...); code != ExitFailure || err == nil ||
		!strings.Contains(err.Error(), "exceeds --max-time") || strings.Contains(out, "variant") {
		t.Errorf("--max-time 1ms: exit %d, %v\n%s", code, err, out)
	}
	// So does a memory estimate over --max-memory; a generous limit runs.
	if out, err, code := run(t, append([]string{"train", "--db", db, "--max-memory", "1MiB"}, tinyTrain...)...); code != ExitFailure || err == nil ||
		!strings.Contains(err.Error(), "exceeds --max-memory") || strings.Contains(out, "variant") {
		t.Errorf("--max-memory 1MiB: exit %d, %v\n%s", code, err, out)
	}
	if _, err, code := run(t, append([]string{"train", "--db", db, "--max-memory", "64GiB", "--no-save"}, tinyTrain...)...); code != ExitOK {
		t.Errorf("--max-memory 64GiB: exit %d, %v", code, err)
	}
	if _, _, code := run(t, append([]string{"train", "--db", db, "--max-memory", "lots"}, tinyTrain...)...); code != ExitUsage {
		t.Errorf("--max-memory lots: exit %d, want %d", code, ExitUsage)
	}
}

// Ensure that fasd eval --ablations --json reports every variant with mean,
// std and per-seed values, and that the table form prints them.
func TestEvalCommand(t *testing.T) {
	db := smallSynthStore(t)
	out, err, code := run(t, append([]string{"eval", "--db", db, "--preset", "synth", "--seeds", "2", "--ablations", "--json"}, fastSets...)...)
	if err != nil {
		t.Fatalf("eval: %v (exit %d)", err, code)
	}
	var rep EvalReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, v := range rep.Variants {
		names = append(names, v.Name)
		if len(v.Acc.PerSeed) != 2 || v.Acc.Mean < 0 || v.Acc.Mean > 100 {
			t.Errorf("%s: %+v", v.Name, v.Acc)
		}
	}
	if strings.Join(names, ",") != "fasd,no_diffusion,no_fairness,gcn" {
		t.Errorf("variants %v", names)
	}
	out, err, _ = run(t, append([]string{"eval", "--db", db, "--preset", "synth", "--seeds", "1"}, fastSets...)...)
	if err != nil || !strings.Contains(out, "fasd") || !strings.Contains(out, "(") {
		t.Fatalf("table: %v\n%s", err, out)
	}
}

// Ensure that fasd sweep writes the CSV and both plots.
func TestSweepCommand(t *testing.T) {
	db := smallSynthStore(t)
	dir := filepath.Join(t.TempDir(), "sw")
	// With the default preset's guidance (linear guides fitted by the sweep).
	args := append([]string{"sweep", "--db", db, "--preset", "synth", "--steps", "1,2", "--lambdas", "0,1", "--out", dir, "--format", "png",
		"--set", "debias.reverse=ode", "--set", "debias.guide_weight=2", "--set", "debias.guide_net=linear", "--set", "debias.guide_rounds=2"}, fastSets...)
	_, err, code := run(t, args...)
	if err != nil {
		t.Fatalf("sweep: %v (exit %d)", err, code)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "sweep.csv"))
	if err != nil || strings.Count(string(csv), "\n") != 5 {
		t.Fatalf("csv: %v\n%s", err, csv)
	}
	for _, f := range []string{"acc_vs_dp.png", "acc_vs_eo.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// withoutTimings returns a JSON run record without its creation time and
// stage timings.
func withoutTimings(t *testing.T, rec string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(rec), &m); err != nil {
		t.Fatalf("%v\n%s", err, rec)
	}
	delete(m, "created")
	if r, ok := m["result"].(map[string]any); ok {
		delete(r, "timings")
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Ensure that printed estimates keep a tenth of a second below 10 s and
// whole seconds above.
func TestRoundEstimate(t *testing.T) {
	for _, tc := range []struct{ in, want time.Duration }{
		{1460 * time.Millisecond, 1500 * time.Millisecond},
		{40 * time.Millisecond, 0},
		{9940 * time.Millisecond, 9900 * time.Millisecond},
		{12400 * time.Millisecond, 12 * time.Second},
		{83600 * time.Millisecond, 84 * time.Second},
	} {
		if got := roundEstimate(tc.in); got != tc.want {
			t.Errorf("roundEstimate(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// Ensure the budget hint after the estimate: printed when f trains by
// passes and its stages take at least an hour and half of the run, with
// the budget the schedule would use; not printed otherwise.
func TestPrintBudgetHint(t *testing.T) {
	est := func(f, other float64) *pipeline.Estimate {
		e := &pipeline.Estimate{TotalRoots: 769753, Roots: 2000, Stages: []pipeline.StageTiming{
			{Stage: pipeline.StageScore, Seconds: other},
			{Stage: pipeline.StageClassifier, Seconds: f / 2},
			{Stage: pipeline.StageNoDiffusion, Seconds: f / 2},
		}}
		e.Total = time.Duration((f + other) * float64(time.Second))
		return e
	}
	epochs, _ := pipeline.Preset(pipeline.DefaultPreset)
	budget := epochs
	budget.Classifier.Schedule = pipeline.ClassBudget
	for _, tc := range []struct {
		name string
		est  *pipeline.Estimate
		cfg  pipeline.Config
		want bool
	}{
		{"f dominates a long run", est(8*3600, 3600), epochs, true},
		{"f short", est(1800, 60), epochs, false},
		{"f long but not half", est(2*3600, 3*3600), epochs, false},
		{"already budget", est(8*3600, 3600), budget, false},
		{"no roots", &pipeline.Estimate{}, epochs, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			printBudgetHint(&b, tc.est, &tc.cfg)
			got := b.String()
			if (got != "") != tc.want {
				t.Fatalf("hint %q, want printed %v", got, tc.want)
			}
			if tc.want {
				n := pipeline.ClassifierBudget(769753, tc.cfg.Classifier.Batch, tc.cfg.Classifier.Epochs)
				for _, s := range []string{"8h0m0s", "769753 subgraphs", fmt.Sprintf("%d subgraph-steps", n), "classifier.schedule=budget"} {
					if !strings.Contains(got, s) {
						t.Errorf("hint %q lacks %q", got, s)
					}
				}
			}
		})
	}
}
