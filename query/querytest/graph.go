package querytest

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/index/synth"
	"github.com/fasd-db/fasd/storage"
	_ "github.com/fasd-db/fasd/storage/badger" // the engines the tests open
	_ "github.com/fasd-db/fasd/storage/pebble"
	"github.com/fasd-db/fasd/storage/postgres"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// OpenMem opens an in-memory store of backend b ("" = the default) that is
// closed when the test ends. For storage.Postgres, which has no in-memory
// mode, it opens a fresh table on the server storagetest.PostgresEnv
// names (and skips t without one), dropped when the test ends.
func OpenMem(t testing.TB, b storage.Backend) storage.Store {
	t.Helper()
	if b == storage.Postgres {
		return OpenPostgres(t)
	}
	s, err := storage.Open("", &storage.Options{InMemory: true, NoSync: true, Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// OpenMemFaulty opens an in-memory Pebble store with synced commits (a
// commit waits for its log write, so that the fault reaches it), closed
// when the test ends, whose every file write, sync, create and rename
// fails with ENOSPC while full reports true: a disk that fills up.
func OpenMemFaulty(t testing.TB, full *atomic.Bool) storage.Store {
	t.Helper()
	inject := func(op storage.FileOp, path string) error {
		if full.Load() {
			return &os.PathError{Op: string(op), Path: path, Err: syscall.ENOSPC}
		}
		return nil
	}
	s, err := storage.Open("", &storage.Options{InMemory: true, Backend: storage.Pebble,
		InjectFault: inject, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// OpenPostgres opens a store in a fresh table on the server
// storagetest.PostgresEnv names, closed and dropped when the test ends; it
// skips t when the variable is unset.
func OpenPostgres(t testing.TB) storage.Store {
	t.Helper()
	dsn := storagetest.PostgresDSN(t)
	s, err := storage.Open(dsn, &storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		if err := postgres.Drop(context.Background(), dsn); err != nil {
			t.Errorf("drop the test table: %v", err)
		}
	})
	return s
}

// FeatureNames returns d feature names f0, f1, ….
func FeatureNames(d int) []string {
	names := make([]string, d)
	for i := range names {
		names[i] = fmt.Sprintf("f%d", i)
	}
	return names
}

// RandomNode draws the attributes of a node with external id ext and d
// features: 5 % of unknown sensitive value, 60 % labelled, most labelled
// nodes in the split.
func RandomNode(rng *rand.Rand, ext int64, d int) index.Node {
	n := index.Node{ExternalID: ext, Sensitive: int8(rng.IntN(2)), Label: index.Unlabelled, Features: make([]float32, d)}
	if rng.IntN(20) == 0 {
		n.Sensitive = index.Unknown
	}
	if rng.IntN(10) < 6 {
		n.Label = int8(rng.IntN(2))
		if n.Sensitive >= 0 || rng.IntN(2) == 0 {
			n.Split = index.Splits[rng.IntN(3)]
		}
	}
	for i := range n.Features {
		n.Features[i] = float32(rng.NormFloat64())
	}
	return n
}

// NewGraph builds, in s, a random graph of n nodes (external ids 1000,
// 1001, …) with d features and about deg·n/2 edges.
func NewGraph(t testing.TB, s storage.Store, n, d int, deg float64, seed uint64) *index.Graph {
	t.Helper()
	g, err := index.Create(s, index.Schema{Features: FeatureNames(d)})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	_, err = g.Update(context.Background(), func(tx *index.Tx) error {
		for i := range n {
			if _, err := tx.AddNode(RandomNode(rng, int64(1000+i), d)); err != nil {
				return err
			}
		}
		for range int(deg * float64(n) / 2) {
			u, v := uint32(rng.IntN(n)), uint32(rng.IntN(n))
			if u == v {
				continue
			}
			if _, err := tx.AddEdge(u, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// LoadSynth generates the synth preset name (synth.Preset) and loads it
// into an on-disk Pebble store under dir, closed when the test ends.
func LoadSynth(t testing.TB, name, dir string) storage.Store {
	t.Helper()
	cfg, err := synth.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return LoadSynthConfig(t, cfg, dir)
}

// LoadSynthConfig is LoadSynth of a generator configuration (what fasd gen
// writes with the same knobs).
func LoadSynthConfig(t testing.TB, cfg synth.Config, dir string) storage.Store {
	t.Helper()
	files, _, err := synth.Write(context.Background(), filepath.Join(dir, "dump"), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := storage.Open(filepath.Join(dir, "store"), &storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	p, err := dump.LookupPreset("synth")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := index.Load(context.Background(), s, &index.LoadOptions{Nodes: files.Nodes, Edges: files.Edges, Spec: p.Spec, Source: "synth"}); err != nil {
		t.Fatal(err)
	}
	return s
}
