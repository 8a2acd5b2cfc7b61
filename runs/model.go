package runs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query/model"
	"github.com/fasd-db/fasd/storage"
)

// ErrCorrupt reports stored run data that does not decode or does not
// match its record.
var ErrCorrupt = errors.New("runs: corrupt run data")

// Trained runs live under their own first key byte (see doc.go):
//
//	"T" "s"                      highest run id used, u64 big-endian
//	"T" "r" id:u64               JSON Record (written last: its presence
//	                             marks the run complete)
//	"T" "m" id:u64 chunk:u32     model bundle (pipeline.Models.MarshalBinary),
//	                             split into chunks of at most 1 MiB
const (
	prefixTrain   = index.PrefixRuns
	famRunSeq     = 's'
	famRecord     = 'r'
	famRunModel   = 'm'
	modelChunkMax = 1 << 20
)

func runKey(id uint64) []byte {
	k := []byte{prefixTrain, famRecord, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint64(k[2:], id)
	return k
}

func modelChunkKey(id uint64, chunk uint32) []byte {
	k := make([]byte, 14)
	k[0], k[1] = prefixTrain, famRunModel
	binary.BigEndian.PutUint64(k[2:], id)
	binary.BigEndian.PutUint32(k[10:], chunk)
	return k
}

var keyRunSeq = []byte{prefixTrain, famRunSeq}

// Record is the persisted record of one training run.
type Record struct {
	ID           uint64    `json:"id"`
	Created      time.Time `json:"created"`
	Preset       string    `json:"preset"`
	Seed         uint64    `json:"seed"`
	Config       string    `json:"config"` // effective config, TOML
	GraphVersion uint64    `json:"graph_version"`
	// Model bundle: size, chunk count and hex SHA-256 (empty without
	// models).
	ModelBytes  int    `json:"model_bytes"`
	ModelChunks int    `json:"model_chunks"`
	ModelSHA256 string `json:"model_sha256,omitempty"`
	// Result holds metrics, per-group metrics, stage timings and
	// diagnostics.
	Result *pipeline.Result `json:"result"`
	// Memo describes the debias memo the run left for the query engine
	// (memo.go), or is nil.
	Memo *MemoInfo `json:"memo,omitempty"`
}

// MemoInfo describes a run's debias memo: f's probabilities on every
// training subgraph the run debiased, which the query engine uses instead
// of debiasing those subgraphs again (TrainedModel.ReuseKey).
type MemoInfo struct {
	// Fingerprint is the models' pipeline.Models.FairFingerprint.
	Fingerprint string `json:"fingerprint"`
	// Subgraphs is the number of entries written.
	Subgraphs int `json:"subgraphs"`
}

// Save persists a run: the model bundle (if m is not nil) in chunks,
// then the record and the run counter in one final batch. It assigns
// rec.ID and fills the model fields of rec. A crash before the final batch
// leaves no record (and unreferenced chunks that the next run overwrites).
func Save(s storage.Store, rec *Record, m *pipeline.Models) error {
	last, err := lastRunID(s)
	if err != nil {
		return err
	}
	rec.ID = last + 1
	if m != nil {
		bundle, err := m.MarshalBinary()
		if err != nil {
			return err
		}
		sum := sha256.Sum256(bundle)
		rec.ModelBytes, rec.ModelSHA256 = len(bundle), hex.EncodeToString(sum[:])
		rec.ModelChunks = (len(bundle) + modelChunkMax - 1) / modelChunkMax
		for c := 0; c < rec.ModelChunks; c++ {
			b := s.NewBatch()
			err := b.Set(modelChunkKey(rec.ID, uint32(c)), bundle[c*modelChunkMax:min(len(bundle), (c+1)*modelChunkMax)])
			if err == nil {
				err = b.Commit()
			}
			b.Close()
			if err != nil {
				return fmt.Errorf("runs: save model chunk %d: %w", c, err)
			}
		}
	}
	rj, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("runs: encode run record: %w", err)
	}
	b := s.NewBatch()
	defer b.Close()
	if err := b.Set(runKey(rec.ID), rj); err != nil {
		return fmt.Errorf("runs: save run record: %w", err)
	}
	if err := b.Set(keyRunSeq, binary.BigEndian.AppendUint64(nil, rec.ID)); err != nil {
		return fmt.Errorf("runs: save run record: %w", err)
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("runs: save run record: %w", err)
	}
	return nil
}

// DeleteAll deletes every run record and model bundle of s (prefix
// index.PrefixRuns), in bounded batches, and the run counter with them (a
// replacing load drops the same prefix through index.LoadOptions.Drop).
func DeleteAll(s storage.Store) error {
	if _, err := storage.DeletePrefix(s, []byte{prefixTrain}); err != nil {
		return fmt.Errorf("runs: delete runs: %w", err)
	}
	return nil
}

func lastRunID(s storage.Reader) (uint64, error) {
	v, err := s.Get(keyRunSeq)
	if errors.Is(err, storage.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("runs: read run counter: %w", err)
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: run counter of %d bytes", ErrCorrupt, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// List returns every persisted run record in ascending id order.
func List(s storage.Reader) ([]*Record, error) {
	lo := []byte{prefixTrain, famRecord}
	it, err := s.NewIter(lo, storage.PrefixEnd(lo))
	if err != nil {
		return nil, fmt.Errorf("runs: list runs: %w", err)
	}
	defer it.Close()
	var out []*Record
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.Value()
		if err != nil {
			return nil, fmt.Errorf("runs: list runs: %w", err)
		}
		rec := new(Record)
		if err := json.Unmarshal(v, rec); err != nil {
			return nil, fmt.Errorf("%w: run record %x: %w", ErrCorrupt, it.Key(), err)
		}
		out = append(out, rec)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("runs: list runs: %w", err)
	}
	return out, nil
}

// LoadModels reads and decodes the model bundle of rec, checking its
// size and SHA-256.
func LoadModels(s storage.Reader, rec *Record) (*pipeline.Models, error) {
	if rec.ModelChunks == 0 {
		return nil, fmt.Errorf("%w: run %d has no models", model.ErrNoModel, rec.ID)
	}
	var buf bytes.Buffer
	for c := 0; c < rec.ModelChunks; c++ {
		v, err := s.Get(modelChunkKey(rec.ID, uint32(c)))
		if err != nil {
			return nil, fmt.Errorf("runs: run %d model chunk %d: %w", rec.ID, c, err)
		}
		buf.Write(v)
	}
	sum := sha256.Sum256(buf.Bytes())
	if buf.Len() != rec.ModelBytes || hex.EncodeToString(sum[:]) != rec.ModelSHA256 {
		return nil, fmt.Errorf("%w: run %d model bundle does not match its record", ErrCorrupt, rec.ID)
	}
	m, err := pipeline.UnmarshalModels(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%w: run %d: %w", ErrCorrupt, rec.ID, err)
	}
	return m, nil
}

// Latest returns the newest run record that has models, or model.ErrNoModel.
func Latest(s storage.Reader) (*Record, error) {
	runs, err := List(s)
	if err != nil {
		return nil, err
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].ModelChunks > 0 {
			return runs[i], nil
		}
	}
	return nil, model.ErrNoModel
}

// TrainedModel is a model.Model over persisted (or freshly trained) pipeline
// models: its scorers debias a subgraph with the score networks and
// classify it with f, exactly as the pipeline did, and add the
// w/o-Diffusion classifier's probabilities on the clean subgraph when the
// models have one. It is safe for concurrent use; its scorers are not.
type TrainedModel struct {
	models *pipeline.Models
	info   model.Info

	memoOnce   sync.Once
	memoFP     []byte // raw fair fingerprint; nil: no memo to read
	memoPrefix []byte
}

// NewTrainedModel wraps models; version identifies them (the bundle's
// SHA-256 for persisted runs).
func NewTrainedModel(m *pipeline.Models, version string) (*TrainedModel, error) {
	if m.F == nil || m.ScoreX == nil || m.ScoreA == nil {
		return nil, fmt.Errorf("%w: models lack f or the score networks", model.ErrNoModel)
	}
	return &TrainedModel{models: m, info: model.Info{
		Version:     version,
		Seed:        m.Config.Seed,
		Sample:      m.Config.SampleOptions(),
		FeatureHash: m.FeatureHash,
		Variants:    variantsOf(m),
		Threshold:   m.Threshold,
	}}, nil
}

// variantsOf names the probability vectors of m's scorers: model.FairVariant,
// and model.NoDiffusionVariant when m has the w/o-Diffusion classifier.
func variantsOf(m *pipeline.Models) []string {
	if m.FBase == nil {
		return []string{model.FairVariant}
	}
	return []string{model.FairVariant, model.NoDiffusionVariant}
}

// LoadLatest loads the models of the newest run with models in s, or fails
// with an error wrapping model.ErrNoModel. It is what the engine's
// Options.LoadModel takes to serve the models fasd train persisted.
func LoadLatest(s storage.Reader) (model.Model, error) {
	rec, err := Latest(s)
	if err != nil {
		return nil, err
	}
	m, err := LoadModels(s, rec)
	if err != nil {
		return nil, err
	}
	return NewTrainedModel(m, rec.ModelSHA256)
}

// Models returns the underlying pipeline models.
func (m *TrainedModel) Models() *pipeline.Models { return m.models }

// Info implements model.Model.
func (m *TrainedModel) Info() model.Info { return m.info }

// NewScorer implements model.Model.
func (m *TrainedModel) NewScorer() (model.Scorer, error) {
	e, err := m.models.NewEngine()
	if err != nil {
		return nil, err
	}
	return &trainedScorer{e: e, fp: m.memo()}, nil
}

// ReuseKey implements model.Reuser: the key of root's entry in the debias
// memo of models with these models' fair fingerprint (memo.go), which
// fasd train wrote for every training root; nil for models that debias
// nothing when served (they fell back, or lack score networks).
func (m *TrainedModel) ReuseKey(root uint32) []byte {
	if m.memo() == nil {
		return nil
	}
	return memoKey(m.memoPrefix, root)
}

// memo returns the raw fair fingerprint of models whose memo is worth
// reading (computed once), or nil.
func (m *TrainedModel) memo() []byte {
	m.memoOnce.Do(func() {
		if m.models.FellBack || m.models.ScoreX == nil {
			return
		}
		fp, err := m.models.FairFingerprint()
		if err != nil {
			return
		}
		if raw, p, err := memoPrefix(fp); err == nil {
			m.memoFP, m.memoPrefix = raw, p
		}
	})
	return m.memoFP
}

type trainedScorer struct {
	e    *pipeline.Engine
	x, a []float32
	fp   []byte // raw fair fingerprint of the models, nil: no memo
	dig  memoDigest
	memo []float32
	// A compact subgraph (fasd.Subgraph.Compact) is scored as a copy
	// with its adjacency written into ca.
	sg fasd.Subgraph
	ca []float32
}

// dense returns sg, or when it is compact a copy of it with its dense
// adjacency (valid until the next call).
func (s *trainedScorer) dense(sg *fasd.Subgraph) (*fasd.Subgraph, error) {
	if sg.A != nil {
		return sg, nil
	}
	a, err := sg.DenseA(s.ca)
	if err != nil {
		return nil, err
	}
	s.ca = a
	s.sg = *sg
	s.sg.A = a
	return &s.sg, nil
}

// ContributeReusing implements model.ReusingScorer: when stored is the
// debias memo entry of sg (same root, size, clean features and adjacency;
// the engine read it under ReuseKey, so under these models' fingerprint),
// variant "fasd" is its probabilities, which equal f(Debias(sg)) with the
// root's generator bit for bit, and nothing is debiased; "no_diffusion"
// is computed as by Contribute. Otherwise it is Contribute.
func (s *trainedScorer) ContributeReusing(ctx context.Context, sg *fasd.Subgraph, rng *rand.Rand, stored []byte, dst *model.Contribution) (bool, error) {
	sg, err := s.dense(sg)
	if err != nil {
		return false, err
	}
	m := s.e.Models()
	var p []float32
	if s.fp != nil && !m.FellBack {
		p = memoProbs(stored, s.fp, sg, m.D, &s.dig, s.memo)
	}
	if p == nil {
		return false, s.Contribute(ctx, sg, rng, dst)
	}
	s.memo = p
	if err := ctx.Err(); err != nil {
		return false, err
	}
	n := sg.N()
	k := 1
	if m.FBase != nil {
		k = 2
	}
	dst.Resize(k, n)
	copy(dst.Probs[0], p)
	if k == 1 {
		return true, nil
	}
	return true, s.e.BaseProbs(sg.X, sg.A, n, dst.Probs[1])
}

// Contribute implements model.Scorer: X̃, Ã = Debias(sg, rng); variant
// "fasd" = f(X̃, Ã); variant "no_diffusion" = f_base(X, A) when the models
// have a baseline. Models that fell back (pipeline.Models.FellBack) debias
// nothing: "fasd" is f_base(X, A) too.
func (s *trainedScorer) Contribute(ctx context.Context, sg *fasd.Subgraph, rng *rand.Rand, dst *model.Contribution) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sg, err := s.dense(sg)
	if err != nil {
		return err
	}
	n, d := sg.N(), sg.D
	m := s.e.Models()
	hasBase := m.FBase != nil
	k := 1
	if hasBase {
		k = 2
	}
	dst.Resize(k, n)
	if m.FellBack {
		if err := s.e.BaseProbs(sg.X, sg.A, n, dst.Probs[0]); err != nil {
			return err
		}
		copy(dst.Probs[1], dst.Probs[0])
		return nil
	}
	s.x, s.a = model.GrowBuffer(s.x, n*d), model.GrowBuffer(s.a, n*n)
	if err := s.e.Debias(sg.X, sg.A, n, rng, s.x, s.a); err != nil {
		return err
	}
	if err := s.e.Probs(s.x, s.a, n, dst.Probs[0]); err != nil {
		return err
	}
	if !hasBase {
		return nil
	}
	return s.e.BaseProbs(sg.X, sg.A, n, dst.Probs[1])
}

// DebiasSubgraph implements model.SubgraphDebiaser: the X̃, Ã that Contribute
// classifies.
func (s *trainedScorer) DebiasSubgraph(ctx context.Context, sg *fasd.Subgraph, rng *rand.Rand, x, a []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sg, err := s.dense(sg)
	if err != nil {
		return err
	}
	n, d := sg.N(), sg.D
	if len(x) != n*d || len(a) != n*n {
		return fmt.Errorf("%w: buffers of %d and %d values for %d nodes × %d features", fasd.ErrShape, len(x), len(a), n, d)
	}
	if s.e.Models().FellBack {
		copy(x, sg.X)
		copy(a, sg.A)
		return nil
	}
	return s.e.Debias(sg.X, sg.A, n, rng, x, a)
}
