package index

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/fasd-db/fasd/fasd/attr"
	"github.com/fasd-db/fasd/storage"
)

// FormatVersion is the graph format this build writes and reads; it is
// recorded in the schema record.
const FormatVersion = 1

// Split says which part of the train/validation/test split a node is in;
// it is attr.Split, the type package fasd uses.
type Split = attr.Split

// The splits (attr's). SplitNone is every node outside the split
// (unlabelled nodes, test nodes of unknown sensitive value, nodes added
// later).
const (
	SplitNone  = attr.SplitNone
	SplitTrain = attr.SplitTrain
	SplitVal   = attr.SplitVal
	SplitTest  = attr.SplitTest
)

// Splits lists the three parts of the split, in order.
var Splits = attr.Splits

// Unknown is the sensitive value of a node whose group is not known, and
// Unlabelled the label of a node without one: both attr.Unknown.
const (
	Unknown    = attr.Unknown
	Unlabelled = attr.Unknown
)

// Node is everything the graph stores about a node apart from its edges.
type Node struct {
	ExternalID int64
	Sensitive  int8 // 0, 1 or Unknown
	Label      int8 // 0, 1 or Unlabelled
	Split      Split
	Features   []float32 // len = Schema.Dim()
}

// Schema describes the node features. It is fixed when the graph is
// created and stored in the graph's metadata.
type Schema struct {
	// Format is the graph format version (FormatVersion); it is filled in
	// by Create.
	Format int `json:"format"`
	// Features names the feature columns, in vector order.
	Features []string `json:"features"`
}

// Dim returns the feature dimension.
func (s *Schema) Dim() int { return len(s.Features) }

// FeatureHash identifies the feature names, in order: the hex SHA-256 of
// the names joined by NUL bytes. Trained models record it (the training
// pipeline computes the same value) so that models are never used on a
// graph with other features.
func (s *Schema) FeatureHash() string {
	h := sha256.Sum256([]byte(strings.Join(s.Features, "\x00")))
	return hex.EncodeToString(h[:])
}

func (s *Schema) validate() error {
	seen := make(map[string]bool, len(s.Features))
	for _, f := range s.Features {
		if seen[f] {
			return fmt.Errorf("%w: feature %q named twice", ErrInvalid, f)
		}
		seen[f] = true
	}
	return nil
}

// Graph is the graph stored in a storage.Store. Reads go through a View
// (taken with Graph.View); writes go through Graph.Update, which applies each
// update as one atomic batch.
//
// A Graph is safe for concurrent use: updates are serialised by a mutex,
// views read consistent snapshots. Only one Graph (in one process) may
// update a store at a time. The Graph does not own the store: closing the
// store is the caller's job, after every View is closed.
type Graph struct {
	store  storage.Store
	schema Schema
	mu     sync.Mutex // held by Update
}

// Open opens the graph held by store. It fails with ErrIncompleteLoad when
// a load was interrupted, with ErrNoGraph when there is no graph, with
// ErrFormat for an unknown format.
func Open(store storage.Store) (*Graph, error) {
	if err := checkLoading(store); err != nil {
		return nil, err
	}
	b, err := store.Get(keySchema)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrNoGraph
	}
	if err != nil {
		return nil, fmt.Errorf("index: read schema: %w", err)
	}
	var s Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%w: schema: %w", ErrCorrupt, err)
	}
	if s.Format != FormatVersion {
		return nil, fmt.Errorf("%w: graph format %d, this build reads %d", ErrFormat, s.Format, FormatVersion)
	}
	if _, err := readState(store); err != nil {
		return nil, err
	}
	return &Graph{store: store, schema: s}, nil
}

// checkLoading fails with ErrIncompleteLoad when the incomplete-load marker
// is present.
func checkLoading(r storage.Reader) error {
	b, err := r.Get(keyLoading)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("index: read load marker: %w", err)
	}
	var m loadMarker
	if json.Unmarshal(b, &m) == nil && m.Started != "" {
		return fmt.Errorf("%w (load of %s started %s)", ErrIncompleteLoad, m.Source, m.Started)
	}
	return ErrIncompleteLoad
}

// Create creates an empty graph with the given feature schema in store and
// returns it. It fails with ErrGraphExists if the store holds a graph (or an
// incomplete load).
func Create(store storage.Store, schema Schema) (*Graph, error) {
	if err := schema.validate(); err != nil {
		return nil, err
	}
	if err := checkLoading(store); err != nil {
		return nil, err
	}
	if _, err := store.Get(keySchema); err == nil {
		return nil, ErrGraphExists
	} else if !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("index: read schema: %w", err)
	}
	schema.Format = FormatVersion
	schema.Features = append([]string{}, schema.Features...)
	sb, err := json.Marshal(&schema)
	if err != nil {
		return nil, fmt.Errorf("index: encode schema: %w", err)
	}
	ver, err := readVersionCounter(store)
	if err != nil {
		return nil, err
	}
	st := state{Version: ver + 1}
	b := store.NewBatch()
	defer b.Close()
	for _, kv := range [][2][]byte{{keySchema, sb}, {keyState, st.encode()}, {keyVersion, encodeU64(st.Version)}} {
		if err := b.Set(kv[0], kv[1]); err != nil {
			return nil, fmt.Errorf("index: create: %w", err)
		}
	}
	if err := b.Commit(); err != nil {
		return nil, fmt.Errorf("index: create: %w", err)
	}
	return &Graph{store: store, schema: schema}, nil
}

// readVersionCounter returns the highest version ever used in the store
// (kept across Replace loads so that versions never repeat), 0 if none.
func readVersionCounter(r storage.Reader) (uint64, error) {
	b, err := r.Get(keyVersion)
	if errors.Is(err, storage.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("index: read version: %w", err)
	}
	return decodeU64(b)
}

func readState(r storage.Reader) (state, error) {
	b, err := r.Get(keyState)
	if err != nil {
		return state{}, fmt.Errorf("%w: read state: %w", ErrCorrupt, err)
	}
	return decodeState(b)
}

// Store returns the store the graph lives in.
func (g *Graph) Store() storage.Store { return g.store }

// Schema returns a copy of the feature schema.
func (g *Graph) Schema() Schema {
	s := g.schema
	s.Features = append([]string(nil), s.Features...)
	return s
}

// Version returns the current graph version: a number that every committed
// update increases (and that is never reused, also not after a Replace
// load). Two reads that see the same version see the same graph.
func (g *Graph) Version() (uint64, error) {
	st, err := readState(g.store)
	return st.Version, err
}

// checkNode reports whether v is a valid node id for n nodes.
func checkNode(v uint32, n uint32) error {
	if v >= n {
		return fmt.Errorf("%w: node %d, graph has %d nodes", ErrNodeRange, v, n)
	}
	return nil
}

// checkFeatures checks a feature vector against the schema.
func (s *Schema) checkFeatures(f []float32) error {
	if len(f) != s.Dim() {
		return fmt.Errorf("%w: %d features, schema has %d", ErrInvalid, len(f), s.Dim())
	}
	for i, x := range f {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: feature %q is %v", ErrInvalid, s.Features[i], x)
		}
	}
	return nil
}

func checkTri(what string, x int8) error {
	if x < -1 || x > 1 {
		return fmt.Errorf("%w: %s %d, want -1, 0 or 1", ErrInvalid, what, x)
	}
	return nil
}

func checkSplit(s Split) error {
	if s > SplitTest {
		return fmt.Errorf("%w: split %d", ErrInvalid, s)
	}
	return nil
}
