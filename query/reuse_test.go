package query

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/index/synth"
	"github.com/fasd-db/fasd/query/model"
	"github.com/fasd-db/fasd/runs"
	"github.com/fasd-db/fasd/storage"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// trainedSynth loads a 300-node generated biased graph into an in-memory
// store and trains the FASD models on it with short schedules (fasd
// train: runs.Train, which leaves the debias memo), without the
// fallback so that the served models debias.
func trainedSynth(t *testing.T) (storage.Store, *runs.Record) {
	t.Helper()
	sc := synth.Small()
	sc.Nodes = 300
	files, _, err := synth.Write(context.Background(), t.TempDir(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := openMem(t)
	p, err := dump.LookupPreset("synth")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := index.Load(context.Background(), s, &index.LoadOptions{Nodes: files.Nodes, Edges: files.Edges,
		Spec: p.Spec, Source: "synth", Split: index.SplitOptions{Protocol: "nba"}}); err != nil {
		t.Fatal(err)
	}
	g, err := index.Open(s)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pipeline.Preset("synth")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed = 4
	cfg.Sens.Epochs, cfg.Score.Epochs, cfg.Classifier.Epochs = 10, 2, 10
	cfg.Classifier.FallbackFASD = string(pipeline.FallbackOff)
	rec, _, err := runs.Train(context.Background(), g, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Memo == nil || rec.Memo.Subgraphs == 0 {
		t.Fatalf("the run left no memo: %+v", rec.Memo)
	}
	return s, rec
}

// updateAfterTraining labels six unlabelled nodes (roots training never
// saw), edits the features of three nodes (so the subgraphs containing
// them change) and adds an edge.
func updateAfterTraining(tx *index.Tx) error {
	labelled := 0
	for u := uint32(0); labelled < 6; u++ {
		n, err := tx.Node(u)
		if err != nil {
			return err
		}
		if n.Label == index.Unlabelled && n.Sensitive != index.Unknown {
			if err := tx.SetLabel(u, int8(u%2)); err != nil {
				return err
			}
			labelled++
		}
	}
	for _, u := range []uint32{3, 50, 101} {
		n, err := tx.Node(u)
		if err != nil {
			return err
		}
		f := append([]float32(nil), n.Features...)
		f[0] = -f[0]
		if err := tx.SetFeatures(u, f); err != nil {
			return err
		}
	}
	_, err := tx.AddEdge(7, 200)
	return err
}

// rawViews renders every view key of s with its value, as stored.
func rawViews(t testing.TB, s storage.Reader) string {
	t.Helper()
	it, err := s.NewIter([]byte{prefixViews}, []byte{prefixViews + 1})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out bytes.Buffer
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.Value()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%x=%x\n", it.Key(), v)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// materializeWith opens an engine on s serving m (nil: runs.LoadLatest),
// materializes and returns the report and the engine's counters.
func materializeWith(t *testing.T, s storage.Store, m model.Model, noReuse bool) (*RefreshReport, Counters) {
	t.Helper()
	e, err := Open("", &Options{Store: s, Model: m, LoadModel: runs.LoadLatest, NoReuse: noReuse, Workers: 2, ChunkRoots: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rep, err := e.Materialize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep, e.Counters()
}

// Ensure that materializing with the debias memo fasd train left
// produces views byte for byte equal to a materialization that debiases
// every subgraph, that it debiases no training root whose subgraph is
// unchanged, and that it ignores a memo it cannot trust: roots that are
// not training roots, subgraphs an update changed since training, models
// other than the ones that wrote it (even when their entries are copied
// under the served models' keys).
func TestMaterialize_ReusesTrainingDebiasing(t *testing.T) {
	trained, rec := trainedSynth(t)
	latest, err := runs.LoadLatest(trained)
	if err != nil {
		t.Fatal(err)
	}
	// Other models: f with one weight changed (so another fingerprint).
	other := func(t *testing.T) model.Model {
		m, err := runs.LoadModels(trained, rec)
		if err != nil {
			t.Fatal(err)
		}
		p := m.F.Params()[0]
		p.Value.Data[0] += 0.25
		tm, err := runs.NewTrainedModel(m, "other")
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	memoPrefix := func(m model.Model) []byte { return m.(model.Reuser).ReuseKey(0)[:18] }
	for _, c := range []struct {
		name string
		// prepare changes the copy of the trained store both
		// materializations start from and returns the models to serve
		// (nil: the latest run's).
		prepare func(t *testing.T, s storage.Store) model.Model
		// all: every root reused; none: no root reused; else some
		// reused and some computed.
		all, none bool
	}{
		{name: "fresh graph", all: true},
		{name: "graph changed after training, new roots", prepare: func(t *testing.T, s storage.Store) model.Model {
			g, err := index.Open(s)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.Update(context.Background(), updateAfterTraining); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
		{name: "memo of other models", none: true, prepare: func(t *testing.T, s storage.Store) model.Model {
			return other(t)
		}},
		{name: "memo of other models under the served models' keys", none: true, prepare: func(t *testing.T, s storage.Store) model.Model {
			m := other(t)
			from, to := memoPrefix(latest), memoPrefix(m)
			it, err := trained.NewIter(from, storage.PrefixEnd(from))
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			b := s.NewBatch()
			defer b.Close()
			n := 0
			for ok := it.First(); ok; ok = it.Next() {
				v, err := it.Value()
				if err != nil {
					t.Fatal(err)
				}
				if err := b.Set(append(append([]byte(nil), to...), it.Key()[len(from):]...), v); err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n != rec.Memo.Subgraphs {
				t.Fatalf("copied %d entries, the run wrote %d", n, rec.Memo.Subgraphs)
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			return m
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			reuse, scratch := openMem(t), openMem(t)
			storagetest.Copy(t, reuse, trained)
			var m model.Model
			if c.prepare != nil {
				m = c.prepare(t, reuse)
			}
			storagetest.Copy(t, scratch, reuse)
			rr, rc := materializeWith(t, reuse, m, false)
			sr, sc := materializeWith(t, scratch, m, true)
			t.Logf("with the memo: %d subgraphs, %d reused, %d debiased; from scratch: %d debiased",
				rr.Subgraphs, rr.Reused, rc.SubgraphsComputed, sc.SubgraphsComputed)
			if got, want := rawViews(t, reuse), rawViews(t, scratch); got != want {
				t.Fatalf("views differ from a materialization from scratch (%d vs %d bytes)", len(got), len(want))
			}
			if sr.Reused != 0 || sc.SubgraphsReused != 0 || int(sc.SubgraphsComputed) != sr.Subgraphs {
				t.Fatalf("from scratch: report %+v, counters %+v", sr, sc)
			}
			if int(rc.SubgraphsReused) != rr.Reused || rr.Reused+int(rc.SubgraphsComputed) != rr.Subgraphs {
				t.Fatalf("with the memo: report %+v, counters %+v", rr, rc)
			}
			switch {
			case c.all:
				if rr.Reused != rec.Memo.Subgraphs || rr.Subgraphs != rec.Memo.Subgraphs {
					t.Fatalf("reused %d of %d subgraphs, the memo holds %d", rr.Reused, rr.Subgraphs, rec.Memo.Subgraphs)
				}
			case c.none:
				if rr.Reused != 0 {
					t.Fatalf("reused %d subgraphs of other models", rr.Reused)
				}
			default:
				if !(rr.Reused > 0 && rr.Reused < rec.Memo.Subgraphs && rr.Subgraphs > rec.Memo.Subgraphs) {
					t.Fatalf("reused %d of %d subgraphs (memo %d): want some but not every training root, and new roots", rr.Reused, rr.Subgraphs, rec.Memo.Subgraphs)
				}
			}
		})
	}
}

// Ensure that an update after a materialization that reused training's
// debiasing, refreshed with the memo, leaves the views a materialization
// from scratch of the updated graph builds (incremental equals rebuild).
func TestRefresh_ReusesTrainingDebiasing(t *testing.T) {
	trained, _ := trainedSynth(t)
	s := openMem(t)
	storagetest.Copy(t, s, trained)
	e, err := Open("", &Options{Store: s, LoadModel: runs.LoadLatest, Workers: 2, ChunkRoots: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if _, err := e.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Update(ctx, updateAfterTraining); err != nil {
		t.Fatal(err)
	}
	rep, err := e.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("refresh: %d subgraphs, %d reused; engine: %+v", rep.Subgraphs, rep.Reused, e.Counters())
	scratch := copyGraph(t, s)
	materializeWith(t, scratch, nil, true)
	if got, want := dumpViews(t, s), dumpViews(t, scratch); got != want {
		t.Fatal("refreshed views differ from a materialization from scratch")
	}
}
