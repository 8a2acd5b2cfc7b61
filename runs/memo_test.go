package runs

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/index/synth"
	"github.com/fasd-db/fasd/query/model"
	"github.com/fasd-db/fasd/storage"
)

// memoEntries counts the debias-memo entries of s by key prefix (famMemo
// and the 16 fingerprint bytes).
func memoEntries(t *testing.T, s storage.Reader) map[string]int {
	t.Helper()
	lo := []byte{prefixTrain, famMemo}
	it, err := s.NewIter(lo, storage.PrefixEnd(lo))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := map[string]int{}
	for ok := it.First(); ok; ok = it.Next() {
		out[string(it.Key()[:2+memoFPLen])]++
	}
	return out
}

// Ensure that fasd train leaves one memo entry per training root under
// the saved models' fair fingerprint (the one their ReuseKey names), that
// a run without saving leaves none, that saving a run deletes every
// other memo (an older run's, a crashed run's), and that DeleteAll
// deletes it.
func TestTrain_DebiasMemoLifecycle(t *testing.T) {
	sc := synth.Small()
	sc.Nodes = 120
	s, g := synthGraph(t, sc, "pokec")
	train := func(seed uint64, noSave bool) *Record {
		t.Helper()
		cfg := e2eConfig(t, seed)
		cfg.Sens.Epochs, cfg.Score.Epochs, cfg.Classifier.Epochs = 3, 1, 3
		cfg.Classifier.FallbackFASD = string(pipeline.FallbackOff)
		rec, _, err := Train(context.Background(), g, cfg, &TrainOptions{NoSave: noSave})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	train(1, true)
	if m := memoEntries(t, s); len(m) != 0 {
		t.Fatalf("a run that saves nothing left memo entries: %v", m)
	}
	// A crashed run's entries: no record names them.
	orphan := append([]byte{prefixTrain, famMemo}, bytes.Repeat([]byte{0xab}, memoFPLen)...)
	b := s.NewBatch()
	if err := b.Set(memoKey(orphan, 7), []byte{memoFormat}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	v, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	roots := 0
	for _, sp := range []fasd.Split{fasd.SplitTrain, fasd.SplitVal, fasd.SplitTest} {
		bm, err := v.SplitSet(sp)
		if err != nil {
			t.Fatal(err)
		}
		roots += int(bm.GetCardinality())
	}
	v.Close()
	var prev []byte
	for _, seed := range []uint64{1, 2} {
		rec := train(seed, false)
		if rec.Memo == nil || rec.Memo.Subgraphs != roots {
			t.Fatalf("seed %d: memo %+v, want %d subgraphs", seed, rec.Memo, roots)
		}
		raw, prefix, err := memoPrefix(rec.Memo.Fingerprint)
		if err != nil {
			t.Fatal(err)
		}
		if got := memoEntries(t, s); len(got) != 1 || got[string(prefix)] != roots {
			t.Fatalf("seed %d: memo entries %v, want %d under %x only", seed, got, roots, prefix)
		}
		if bytes.Equal(prefix, prev) {
			t.Fatalf("seeds 1 and 2 have the same fingerprint")
		}
		prev = prefix
		m, err := LoadLatest(s)
		if err != nil {
			t.Fatal(err)
		}
		if k := m.(model.Reuser).ReuseKey(5); !bytes.Equal(k, memoKey(prefix, 5)) {
			t.Fatalf("ReuseKey %x, want %x", k, memoKey(prefix, 5))
		}
		if tm := m.(*TrainedModel); !bytes.Equal(tm.memo(), raw) {
			t.Fatal("the loaded models' fingerprint differs from the one the run wrote")
		}
	}
	if err := DeleteAll(s); err != nil {
		t.Fatal(err)
	}
	if m := memoEntries(t, s); len(m) != 0 {
		t.Fatalf("DeleteAll left memo entries: %v", m)
	}
}

// Ensure that a scorer uses a memo entry only when it fits: the entry
// of the subgraph under the models' fingerprint gives the probabilities
// Contribute computes, bit for bit, without debiasing; an entry of
// another subgraph, a damaged one, a truncated one or any entry for
// models that fell back are not used (Contribute's result).
func TestTrainedScorer_ContributeReusing(t *testing.T) {
	sc := synth.Small()
	sc.Nodes = 120
	_, g := synthGraph(t, sc, "pokec")
	cfg := e2eConfig(t, 3)
	cfg.Sens.Epochs, cfg.Score.Epochs, cfg.Classifier.Epochs = 3, 1, 3
	cfg.Classifier.FallbackFASD = string(pipeline.FallbackOff)
	v, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	// The run's own subgraphs and memo entries (as Train writes them).
	in, err := TrainInput(context.Background(), v, &cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := storage.Open("", &storage.Options{InMemory: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	w := &memoWriter{s: mem}
	res, err := pipeline.Run(context.Background(), cfg, in, &pipeline.Options{
		Variants: []pipeline.Variant{pipeline.VariantFASD, pipeline.VariantNoDiffusion}, FairProbs: w.put})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// TrainInput's subgraphs are compact (csg); the query engine hands
	// a scorer dense ones (sg). Both must score alike.
	csg := *in.Subgraphs[0]
	sg := csg
	if sg.A, err = sg.DenseA(nil); err != nil {
		t.Fatal(err)
	}
	sg.X = make([]float32, sg.N()*in.D)
	for l, u := range sg.Nodes {
		copy(sg.X[l*in.D:], in.Features[int(u)*in.D:(int(u)+1)*in.D])
	}
	csg.X = sg.X
	other := *in.Subgraphs[1]
	entry := func(root uint32) []byte {
		v, err := mem.Get(memoKey(w.prefix, root))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	good := entry(sg.Root())
	flipped := slices.Clone(good)
	flipped[len(flipped)-1] ^= 1
	for _, c := range []struct {
		name     string
		fellBack bool
		stored   []byte
		want     bool
	}{
		{"its entry", false, good, true},
		{"another root's entry", false, entry(other.Root()), false},
		{"a damaged probability", false, flipped, false},
		{"truncated", false, good[:len(good)-4], false},
		{"models that fell back", true, good, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := *res.Models
			m.FellBack = c.fellBack
			tm, err := NewTrainedModel(&m, "v")
			if err != nil {
				t.Fatal(err)
			}
			scr, err := tm.NewScorer()
			if err != nil {
				t.Fatal(err)
			}
			rng := func() *rand.Rand { return fasd.NewRand(fasd.RootSeed(cfg.Seed, fasd.PurposeDebias, sg.Root())) }
			var want, got model.Contribution
			if err := scr.Contribute(context.Background(), &sg, rng(), &want); err != nil {
				t.Fatal(err)
			}
			for _, in := range []*fasd.Subgraph{&sg, &csg} {
				reused, err := scr.(model.ReusingScorer).ContributeReusing(context.Background(), in, rng(), c.stored, &got)
				if err != nil {
					t.Fatal(err)
				}
				if reused != c.want {
					t.Fatalf("compact %t: reused %v, want %v", in.A == nil, reused, c.want)
				}
				for k := range want.Probs {
					if !slices.Equal(got.Probs[k], want.Probs[k]) {
						t.Fatalf("compact %t, variant %d: %v, Contribute gives %v", in.A == nil, k, got.Probs[k], want.Probs[k])
					}
				}
			}
		})
	}
}
