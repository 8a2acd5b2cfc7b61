package command

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/fasd/pipeline"
)

// evalReport runs fasd eval --json on db with the synth preset and
// fastSets, the given arguments added, and decodes its report.
func evalReport(t *testing.T, db string, args ...string) EvalReport {
	t.Helper()
	out, err, code := run(t, append(append([]string{"eval", "--db", db, "--preset", "synth", "--json"}, args...), fastSets...)...)
	if err != nil {
		t.Fatalf("eval: %v (exit %d)", err, code)
	}
	var rep EvalReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// Ensure that fasd eval --json pairs every variant with the default
// references, that the paired per-seed differences are the differences of
// the reported per-seed values, and that every variant carries a probe AUC
// (the GCN's being w/o Diffusion's).
func TestEvalCommand_PairedJSON(t *testing.T) {
	db := smallSynthStore(t)
	rep := evalReport(t, db, "--seeds", "3", "--variants", "fasd,no_diffusion,gcn,fasd_gcn,mlp,majority")
	if len(rep.Seeds) != 3 || rep.Level != 0.95 || strings.Join(rep.References, ",") != "no_diffusion,gcn" {
		t.Fatalf("seeds %v level %v references %v", rep.Seeds, rep.Level, rep.References)
	}
	byName := map[string]EvalVariant{}
	for _, v := range rep.Variants {
		byName[v.Name] = v
		if v.Val == nil || len(v.Val.AUC) != 3 || len(v.AUC.PerSeed) != 3 || len(v.MacroF1.PerSeed) != 3 {
			t.Fatalf("%s: validation metrics %+v, AUC %+v, macro-F1 %+v", v.Name, v.Val, v.AUC, v.MacroF1)
		}
		if v.Name == "majority" {
			if v.AUC.Mean != 50 || v.DP.Mean != 0 || v.EO.Mean != 0 || !(v.MacroF1.Mean <= 50) {
				t.Errorf("majority: AUC %v ΔDP %v ΔEO %v macro-F1 %v", v.AUC.Mean, v.DP.Mean, v.EO.Mean, v.MacroF1.Mean)
			}
			continue
		}
		if (v.Name == "fasd_gcn") != (len(v.FellBack) == 3) {
			t.Errorf("%s: fell_back %v", v.Name, v.FellBack)
		}
		if v.ProbeAUC == nil || len(v.ProbeAUC.PerSeed) != 3 || v.ProbeData == "" {
			t.Fatalf("%s: probe %+v data %q", v.Name, v.ProbeAUC, v.ProbeData)
		}
		for _, x := range v.ProbeAUC.PerSeed {
			if !(x >= 0 && x <= 1) {
				t.Errorf("%s: probe AUC %v", v.Name, x)
			}
		}
	}
	nd, gcn := byName["no_diffusion"], byName["gcn"]
	if nd.ProbeData != pipeline.ProbeData || gcn.ProbeData != pipeline.ProbeData || byName["fasd"].ProbeData != "fasd" {
		t.Errorf("probe data: %q %q %q", nd.ProbeData, gcn.ProbeData, byName["fasd"].ProbeData)
	}
	for i := range nd.ProbeAUC.PerSeed {
		if nd.ProbeAUC.PerSeed[i] != gcn.ProbeAUC.PerSeed[i] {
			t.Errorf("seed %d: gcn probe %v, no_diffusion %v", i, gcn.ProbeAUC.PerSeed[i], nd.ProbeAUC.PerSeed[i])
		}
	}
	if byName["fasd_gcn"].ProbeData != "fasd" || byName["mlp"].ProbeData != pipeline.ProbeData {
		t.Errorf("probe data: fasd_gcn %q, mlp %q", byName["fasd_gcn"].ProbeData, byName["mlp"].ProbeData)
	}
	wantRefs := map[string]string{"fasd": "no_diffusion,gcn", "no_diffusion": "gcn", "gcn": "no_diffusion",
		"fasd_gcn": "no_diffusion,gcn", "mlp": "no_diffusion,gcn", "majority": "no_diffusion,gcn"}
	for name, want := range wantRefs {
		v := byName[name]
		var refs []string
		for _, p := range v.Paired {
			refs = append(refs, p.Reference)
			r := byName[p.Reference]
			type check struct {
				metric string
				d      EvalDiff
				x, ref []float64
			}
			checks := []check{{"acc", p.Acc, v.Acc.PerSeed, r.Acc.PerSeed}, {"dp", p.DP, v.DP.PerSeed, r.DP.PerSeed},
				{"eo", p.EO, v.EO.PerSeed, r.EO.PerSeed}, {"auc", p.AUC, v.AUC.PerSeed, r.AUC.PerSeed},
				{"macro_f1", p.MacroF1, v.MacroF1.PerSeed, r.MacroF1.PerSeed}}
			if name != "majority" { // the constant has no training data to probe
				checks = append(checks, check{"probe_auc", *p.ProbeAUC, v.ProbeAUC.PerSeed, r.ProbeAUC.PerSeed})
			}
			for _, c := range checks {
				var sum float64
				for i := range c.x {
					if got := float64(c.d.PerSeed[i]); math.Abs(got-(c.x[i]-c.ref[i])) > 1e-9 {
						t.Errorf("%s − %s %s seed %d: %v, want %v", name, p.Reference, c.metric, i, got, c.x[i]-c.ref[i])
					}
					sum += c.x[i] - c.ref[i]
				}
				if c.d.N != 3 || math.Abs(float64(c.d.Mean)-sum/3) > 1e-9 || !(c.d.Lo <= c.d.Mean && c.d.Mean <= c.d.Hi) {
					t.Errorf("%s − %s %s: %+v", name, p.Reference, c.metric, c.d)
				}
			}
		}
		if strings.Join(refs, ",") != want {
			t.Errorf("%s paired against %v, want %s", name, refs, want)
		}
	}
}

// Ensure that --probe=false drops the probe fields, that a named reference
// must be evaluated, and that without any reference evaluated the report
// has no paired block.
func TestEvalCommand_Flags(t *testing.T) {
	db := smallSynthStore(t)
	out, err, code := run(t, append([]string{"eval", "--db", db, "--preset", "synth", "--seeds", "1", "--variants", "no_diffusion", "--probe=false", "--json"}, fastSets...)...)
	if err != nil {
		t.Fatalf("eval: %v (exit %d)", err, code)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	v := raw["variants"].([]any)[0].(map[string]any)
	if _, ok := v["probe_auc"]; ok {
		t.Errorf("probe_auc with --probe=false: %v", v)
	}
	if _, ok := v["paired"]; ok {
		t.Errorf("paired block of the only variant against itself: %v", v)
	}
	for _, args := range [][]string{
		{"--variants", "fasd", "--reference", "gcn"},
		{"--reference", "no_fairness"},
		{"--seeds", "0"},
	} {
		a := append([]string{"eval", "--db", db, "--preset", "synth"}, args...)
		if _, err, code := run(t, a...); code != ExitUsage {
			t.Errorf("%v: exit %d (%v), want %d", args, code, err, ExitUsage)
		}
	}
	// A memory estimate over --max-memory refuses the evaluation before
	// its first run.
	out, err, code = run(t, append([]string{"eval", "--db", db, "--preset", "synth", "--seeds", "2", "--variants", "no_diffusion", "--probe=false", "--json", "--max-memory", "1MiB"}, fastSets...)...)
	if code != ExitFailure || err == nil || !strings.Contains(err.Error(), "exceeds --max-memory") || out != "" {
		t.Errorf("--max-memory 1MiB: exit %d, %v\n%s", code, err, out)
	}
}

// Ensure that the paired statistics of the report are the Student t ones
// on the per-seed differences (hand-computed: differences 1…5 give mean 3,
// 95 % CI 3 ∓ 2.7764·√0.5), that undefined values are left out and counted,
// and that the table marks intervals that exclude 0.
func TestEvalVariants_Paired(t *testing.T) {
	nan := math.NaN()
	vals := map[pipeline.Variant]*evalValues{
		"fasd": {v: [nMetrics][]float64{mAcc: {11, 12, 13, 14, 15}, mDP: {5, 5, 5, 5, 5}, mEO: {1, 2, nan, 4, 5}, mProbe: {.6, .6, .6, .6, .6}},
			probeData: "fasd"},
		"no_diffusion": {v: [nMetrics][]float64{mAcc: {10, 10, 10, 10, 10}, mDP: {5, 6, 4, 5, 5}, mEO: {1, 1, 1, 1, 1}, mProbe: {.8, .8, .8, .8, .8}},
			probeData: "original"},
	}
	vs := evalVariants([]pipeline.Variant{"fasd", "no_diffusion"}, vals, []string{"no_diffusion"}, true)
	if len(vs) != 2 || len(vs[0].Paired) != 1 || len(vs[1].Paired) != 0 {
		t.Fatalf("%+v", vs)
	}
	p := vs[0].Paired[0]
	half := 2.776445105197793 * math.Sqrt(0.5)
	if p.Acc.N != 5 || math.Abs(float64(p.Acc.Mean)-3) > 1e-12 || math.Abs(float64(p.Acc.Lo)-(3-half)) > 1e-9 || math.Abs(float64(p.Acc.Hi)-(3+half)) > 1e-9 {
		t.Errorf("acc %+v", p.Acc)
	}
	if p.EO.N != 4 || !math.IsNaN(float64(p.EO.PerSeed[2])) || math.Abs(float64(p.EO.Mean)-2) > 1e-12 {
		t.Errorf("eo %+v", p.EO)
	}
	if p.DP.N != 5 || float64(p.DP.Mean) != 0 || !(p.DP.Lo < 0 && p.DP.Hi > 0) {
		t.Errorf("dp %+v", p.DP)
	}
	if p.ProbeAUC == nil || math.Abs(float64(p.ProbeAUC.Mean)+0.2) > 1e-12 || !(p.ProbeAUC.P < 1e-9) {
		t.Errorf("probe %+v", p.ProbeAUC)
	}
	if vs[0].EO.PerSeed[2] != -1 {
		t.Errorf("undefined EvalStat value %v, want -1", vs[0].EO.PerSeed[2])
	}
	// The JSON form of an undefined difference is null.
	b, err := json.Marshal(p.EO)
	if err != nil || !strings.Contains(string(b), `"per_seed":[0,1,null,3,4]`) {
		t.Errorf("eo JSON %s (%v)", b, err)
	}
	var buf bytes.Buffer
	printEvalTable(&buf, &EvalReport{Preset: "x", Seeds: []uint64{0, 1, 2, 3, 4}, Level: 0.95, References: []string{"no_diffusion"}, Variants: vs}, true)
	out := buf.String()
	for _, want := range []string{"paired differences vs no_diffusion", "+3.00 [+1.04, +4.96]*", "+2.00 [-0.91, +4.91] ", "-0.200 [-0.200, -0.200]*", "probe AUC − no_diffusion", "original data"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// Ensure that with classifier.fallback_fasd = check fasd reports fell_back per seed and,
// on every seed that fell back, w/o Diffusion's figures exactly.
func TestEvalCommand_FallbackFASD(t *testing.T) {
	db := smallSynthStore(t)
	const seeds = 4
	rep := evalReport(t, db, "--seeds", strconv.Itoa(seeds), "--variants", "fasd,no_diffusion", "--probe=false", "--set", "classifier.fallback_fasd=check")
	byName := map[string]EvalVariant{}
	for _, v := range rep.Variants {
		byName[v.Name] = v
	}
	f, nd := byName["fasd"], byName["no_diffusion"]
	if len(f.FellBack) != seeds || len(nd.FellBack) != 0 {
		t.Fatalf("fell_back: fasd %v, no_diffusion %v", f.FellBack, nd.FellBack)
	}
	for i, fb := range f.FellBack {
		same := f.Acc.PerSeed[i] == nd.Acc.PerSeed[i] && f.DP.PerSeed[i] == nd.DP.PerSeed[i] && f.EO.PerSeed[i] == nd.EO.PerSeed[i] &&
			f.AUC.PerSeed[i] == nd.AUC.PerSeed[i]
		if fb && !same {
			t.Errorf("seed %d fell back but fasd's figures differ from w/o Diffusion's", i)
		}
	}
	t.Logf("fell back: %v", f.FellBack)
}

// Ensure that with classifier.arch = auto every classifier variant reports
// its choice per seed, with the evidence that decided it, and that no
// other variant does.
func TestEvalCommand_ArchAuto(t *testing.T) {
	db := smallSynthStore(t)
	const seeds = 2
	rep := evalReport(t, db, "--seeds", strconv.Itoa(seeds), "--variants", "fasd,no_diffusion,gcn", "--probe=false", "--set", "classifier.arch=auto")
	for _, v := range rep.Variants {
		if v.Name == "gcn" {
			if len(v.Arch) != 0 || len(v.ArchEvidence) != 0 {
				t.Errorf("gcn reports arch %v, evidence %v", v.Arch, v.ArchEvidence)
			}
			continue
		}
		if len(v.Arch) != seeds || len(v.ArchEvidence) != seeds {
			t.Fatalf("%s: arch %v, evidence %v, want one per seed", v.Name, v.Arch, v.ArchEvidence)
		}
		for i, a := range v.Arch {
			if a != "gcn" && a != "root" {
				t.Errorf("%s: arch %q", v.Name, a)
			}
			if e := v.ArchEvidence[i]; e == nil || (e.Reason == pipeline.ArchRootBetter) != (a == "root") {
				t.Errorf("%s seed %d: arch %q with evidence %+v", v.Name, i, a, e)
			}
		}
	}
}

// Ensure that the table's note on f's architecture names the figures that
// decided the choice, for every outcome.
func TestArchWhy(t *testing.T) {
	nan := pipeline.Num(math.NaN())
	for _, c := range []struct {
		e    *pipeline.ArchEvidence
		want string
	}{
		{nil, ""},
		{&pipeline.ArchEvidence{Reason: pipeline.ArchRootBetter, RootAUC: 0.86, PaperAUC: 0.815, Share: 0, FairShare: nan},
			", validation AUC root 0.860 vs 0.815, share 0.000"},
		{&pipeline.ArchEvidence{Reason: pipeline.ArchRootBetter, RootAUC: 0.86, PaperAUC: 0.815, Share: 0.01,
			RootUnfair: 0.4711, PaperUnfair: 0.4442, FairShare: 0.31},
			", validation AUC root 0.860 vs 0.815, share 0.010; ΔDP+ΔEO 47.11 vs 44.42, not significantly larger: fair share 0.310"},
		{&pipeline.ArchEvidence{Reason: pipeline.ArchNotSignificant, RootAUC: 0.859, PaperAUC: 0.856, Share: 0.438},
			", root's validation AUC 0.859 vs 0.856 not significant: share 0.438"},
		{&pipeline.ArchEvidence{Reason: pipeline.ArchNotHigher, RootAUC: 0.85, PaperAUC: 0.863},
			", root's validation AUC 0.850 not above 0.863"},
		{&pipeline.ArchEvidence{Reason: pipeline.ArchLessFair, RootUnfair: 0.4711, PaperUnfair: 0.4442, FairShare: nan},
			", root less fair on validation: ΔDP+ΔEO 47.11 vs 44.42"},
		{&pipeline.ArchEvidence{Reason: pipeline.ArchLessFair, RootUnfair: 0.5915, PaperUnfair: 0.2619, FairShare: 0.001},
			", root less fair on validation: ΔDP+ΔEO 59.15 vs 26.19, fair share 0.001"},
		{&pipeline.ArchEvidence{Reason: pipeline.ArchNoEvidence}, ", no evidence on validation"},
	} {
		if got := archWhy(c.e); got != c.want {
			t.Errorf("archWhy(%+v) = %q, want %q", c.e, got, c.want)
		}
	}
}
