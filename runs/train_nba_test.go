package runs

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/storage"
)

// TestTrain_NBAStore is an opt-in smoke run on a store holding NBA (loaded
// with `fasd load --preset nba`): FASD_NBA_DB=DIR, FASD_SCORE_EPOCHS=N
// (default 2). It prints the stage timings.
func TestTrain_NBAStore(t *testing.T) {
	dir := os.Getenv("FASD_NBA_DB")
	if dir == "" {
		t.Skip("set FASD_NBA_DB to a store holding NBA")
	}
	epochs := 2
	if s := os.Getenv("FASD_SCORE_EPOCHS"); s != "" {
		epochs, _ = strconv.Atoi(s)
	}
	st, err := storage.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g, err := index.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := pipeline.Preset("nba")
	cfg.Score.Epochs = epochs
	cfg.Sens.Epochs = 20
	cfg.Classifier.Epochs = 20
	rec, res, err := Train(context.Background(), g, cfg, &TrainOptions{NoSave: true, Diagnostics: true, Callbacks: pipeline.Callbacks{
		Estimate: func(s pipeline.Stage, d time.Duration) { t.Logf("estimate %s: %v", s, d) },
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range res.Timings {
		t.Logf("%-18s %8.2fs  %d units", tm.Stage, tm.Seconds, tm.Units)
	}
	for _, v := range res.Variants {
		t.Logf("%s: acc %.4f dp %.4f eo %.4f", v.Variant, float64(v.Test.Acc), float64(v.Test.DP), float64(v.Test.EO))
	}
	t.Logf("subgraphs %d, mean nodes %.1f, edges %.1f, version %d", res.NumSubgraphs, res.MeanNodes, res.MeanEdges, rec.GraphVersion)
}
