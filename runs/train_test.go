package runs

import (
	"context"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/index/synth"
	"github.com/fasd-db/fasd/query/model"
	"github.com/fasd-db/fasd/storage"
)

// synthGraph generates a biased graph with package synth and loads it into
// an in-memory store.
func synthGraph(t testing.TB, cfg synth.Config, protocol string) (storage.Store, *index.Graph) {
	t.Helper()
	dir := t.TempDir()
	files, _, err := synth.Write(context.Background(), dir, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := storage.Open("", &storage.Options{InMemory: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	p, err := dump.LookupPreset("synth")
	if err != nil {
		t.Fatal(err)
	}
	_, err = index.Load(context.Background(), s, &index.LoadOptions{
		Nodes: files.Nodes, Edges: files.Edges,
		Spec: p.Spec, Source: "synth", Split: index.SplitOptions{Protocol: protocol},
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := index.Open(s)
	if err != nil {
		t.Fatal(err)
	}
	return s, g
}

// e2eConfig is the synth preset with short schedules.
func e2eConfig(t testing.TB, seed uint64) pipeline.Config {
	t.Helper()
	cfg, err := pipeline.Preset("synth")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed = seed
	cfg.Sens.Epochs = 20
	cfg.Score.Epochs = 5
	cfg.Classifier.Epochs = 40
	return cfg
}

// ensure that training persists models and a run record that load back,
// that the loaded models reproduce the pipeline's predictions through the
// Scorer interface, and that a second run gets the next id.
func TestTrain_PersistAndLoad(t *testing.T) {
	sc := synth.Small()
	sc.Nodes = 300
	s, g := synthGraph(t, sc, "pokec")
	if _, err := LoadLatest(s); !errors.Is(err, model.ErrNoModel) {
		t.Fatalf("empty store: %v", err)
	}
	cfg := e2eConfig(t, 1)
	cfg.Score.Epochs = 2
	cfg.Classifier.Epochs = 10
	rec, res, err := Train(context.Background(), g, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rec.ID != 1 || rec.ModelChunks < 1 || rec.GraphVersion == 0 {
		t.Fatalf("record %+v", rec)
	}
	runs, err := List(s)
	if err != nil || len(runs) != 1 || runs[0].Result.Variant(pipeline.VariantFASD) == nil {
		t.Fatalf("List: %v %+v", err, runs)
	}
	if got, want := runs[0].Result.Variant(pipeline.VariantFASD).Test.Acc, res.Variant(pipeline.VariantFASD).Test.Acc; got != want {
		t.Fatalf("stored acc %v, want %v", got, want)
	}
	m, err := LoadLatest(s)
	if err != nil {
		t.Fatal(err)
	}
	if info := m.Info(); info.Seed != 1 || len(info.Variants) != 2 || info.Variants[1] != model.NoDiffusionVariant || info.Version != rec.ModelSHA256 {
		t.Fatalf("info %+v", m.Info())
	}
	v, _ := g.View()
	defer v.Close()
	if m.Info().FeatureHash != pipeline.FeatureHash(v.FeatureNames()) {
		t.Fatal("feature hash mismatch")
	}
	if sch := g.Schema(); sch.FeatureHash() != m.Info().FeatureHash {
		t.Fatal("the graph's feature hash differs from the pipeline's")
	}
	// Same seed and graph: identical metrics, next run id.
	rec2, res2, err := Train(context.Background(), g, cfg, nil)
	if err != nil || rec2.ID != 2 {
		t.Fatalf("second run: %v, id %d", err, rec2.ID)
	}
	for _, v := range res.Variants {
		w := res2.Variant(v.Variant)
		if w.Test.Acc != v.Test.Acc || w.Test.DP != v.Test.DP || w.Test.EO != v.Test.EO || w.BestEpoch != v.BestEpoch {
			t.Errorf("%s not deterministic: %+v vs %+v", v.Variant, v.Test, w.Test)
		}
	}
}

// ensure, end to end on a generated biased graph, that FASD lowers ΔDP
// against w/o Diffusion (paired: same subgraphs, seeds and classifier
// initialisation) and that runs are deterministic.
//
// Every seed must improve and the mean over three seeds by e2eMargin. The
// generator makes this reliable: its sensitive attribute leaks into the
// features and the edges are group-homophilous, and the debiasing here is
// strong (Δt_rev = 0.05, 5 steps, linear γ with λ = 1); observed per-seed
// gaps are 0.31–0.38 in ΔDP at a cost of 6–12 points of accuracy. See
// RESULTS.md for how much of it w/o Fairness also achieves.
func TestTrain_SynthFASDLowersDP(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end training run")
	}
	sc := synth.Small()
	sc.Nodes = 300
	_, g := synthGraph(t, sc, "nba") // 20/35/45 split of the labelled nodes
	var dpF, dpB float64
	seeds := []uint64{1, 2, 3}
	for _, seed := range seeds {
		cfg := e2eConfig(t, seed)
		applyE2E(&cfg)
		_, res, err := Train(context.Background(), g, cfg, &TrainOptions{NoSave: true})
		if err != nil {
			t.Fatal(err)
		}
		f, b := res.Variant(pipeline.VariantFASD), res.Variant(pipeline.VariantNoDiffusion)
		t.Logf("seed %d: fasd acc %.3f dp %.3f eo %.3f | no_diffusion acc %.3f dp %.3f eo %.3f", seed,
			f.Test.Acc, f.Test.DP, f.Test.EO, b.Test.Acc, b.Test.DP, b.Test.EO)
		if !(f.Test.DP < b.Test.DP) {
			t.Errorf("seed %d: FASD ΔDP %.3f not below w/o Diffusion %.3f", seed, f.Test.DP, b.Test.DP)
		}
		dpF += float64(f.Test.DP) / float64(len(seeds))
		dpB += float64(b.Test.DP) / float64(len(seeds))
	}
	t.Logf("mean ΔDP: fasd %.4f, no_diffusion %.4f", dpF, dpB)
	if !(dpF < dpB-e2eMargin) || math.IsNaN(dpF) {
		t.Fatalf("FASD mean ΔDP %.4f not below w/o Diffusion %.4f by %.2f", dpF, dpB, e2eMargin)
	}
}

// e2eMargin is the ΔDP reduction (fraction) the end-to-end test demands.
const e2eMargin = 0.10

// applyE2E sets the debiasing strength of the end-to-end test; the
// environment variables FASD_E2E_DT and FASD_E2E_LAMBDA override it for
// experiments.
func applyE2E(cfg *pipeline.Config) {
	cfg.Debias.DtRev = 0.05
	cfg.Diffusion.LambdaX, cfg.Diffusion.LambdaA = 1, 1
	if v, err := strconv.ParseFloat(os.Getenv("FASD_E2E_DT"), 64); err == nil {
		cfg.Debias.DtRev = v
	}
	if v, err := strconv.ParseFloat(os.Getenv("FASD_E2E_LAMBDA"), 64); err == nil {
		cfg.Diffusion.LambdaX, cfg.Diffusion.LambdaA = v, v
	}
}

// Ensure that models trained for a root readout are never saved: the
// query engine would serve them with the average.
func TestTrain_RootReadoutNotServed(t *testing.T) {
	sc := synth.Small()
	sc.Nodes = 100
	_, g := synthGraph(t, sc, "pokec")
	cfg := e2eConfig(t, 1)
	cfg.Classifier.Readout = string(pipeline.ReadoutRoot)
	if _, _, err := Train(context.Background(), g, cfg, nil); !errors.Is(err, pipeline.ErrConfig) {
		t.Fatalf("Train with classifier.readout = root: %v, want ErrConfig", err)
	}
}

// ensure that sample.scope = "auto" is settled before sampling and that
// the models are stored with the sampling they were trained on (the query
// engine samples with it), on a graph whose labels follow the edges and
// not the group. (The 20/35/45 split: on 200 nodes the pokec split leaves
// about fifty training and validation nodes, too few for the labels'
// group-rate ratio, which then refuses the wide scope by chance.)
func TestTrain_ScopeAutoStoresTheChoice(t *testing.T) {
	sc := synth.Small()
	sc.Nodes = 200
	sc.LabelHomophily, sc.Signal = 0.95, 0.1 // the label is in the edges
	sc.LabelCorrelation = 0                  // and not in the group (the label guard)
	s, g := synthGraph(t, sc, "nba")
	cfg := e2eConfig(t, 1)
	cfg.Score.Epochs = 1
	cfg.Classifier.Epochs = 5
	cfg.Baseline.Epochs = 60
	cfg.Sample.Scope = string(pipeline.SampleAuto)
	var announced []*pipeline.ScopeChoice
	rec, res, err := Train(context.Background(), g, cfg, &TrainOptions{
		Choosing: func(ch *pipeline.ScopeChoice) { announced = append(announced, ch) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scope == nil || !res.Scope.Wide {
		t.Fatalf("scope choice %v, want wide", res.Scope)
	}
	if len(announced) != 1 || !announced[0].Pending || announced[0].Nets < 1 {
		t.Errorf("Choosing called with %v, want once with the pending choice", announced)
	}
	if res.Config.Sample.Scope != string(pipeline.SampleFixed) || res.Config.Sample.Mode != "hop" || res.Config.Sample.Edges != "induced" {
		t.Fatalf("result config sample %+v, want the wide scope, fixed", res.Config.Sample)
	}
	m, err := LoadLatest(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Info().Sample; got != res.Config.SampleOptions() {
		t.Errorf("served sampling %+v, trained %+v", got, res.Config.SampleOptions())
	}
	var stored pipeline.Config
	if err := stored.LoadTOML("record", strings.NewReader(rec.Config)); err != nil {
		t.Fatal(err)
	}
	if stored.Sample != res.Config.Sample {
		t.Errorf("stored sample config %+v, want %+v", stored.Sample, res.Config.Sample)
	}
}
