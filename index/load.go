// Load's API: its options, its report, and the order of its phases; the
// phases live in load_scan.go, load_check.go, load_adjacency.go,
// load_replace.go and load_write.go, the split in load_split.go.

package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/storage"
)

// ErrUnknownEndpoint is the Kind of the *dump.Error that Load returns in
// Strict mode for an edge whose endpoint is not a node of the node file.
var ErrUnknownEndpoint = errors.New("index: unknown edge endpoint")

// LoadOptions configure Load. Nodes, Edges and a valid Spec are required.
type LoadOptions struct {
	// Nodes and Edges are the paths of the node CSV and the edge list,
	// plain or gzip.
	Nodes, Edges string
	// Spec describes the node file's columns (see dump.Spec and the
	// presets of dump.LookupPreset).
	Spec dump.Spec
	// Source names the dump in the load report (a preset name, say).
	Source string
	Split  SplitOptions
	// Replace allows loading into a store that already holds a graph (or an
	// incomplete load): every key under index's own prefixes (KeyPrefixes
	// owned by "index") is deleted first, except the version counter, so
	// versions keep growing. While the store holds keys under a prefix
	// that DependsOnGraph (views 'V', training runs 'T') and Drop does not
	// name it, Load fails with ErrDependents before writing anything.
	Replace bool
	// Drop names, with Replace, the prefixes of data that depends on the
	// graph that Load deletes with it (PrefixViews: views are rebuilt by
	// Materialize; PrefixRuns: trained runs and models). Each must be a
	// KeyPrefixes entry that DependsOnGraph: the registry says the whole
	// prefix is its owner's derived data, so dropping it is one prefix
	// delete (storage.DeletePrefix), done once the input is validated and
	// before the old graph is deleted.
	Drop []byte
	// Strict makes an edge with an endpoint missing from the node file an
	// error (with file:line) instead of a skipped and counted edge.
	Strict bool
	// Load refuses, with ErrDegenerate and before anything is written, a
	// node file without data rows, and unless allowed here a graph whose
	// labelled nodes are all of one class (or that has none), whose nodes
	// of known sensitive value are all in one group, or in which no edge is
	// kept (an empty edge file, or endpoints that name no node, as when
	// edges hold row indices and Spec.Endpoints says ids).
	AllowSingleClass, AllowSingleGroup, AllowNoEdges bool
	// BatchBytes bounds one write batch; 0 means the store's hint
	// (storage.HintsOf: 960 KiB with Pebble, 2 MiB with Badger, which
	// refuses batches over a few MiB).
	BatchBytes int
	// SpillMemory bounds the memory that holds the spill (the node rows
	// parsed in the validation phase, read back in the write phase: about
	// 1 byte per binary feature value and 5 to 9 bytes per other value);
	// beyond it the spill goes to a temporary file in TempDir. 0 means the
	// store's hint (storage.HintsOf: 64 MiB with Pebble, always a file
	// with Badger, whose own tables already take a few hundred MiB); a
	// negative value means always a file.
	SpillMemory int
	// TempDir is where Load keeps a spill file; "" means os.TempDir(). The
	// file is removed before Load returns (on Unix it is unlinked as soon
	// as it is created, so not even a killed process leaves it behind).
	TempDir string
	// Progress, if set, is called from Load's goroutine now and then with
	// the stage and how far it got: "scan nodes" and "scan edges" count
	// the bytes of the stage's file (on-disk bytes) consumed so far and in
	// total; "write" counts the node keys (records, adjacency bitmaps and
	// id-map entries) committed so far and in total.
	Progress func(stage string, done, total int64)
	// AfterCommit, if set, is called after every committed batch of the
	// write phase with the number of batches committed so far (the
	// incomplete-load marker is batch 1). A test seam.
	AfterCommit func(batches int)
}

// EdgeReport counts what happened to the lines of the edge file.
type EdgeReport struct {
	// Lines is the number of non-blank lines read.
	Lines int `json:"lines"`
	// Kept is the number of distinct undirected edges stored.
	Kept int64 `json:"kept"`
	// Duplicates counts lines that repeated an edge already seen, in either
	// direction.
	Duplicates int `json:"duplicates"`
	// SelfLoops counts lines u u (dropped).
	SelfLoops int `json:"self_loops"`
	// UnknownEndpoints counts lines with an endpoint that is not a node of
	// the node file (skipped unless Strict).
	UnknownEndpoints int `json:"unknown_endpoints"`
}

// LoadReport is what Load did. It is also stored in the graph's metadata
// (see LastLoad).
type LoadReport struct {
	Source    string      `json:"source,omitempty"`
	NodesFile string      `json:"nodes_file"`
	EdgesFile string      `json:"edges_file"`
	Nodes     int         `json:"nodes"`
	Features  int         `json:"features"`
	Edges     EdgeReport  `json:"edges"`
	Groups    GroupCounts `json:"groups"`
	Labels    LabelCounts `json:"labels"`
	Splits    SplitCounts `json:"splits"`
	// SplitMethod describes the split: its method, parameters and seed.
	SplitMethod string `json:"split_method,omitempty"`
	Version     uint64 `json:"version"`
	Batches     int    `json:"batches"`
	Finished    string `json:"finished"`
}

// loadMarker is the value of the incomplete-load marker.
type loadMarker struct {
	Started string `json:"started"`
	Source  string `json:"source"`
}

func (o *LoadOptions) validate() error {
	var errs []error
	if o.Nodes == "" {
		errs = append(errs, fmt.Errorf("%w: no node file", ErrInvalid))
	}
	if o.Edges == "" {
		errs = append(errs, fmt.Errorf("%w: no edge file", ErrInvalid))
	}
	if err := o.Spec.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(o.Drop) > 0 && !o.Replace {
		errs = append(errs, fmt.Errorf("%w: Drop without Replace", ErrInvalid))
	}
	for _, b := range o.Drop {
		if p, ok := LookupPrefix(b); !ok || !p.DependsOnGraph {
			errs = append(errs, fmt.Errorf("%w: Drop names prefix '%c', which holds no data derived from the graph", ErrInvalid, b))
		}
	}
	if o.BatchBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: negative batch size", ErrInvalid))
	}
	switch o.Split.Mode {
	case SplitDIG:
		if _, err := o.Split.params(); err != nil {
			errs = append(errs, err)
		}
	case SplitFractions:
		f := o.Split.Fractions
		if !(f.Train >= 0 && f.Val >= 0 && f.Train+f.Val <= 1) {
			errs = append(errs, fmt.Errorf("%w: split fractions %+v: want ≥ 0 with sum ≤ 1", ErrInvalid, f))
		}
	case SplitNIFTY:
		if o.Split.LabelNumber <= 0 {
			errs = append(errs, fmt.Errorf("%w: NIFTY split needs a label number > 0, got %d", ErrInvalid, o.Split.LabelNumber))
		}
	case SplitNoSplit:
	default:
		errs = append(errs, fmt.Errorf("%w: unknown split mode %d", ErrInvalid, o.Split.Mode))
	}
	return errors.Join(errs...)
}

// Load reads a graph dump (node CSV + edge list) into store and returns what
// it did.
//
// Everything is validated before the first write, so that bad input (an
// error wrapping one of the dump.Err… kinds, or ErrUnknownEndpoint in Strict
// mode, each naming file:line) leaves the store exactly as it was: pass 1
// checks every node row, then the whole edge file is parsed and resolved.
// A dump that parses but is degenerate (no nodes; unless allowed, one label
// class, one sensitive group, no edge kept) fails here too, with
// ErrDegenerate naming the cause (see LoadOptions.AllowSingleClass).
// Only then does Load commit an incomplete-load marker, delete the old graph
// (with Replace), write the nodes and their adjacency in batches of at most
// BatchBytes, and finally commit the node sets, the split, the counts, the
// schema and a new version while clearing the marker, in one batch. If
// anything stops Load in the write phase (an error, a cancelled ctx, a
// crash), the marker stays, and Open reports ErrIncompleteLoad until a Load
// with Replace succeeds.
//
// Pass 1 over the node file (dump.AnalyzeSpill) writes the parsed rows to a
// spill (in memory up to SpillMemory, else a temporary file in TempDir),
// and the write phase reads them back from it: the CSV is parsed once, and
// what is written is exactly what was validated, even if the node file
// changes in between. The edge file is parsed on a second goroutine during
// pass 1. In the write phase a goroutine fills batches (node records, then
// adjacency bitmaps, then the id map, each in key order) while Load's
// goroutine commits them. Errors are still reported in the order of a
// sequential reading: node file, then edge file in line order. Load leaves
// no goroutine running when it returns.
//
// Memory: one map entry per node id (dump.Table), the edge list as parsed
// endpoints (16 bytes per line) and then as resolved pairs and the
// adjacency being built (O(edges) uint32s: about 16 bytes per undirected
// edge), 12 bytes per node for the id map's write order, the node bitmaps
// (O(nodes) bits), at most three batches and at most SpillMemory bytes of
// spill. Feature values are otherwise never held for more than a row.
func Load(ctx context.Context, store storage.Store, opts *LoadOptions) (*LoadReport, error) {
	if opts == nil {
		return nil, fmt.Errorf("%w: nil LoadOptions", ErrInvalid)
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	held, err := checkTarget(store, opts.Replace)
	if err != nil {
		return nil, err
	}
	if missing := notDropped(held, opts.Drop); len(missing) > 0 {
		return nil, dependentsError(missing)
	}
	l := &loader{ctx: ctx, store: store, opts: opts, report: &LoadReport{
		Source: opts.Source, NodesFile: filepath.Base(opts.Nodes), EdgesFile: filepath.Base(opts.Edges),
	}}
	hints := storage.HintsOf(store)
	l.batchBytes, l.batchOps = opts.BatchBytes, hints.BatchOps
	if l.batchBytes == 0 {
		l.batchBytes = hints.BatchBytes
	}
	defer l.removeSpill()
	// Validation phase: nothing is written. The edge file is parsed on a
	// second goroutine while the node file is; endpoints are resolved once
	// the node table exists.
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	edges := make(chan rawEdges, 1)
	go func() { edges <- readEdges(ectx, opts.Edges) }()
	if err := l.scanNodes(); err != nil {
		cancel()
		<-edges
		return nil, err
	}
	raw := <-edges
	if err := l.resolveEdges(&raw); err != nil {
		return nil, err
	}
	l.buildAdjacency()
	if err := l.checkShape(); err != nil {
		return nil, err
	}
	// Write phase.
	if err := l.write(); err != nil {
		return nil, err
	}
	return l.report, nil
}

type loader struct {
	ctx        context.Context
	store      storage.Store
	opts       *LoadOptions
	report     *LoadReport
	batchBytes int
	batchOps   int
	table      *dump.Table
	// spill holds the node rows parsed by pass 1 (dump.AnalyzeSpill) for
	// the write phase.
	spill *dump.SpillBuffer
	// pairs holds the resolved edges, two row indices per edge, until
	// buildAdjacency turns them into off/adj.
	pairs []uint32
	off   []int    // adjacency of row v is adj[off[v]:off[v+1]], ascending
	adj   []uint32 // both directions of every kept edge
	batch storage.Batch
	nb    int // batches committed
}

// LastLoad returns the report of the load that created the graph, or nil
// if the graph was built with Create.
func (g *Graph) LastLoad() (*LoadReport, error) {
	b, err := g.store.Get(keyLoad)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("index: read load report: %w", err)
	}
	var r LoadReport
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%w: load report: %w", ErrCorrupt, err)
	}
	return &r, nil
}
