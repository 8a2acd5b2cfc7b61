package query

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query/model"
	"github.com/fasd-db/fasd/storage"
)

// Sentinel errors. Check them with errors.Is.
var (
	// ErrClosed is returned by every method of a closed Engine.
	ErrClosed = errors.New("query: engine is closed")
	// ErrNoModel is returned by Open when neither Options.Model nor
	// Options.LoadModel gives a model, or LoadModel finds none (run fasd
	// train). It is model.ErrNoModel.
	ErrNoModel = model.ErrNoModel
	// ErrSchema is returned by Open when the models were trained on other
	// features than the graph now has.
	ErrSchema = errors.New("query: feature schema of the models does not match the graph")
	// ErrFormat is returned by Open for views written in an unknown format.
	ErrFormat = errors.New("query: unknown views format")
	// ErrCorrupt reports a stored view record that does not decode.
	ErrCorrupt = errors.New("query: corrupt view data")
	// ErrUnknownNode is returned for a node id the graph does not hold.
	ErrUnknownNode = errors.New("query: unknown node")
	// ErrInvalid reports invalid options or arguments.
	ErrInvalid = errors.New("query: invalid argument")
)

// viewsFormat is the version of the views' key layout and records. Format
// 1 (a fair vector and an optional baseline) is migrated on Open: its
// records are read as they are, the meta record is rewritten.
const (
	viewsFormat   = 2
	viewsFormatV1 = 1
)

// Options configure Open. A nil *Options means all defaults; zero fields
// mean the default.
type Options struct {
	// Store, if set, is an open store to use instead of opening dir. The
	// engine does not close it.
	Store storage.Store
	// Storage are the options of storage.Open when the engine opens dir.
	Storage *storage.Options
	// Model are the trained models. If nil, LoadModel loads them from the
	// store (runs.LoadLatest loads the newest models fasd train
	// persisted); with neither, Open fails with ErrNoModel.
	Model model.Model
	// LoadModel, used when Model is nil, returns the models to serve,
	// reading them from the engine's store.
	LoadModel func(storage.Reader) (model.Model, error)
	// Workers is the number of goroutines that compute subgraphs in
	// Materialize and Refresh; 0 means GOMAXPROCS.
	Workers int
	// ChunkRoots is the number of roots computed and committed per write
	// batch; 0 means 64. Smaller chunks make interruption lose less work.
	ChunkRoots int
	// ChunkNodes is the number of node views recomputed and committed per
	// write batch; 0 means 1024.
	ChunkNodes int
	// Progress, if set, is called from the calling goroutine of
	// Materialize and Refresh with the stage ("subgraphs" or "nodes") and
	// the amount done of the total.
	Progress func(stage string, done, total int)
	// Distributed, if set, makes Materialize and Refresh coordinators of
	// distributed work: they publish the to-do roots as parts that workers
	// (Engine.Work, in this process or others on a shared store) claim by
	// leases in the store, and fold the staged parts into the views in
	// order, computing a part themselves when no worker holds it.
	Distributed *Distributed
	// Replica, if set, makes the engine a read-only replica of a store
	// another engine writes (a server store opened with
	// storage.Options.Shared, or the writer's own Store in this process):
	// Open writes nothing, every write fails with ErrReadOnly, reads follow
	// the writer's refreshes and are exact or flagged stale (see doc.go,
	// "Replicas").
	Replica *Replica
	// NoReuse makes Materialize and Refresh compute every subgraph even
	// where the models hold work done ahead of time (model.Reuser: the
	// training run's debiased subgraphs, see doc.go, "Reusing training's
	// work"). The views are the same either way; it is for measuring and
	// checking.
	NoReuse bool
	// SubgraphCacheBytes bounds the in-memory cache of debiased subgraphs
	// that Subgraph regenerates; 0 means 64 MiB, negative means no cache.
	SubgraphCacheBytes int64
}

// Validate reports every invalid field.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	var errs []error
	if o.Workers < 0 {
		errs = append(errs, fmt.Errorf("%w: Workers %d, want ≥ 0", ErrInvalid, o.Workers))
	}
	if o.ChunkRoots < 0 {
		errs = append(errs, fmt.Errorf("%w: ChunkRoots %d, want ≥ 0", ErrInvalid, o.ChunkRoots))
	}
	if o.ChunkNodes < 0 {
		errs = append(errs, fmt.Errorf("%w: ChunkNodes %d, want ≥ 0", ErrInvalid, o.ChunkNodes))
	}
	if o.Storage != nil {
		errs = append(errs, o.Storage.Validate())
	}
	if o.Replica != nil && o.Distributed != nil {
		errs = append(errs, fmt.Errorf("%w: Replica and Distributed exclude each other (a replica writes nothing)", ErrInvalid))
	}
	return errors.Join(errs...)
}

// withDefaults returns a copy of o (or of the zero Options for nil) with
// every zero field replaced by its default.
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.ChunkRoots == 0 {
		c.ChunkRoots = 64
	}
	if c.ChunkNodes == 0 {
		c.ChunkNodes = 1024
	}
	if c.SubgraphCacheBytes == 0 {
		c.SubgraphCacheBytes = 64 << 20
	}
	return c
}

// meta is the JSON record under "V" "m": what the views were built with.
type meta struct {
	Format      int    `json:"format"`
	Model       string `json:"model"`
	Seed        uint64 `json:"seed"`
	Mode        string `json:"mode"`
	Depth       int    `json:"depth"`
	Fanout      int    `json:"fanout"`
	Edges       string `json:"edges"`
	MaxNodes    int    `json:"max_nodes"`
	FeatureHash string `json:"feature_hash"`
	// Variants names the probability vectors of every record and view,
	// in stored order.
	Variants []string `json:"variants"`
	// Baseline is format 1's only variant flag (the views hold "fasd" and
	// "no_diffusion" when set, "fasd" alone otherwise).
	Baseline bool `json:"baseline,omitempty"`
}

// equal reports whether m and o describe the same views.
func (m *meta) equal(o *meta) bool {
	a, b := *m, *o
	a.Variants, b.Variants = nil, nil
	return reflect.DeepEqual(a, b) && slices.Equal(m.Variants, o.Variants)
}

// migrate turns a format-1 meta record into format 2.
func (m *meta) migrate() {
	if m.Format != viewsFormatV1 {
		return
	}
	m.Format = viewsFormat
	m.Variants = []string{model.FairVariant}
	if m.Baseline {
		m.Variants = append(m.Variants, model.NoDiffusionVariant)
	}
	m.Baseline = false
}

// state is the JSON record under "V" "s".
type state struct {
	// Complete: every root of the root set has a clean record and every
	// node view is the average over all of them.
	Complete bool `json:"complete"`
	// Marked is the graph version up to which updates have been turned
	// into dirty marks; a different graph version on Open means the graph
	// changed behind the engine's back.
	Marked uint64 `json:"marked"`
	// Refreshed is the graph version of the last full refresh or
	// materialization.
	Refreshed uint64 `json:"refreshed"`
	// Model is the models' version of views begun since it was added
	// (empty before): views rebuilt with other models never end with
	// the state record of the old ones, which a replica compares.
	Model string `json:"model,omitempty"`
}

// Engine serves fair predictions from materialized views over the graph of
// one store and keeps them up to date under graph updates.
//
// Reads (Predict on the cached path, PredictMany, All, Audit, Stats) are
// safe for concurrent use and take no lock. Writers (Update, Refresh,
// Materialize, and the cold path of Predict, which writes back) are
// serialised by one mutex. Only one Engine may write a store at a time.
type Engine struct {
	store    storage.Store
	ownStore bool
	g        *index.Graph
	// model, info, variants and tag are the models Open loaded (base
	// holds them too): a writer computes and serves them until it
	// closes. A replica's reads use the models of its current state
	// instead (Engine.models), which follow the writer's views.
	model    model.Model
	info     model.Info
	variants []string // info.VariantNames()
	tag      uint64
	base     *models
	opts     Options

	wmu       sync.Mutex // held by writers
	complete  atomic.Bool
	stale     atomic.Pointer[roaring.Bitmap] // frozen; replaced, never modified
	version   atomic.Uint64                  // current graph version
	refreshed atomic.Uint64

	extIDs sync.Map // external id → internal id (positive lookups only)
	// extGen counts deletions; extMu orders the cache's fills after a
	// lookup against its evictions after a deletion (see forgetExternal).
	extGen  atomic.Uint64
	extMu   sync.Mutex
	subs    *subgraphCache
	scorers chan model.Scorer // base's pool, for the cold path
	closed  atomic.Bool
	once    sync.Once
	closeE  error

	stats engineStats
	rep   *replica // non-nil on a replica (Options.Replica)
	// testHookBeforeStage, set by tests, runs in Work between computing a
	// part and staging it.
	testHookBeforeStage func(Lease)
	// times, while Materialize or Refresh runs (under wmu), collects
	// their RefreshReport.Times; nil on the cold path.
	times *RefreshTimes
}

// Counters are cumulative counts of the engine's work since Open, and the
// size of its subgraph cache (for monitoring, such as the HTTP API's
// /metrics).
type Counters struct {
	// Predictions served by source.
	PredictionsView, PredictionsCold, PredictionsApprox int64
	// SubgraphsComputed counts subgraphs sampled, debiased and classified;
	// SubgraphsReused those sampled and classified with the debiasing
	// work the models held (model.Reuser) instead.
	SubgraphsComputed, SubgraphsReused int64
	// Subgraph requests answered from the cache and regenerated.
	SubgraphCacheHits, SubgraphCacheMisses int64
	// Subgraphs in the cache and their bytes.
	SubgraphCacheEntries int
	SubgraphCacheBytes   int64
	// Updates applied; refreshes and materializations run.
	Updates, Refreshes int64
	// Storage background errors and warnings reported by the backend
	// (failed flushes or compactions, corruption, low disk).
	StorageErrors, StorageWarnings uint64
}

// Counters returns the engine's counters.
func (e *Engine) Counters() Counters {
	st := &e.stats
	entries, bytes := e.subs.size()
	bg := storage.BackgroundStats(e.store)
	return Counters{
		PredictionsView: st.cached.Load(), PredictionsCold: st.cold.Load(), PredictionsApprox: st.approx.Load(),
		SubgraphsComputed: st.rootsComputed.Load(), SubgraphsReused: st.rootsReused.Load(),
		SubgraphCacheHits: st.subgraphHits.Load(), SubgraphCacheMisses: st.subgraphMisses.Load(),
		SubgraphCacheEntries: entries, SubgraphCacheBytes: bytes,
		Updates: st.updates.Load(), Refreshes: st.refreshes.Load(),
		StorageErrors: bg.Errors, StorageWarnings: bg.Warnings,
	}
}

// engineStats are the atomic counters behind Counters.
type engineStats struct {
	cached, cold, approx atomic.Int64
	refreshes, updates   atomic.Int64
	rootsComputed        atomic.Int64
	rootsReused          atomic.Int64
	subgraphHits         atomic.Int64
	subgraphMisses       atomic.Int64
}

// Open opens the engine over the graph in the store at dir (or
// opts.Store), with the trained models of opts.Model or, if nil, those
// opts.LoadModel reads from the store. It checks the models' feature
// schema against the graph (ErrSchema) and the views' format (ErrFormat).
// Views built with other models or sampler settings are deleted. If the
// graph changed since the views last saw it (outside this engine), every
// stored subgraph is marked dirty.
func Open(dir string, opts *Options) (_ *Engine, err error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	e := &Engine{opts: o, scorers: make(chan model.Scorer, o.Workers+2), subs: newSubgraphCache(o.SubgraphCacheBytes)}
	if o.Store != nil {
		e.store = o.Store
	} else {
		s, err := storage.Open(dir, o.Storage)
		if err != nil {
			return nil, err
		}
		e.store, e.ownStore = s, true
	}
	defer func() {
		if err != nil && e.ownStore {
			err = errors.Join(err, e.store.Close())
		}
	}()
	if e.g, err = index.Open(e.store); err != nil {
		return nil, err
	}
	e.model = o.Model
	if e.model == nil {
		if o.LoadModel == nil {
			return nil, fmt.Errorf("%w: give Options.Model or Options.LoadModel", ErrNoModel)
		}
		if e.model, err = o.LoadModel(e.store); err != nil {
			return nil, fmt.Errorf("query: load models: %w", err)
		}
	}
	if e.base, err = newModels(e.g, e.model, e.scorers); err != nil {
		return nil, err
	}
	e.info, e.variants, e.tag = e.base.info, e.base.variants, e.base.tag
	if o.Replica != nil {
		err = e.openReplica()
	} else {
		err = e.init()
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// modelTag is the 64-bit tag of a model version stored in every record.
func modelTag(version string) uint64 {
	h := sha256.Sum256([]byte(version))
	return binary.BigEndian.Uint64(h[:8])
}

func (e *Engine) wantMeta() meta { return e.base.wantMeta() }

// init reconciles the stored views with the models and the graph.
func (e *Engine) init() error {
	ver, err := e.g.Version()
	if err != nil {
		return err
	}
	want := e.wantMeta()
	var have meta
	b, err := e.store.Get(keyMeta)
	switch {
	case errors.Is(err, storage.ErrNotFound):
	case err != nil:
		return fmt.Errorf("query: read meta: %w", err)
	default:
		if err := json.Unmarshal(b, &have); err != nil {
			return fmt.Errorf("%w: meta: %w", ErrCorrupt, err)
		}
		if have.Format != viewsFormat && have.Format != viewsFormatV1 {
			return fmt.Errorf("%w: views format %d, this build reads %d and %d (delete the views' keys, prefix 'V', and run fasd materialize, or use a newer build)",
				ErrFormat, have.Format, viewsFormatV1, viewsFormat)
		}
	}
	if have.Format == viewsFormatV1 {
		// Records and views of format 1 decode as format 2 with one or
		// two variants: rewriting the meta record migrates the views.
		have.migrate()
		if have.equal(&want) {
			mb, _ := json.Marshal(&want)
			b := e.store.NewBatch()
			err := b.Set(keyMeta, mb)
			if err == nil {
				err = b.Commit()
			}
			b.Close()
			if err != nil {
				return fmt.Errorf("query: migrate views to format %d: %w", viewsFormat, err)
			}
		}
	}
	if !have.equal(&want) {
		// No views, or views of other models: start afresh.
		if err := e.wipe(); err != nil {
			return err
		}
		mb, _ := json.Marshal(&want)
		if err := e.writeMetaState(mb, state{Marked: ver, Model: want.Model}); err != nil {
			return err
		}
	}
	st, err := e.readState()
	if err != nil {
		return err
	}
	sets, err := getBitmaps(e.store, keyStale, keyAffected, keyRoots, keyDirty)
	if err != nil {
		return err
	}
	stale, affected, stored, dirty := sets[0], sets[1], sets[2], sets[3]
	// Nodes whose view an interrupted Materialize or Refresh left to
	// recompute are stale, whatever the stale set says.
	stale.Or(affected)
	if st.Marked != ver {
		// The graph changed without dirty marks: distrust every subgraph.
		dirty.Or(stored)
		v, err := e.g.View()
		if err != nil {
			return err
		}
		stale.AddRange(0, uint64(v.NumNodes()))
		v.Close()
		st.Marked = ver
		b := e.store.NewBatch()
		defer b.Close()
		if err := errors.Join(setBitmap(b, keyDirty, dirty), setBitmap(b, keyStale, stale), setJSON(b, keyState, &st)); err != nil {
			return err
		}
		if err := b.Commit(); err != nil {
			return fmt.Errorf("query: mark views dirty: %w", err)
		}
	}
	e.complete.Store(st.Complete)
	e.stale.Store(stale)
	e.version.Store(ver)
	e.refreshed.Store(st.Refreshed)
	return nil
}

func setJSON(b storage.Batch, key []byte, v any) error {
	j, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("query: encode %x: %w", key, err)
	}
	return b.Set(key, j)
}

func (e *Engine) writeMetaState(mb []byte, st state) error {
	b := e.store.NewBatch()
	defer b.Close()
	if err := errors.Join(b.Set(keyMeta, mb), setJSON(b, keyState, &st)); err != nil {
		return err
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("query: write meta: %w", err)
	}
	return nil
}

func (e *Engine) readState() (state, error) {
	var st state
	b, err := e.store.Get(keyState)
	if err != nil {
		return st, fmt.Errorf("%w: read state: %w", ErrCorrupt, err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%w: state: %w", ErrCorrupt, err)
	}
	return st, nil
}

// wipe deletes every view key, in bounded batches.
func (e *Engine) wipe() error { return DeleteViews(e.store) }

// DeleteViews deletes every key of the views (prefix index.PrefixViews) in
// s, in bounded batches; no engine may have s open. The meta and state
// records go first, in one batch, so that a replica sees the state record
// change before any view is gone. Views are derived from the graph and
// rebuilt by Materialize (a replacing load drops the same prefix through
// index.LoadOptions.Drop).
func DeleteViews(s storage.Store) error {
	b := s.NewBatch()
	err := errors.Join(b.Delete(keyState), b.Delete(keyMeta))
	if err == nil {
		err = b.Commit()
	}
	b.Close()
	if err != nil {
		return fmt.Errorf("query: delete views: %w", err)
	}
	if _, err := storage.DeletePrefix(s, []byte{prefixViews}); err != nil {
		return fmt.Errorf("query: delete views: %w", err)
	}
	return nil
}

// Close releases the engine (and the store if the engine opened it). A
// second call returns the result of the first. Close waits for a running
// writer to finish; cancel its context first to stop it early.
func (e *Engine) Close() error {
	e.once.Do(func() {
		if e.rep != nil {
			e.rep.close()
		}
		e.wmu.Lock()
		defer e.wmu.Unlock()
		e.closed.Store(true)
		if e.ownStore {
			e.closeE = e.store.Close()
		}
	})
	return e.closeE
}

func (e *Engine) check() error {
	if e.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Graph returns the graph the engine serves. Update the graph through the
// engine (Update), never directly, or the views will not know.
func (e *Engine) Graph() *index.Graph { return e.g }

// Store returns the engine's store.
func (e *Engine) Store() storage.Store { return e.store }

// ModelInfo returns the description of the models the engine serves now
// (on a replica, those of the views it last caught up with; see doc.go,
// "Replicas").
func (e *Engine) ModelInfo() model.Info { return e.models().info }

// rootSet returns the roots of the subgraph set in the graph of v: the
// train, validation and test nodes, plus every labelled node with a known
// sensitive value (so labelled nodes added later become roots; on a graph
// loaded with the DIG split the two agree).
func rootSet(v *index.View) (*roaring.Bitmap, error) {
	var parts []*roaring.Bitmap
	for _, s := range index.Splits {
		bm, err := v.SplitSet(s)
		if err != nil {
			return nil, err
		}
		parts = append(parts, bm)
	}
	lab, err := v.Labelled()
	if err != nil {
		return nil, err
	}
	g0, err := v.Group(0)
	if err != nil {
		return nil, err
	}
	g1, err := v.Group(1)
	if err != nil {
		return nil, err
	}
	lab.And(roaring.Or(g0, g1))
	return roaring.FastOr(append(parts, lab)...), nil
}
