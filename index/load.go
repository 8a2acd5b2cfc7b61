package index

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/index/split"
	"github.com/fasd-db/fasd/storage"
)

// ErrUnknownEndpoint is the Kind of the *dump.Error that Load returns in
// Strict mode for an edge whose endpoint is not a node of the node file.
var ErrUnknownEndpoint = errors.New("index: unknown edge endpoint")

// SplitMode selects how Load splits the labelled nodes.
type SplitMode uint8

const (
	// SplitDIG is the DIG protocol of docs/method.md §1 (default): CPython's
	// MT19937 shuffle seeded with SplitOptions.Seed, cut by Params.
	SplitDIG SplitMode = iota
	// SplitFractions is a plain seeded shuffle (math/rand/v2 PCG seeded
	// with SplitOptions.Seed) cut by Fractions.
	SplitFractions
	// SplitNoSplit stores no split.
	SplitNoSplit
	// SplitNIFTY is the per-class split of the NIFTY loaders (split.NIFTY):
	// each class shuffled by CPython's MT19937 seeded with SplitOptions.Seed,
	// at most LabelNumber/2 training nodes per class.
	SplitNIFTY
)

// SplitOptions configure the split Load stores.
type SplitOptions struct {
	Mode SplitMode
	// Params are the DIG cut points; the zero value means split.Pokec, or
	// the parameters named by Protocol.
	Params split.Params
	// Protocol names DIG parameters ("nba" or "pokec", see
	// split.ParamsFor); it is used when Params is zero.
	Protocol string
	// Seed seeds the shuffle; 0 means split.DefaultSeed (20). To seed with
	// 0 itself, set ZeroSeed.
	Seed     uint64
	ZeroSeed bool
	// Fractions are the train and validation fractions of SplitFractions.
	Fractions split.Fractions
	// LabelNumber is NIFTY's label_number for SplitNIFTY (> 0).
	LabelNumber int
}

// PresetSplit returns the split a dump preset records: DIG with the
// preset's cut points, or NIFTY with its label number, seeded with
// split.DefaultSeed.
func PresetSplit(p dump.Preset) SplitOptions {
	if p.Split == dump.SplitNIFTY {
		return SplitOptions{Mode: SplitNIFTY, LabelNumber: p.LabelNumber}
	}
	return SplitOptions{Mode: SplitDIG, Params: p.DIG}
}

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
	// versions keep growing. Keys of other owners are never touched by
	// index: while the store holds keys under a prefix that DependsOnGraph
	// (views 'V', training runs 'T') and Delete has no deleter for it,
	// Load fails with ErrDependents before writing anything.
	Replace bool
	// Delete are, with Replace, the owners' deleters of data that depends
	// on the graph, by prefix (query.DeleteViews for PrefixViews,
	// runs.DeleteAll for PrefixRuns). Load calls the deleter of every such
	// prefix that holds keys once the input is validated, before the old
	// graph is deleted, and fails with ErrDependents if keys remain.
	Delete map[byte]func(storage.Store) error
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

func (s *SplitOptions) params() (split.Params, error) {
	if s.Params != (split.Params{}) {
		return s.Params, s.Params.Validate()
	}
	if s.Protocol != "" {
		return split.ParamsFor(s.Protocol)
	}
	return split.Pokec, nil
}

// describe names the split with its parameters, for the load report.
func (s *SplitOptions) describe() string {
	switch s.Mode {
	case SplitDIG:
		p, _ := s.params()
		return fmt.Sprintf("dig: a %g, b %g, cap %d, seed %d", p.A, p.B, p.Cap, s.seed())
	case SplitNIFTY:
		return fmt.Sprintf("nifty: label number %d, seed %d", s.LabelNumber, s.seed())
	case SplitFractions:
		return fmt.Sprintf("fractions: train %g, val %g, seed %d", s.Fractions.Train, s.Fractions.Val, s.seed())
	}
	return "none"
}

func (s *SplitOptions) seed() uint64 {
	if s.Seed == 0 && !s.ZeroSeed {
		return split.DefaultSeed
	}
	return s.Seed
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
	if missing := withoutDeleter(held, opts.Delete); len(missing) > 0 {
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

// heldDependents returns the prefixes that depend on the graph and hold
// keys in store.
func heldDependents(store storage.Reader) ([]KeyPrefix, error) {
	var held []KeyPrefix
	for _, p := range KeyPrefixes {
		if !p.DependsOnGraph {
			continue
		}
		it, err := store.NewIter([]byte{p.Byte}, []byte{p.Byte + 1})
		if err != nil {
			return nil, fmt.Errorf("index: load: iterate: %w", err)
		}
		found := it.First()
		if err := errors.Join(it.Err(), it.Close()); err != nil {
			return nil, fmt.Errorf("index: load: iterate: %w", err)
		}
		if found {
			held = append(held, p)
		}
	}
	return held, nil
}

func withoutDeleter(held []KeyPrefix, del map[byte]func(storage.Store) error) []KeyPrefix {
	var out []KeyPrefix
	for _, p := range held {
		if del[p.Byte] == nil {
			out = append(out, p)
		}
	}
	return out
}

func dependentsError(held []KeyPrefix) error {
	names := make([]string, len(held))
	for i, p := range held {
		names[i] = fmt.Sprintf("%s ('%c', package %s)", p.What, p.Byte, p.Owner)
	}
	return fmt.Errorf("%w: %s; Replace deletes only the graph: their owners must delete them (fasd load --replace deletes the views, and the runs with --drop-runs)",
		ErrDependents, strings.Join(names, ", "))
}

// checkTarget refuses a store that holds a graph or an incomplete load,
// unless replace; with replace it returns the prefixes of data that
// depends on the graph and holds keys.
func checkTarget(store storage.Reader, replace bool) ([]KeyPrefix, error) {
	if replace {
		return heldDependents(store)
	}
	if err := checkLoading(store); err != nil {
		return nil, err
	}
	_, err := store.Get(keySchema)
	if err == nil {
		return nil, fmt.Errorf("%w (use Replace / --replace to overwrite it)", ErrGraphExists)
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("index: read schema: %w", err)
	}
	return nil, nil
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
	spill *spill
	// pairs holds the resolved edges, two row indices per edge, until
	// buildAdjacency turns them into off/adj.
	pairs []uint32
	off   []int    // adjacency of row v is adj[off[v]:off[v+1]], ascending
	adj   []uint32 // both directions of every kept edge
	batch storage.Batch
	nb    int // batches committed
}

// progressReader reports the progress of a dump.File while it is read.
type progressReader struct {
	f     *dump.File
	stage string
	fn    func(string, int64, int64)
	last  int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.f.Read(b)
	if off := p.f.Offset(); off-p.last >= 1<<20 || err == io.EOF {
		p.last = off
		p.fn(p.stage, off, p.f.Size())
	}
	return n, err
}

// scanNodes is pass 1 over the node file; the parsed rows go to a spill
// file that the write phase reads instead of parsing the CSV again.
func (l *loader) scanNodes() error {
	f, err := dump.Open(l.opts.Nodes)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if l.opts.Progress != nil {
		r = &progressReader{f: f, stage: "scan nodes", fn: l.opts.Progress}
	}
	budget := l.opts.SpillMemory
	if budget == 0 {
		budget = storage.HintsOf(l.store).SpillBytes
	}
	l.spill = &spill{dir: l.opts.TempDir, budget: max(budget, 0)}
	t, err := dump.AnalyzeSpill(l.ctx, r, f.Name(), l.opts.Spec, l.spill)
	if err != nil {
		return err
	}
	if t.Rows > int(^uint32(0)) {
		return fmt.Errorf("%w: %d nodes exceed the uint32 id space", ErrInvalid, t.Rows)
	}
	l.table = t
	return nil
}

// removeSpill releases the spill.
func (l *loader) removeSpill() {
	if l.spill != nil {
		l.spill.close()
		l.spill = nil
	}
}

// spillBlock is the size of the memory blocks of a spill.
const spillBlock = 1 << 20

// spill is an io.Writer that keeps what is written in memory, in blocks,
// up to budget bytes, and moves it to a temporary file in dir beyond that.
type spill struct {
	dir      string
	budget   int
	blocks   [][]byte
	size     int
	f        *os.File
	bw       *bufio.Writer
	unlinked bool // the file was removed from dir while open
}

func (s *spill) Write(p []byte) (int, error) {
	if s.f == nil && s.size+len(p) > s.budget {
		if err := s.toFile(); err != nil {
			return 0, err
		}
	}
	if s.f != nil {
		return s.bw.Write(p)
	}
	n := len(p)
	for len(p) > 0 {
		if len(s.blocks) == 0 || len(s.blocks[len(s.blocks)-1]) == spillBlock {
			s.blocks = append(s.blocks, make([]byte, 0, spillBlock))
		}
		last := &s.blocks[len(s.blocks)-1]
		k := copy((*last)[len(*last):spillBlock], p)
		*last = (*last)[:len(*last)+k]
		p = p[k:]
	}
	s.size += n
	return n, nil
}

// toFile moves the spill to a temporary file.
func (s *spill) toFile() error {
	f, err := os.CreateTemp(s.dir, "fasd-load-*.spill")
	if err != nil {
		return fmt.Errorf("index: load: create spill file: %w", err)
	}
	s.f = f
	// Unlink it at once where the system allows (the open descriptor keeps
	// it), so that even a killed load leaves nothing behind.
	s.unlinked = os.Remove(f.Name()) == nil
	s.bw = bufio.NewWriterSize(f, 1<<20)
	for _, b := range s.blocks {
		if _, err := s.bw.Write(b); err != nil {
			return fmt.Errorf("index: load: write spill file: %w", err)
		}
	}
	s.blocks = nil
	return nil
}

// reader returns a reader of everything written so far.
func (s *spill) reader() (io.Reader, error) {
	if s.f == nil {
		rs := make([]io.Reader, len(s.blocks))
		for i, b := range s.blocks {
			rs[i] = bytes.NewReader(b)
		}
		return bufio.NewReaderSize(io.MultiReader(rs...), 64<<10), nil
	}
	if err := s.bw.Flush(); err != nil {
		return nil, fmt.Errorf("index: load: write spill file: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("index: load: rewind spill file: %w", err)
	}
	return bufio.NewReaderSize(s.f, 1<<20), nil
}

// close releases the memory and closes and removes the file.
func (s *spill) close() {
	s.blocks = nil
	if s.f == nil {
		return
	}
	s.f.Close()
	if !s.unlinked {
		os.Remove(s.f.Name())
	}
	s.f = nil
}

// rawEdges is the edge file as parsed, before its endpoints are resolved.
type rawEdges struct {
	// ends holds the two endpoints of every edge line, as written.
	ends []int64
	// size is the size of the file on disk.
	size int64
	// err is what stopped reading: bad input after the last edge in ends,
	// a read error or a cancelled context.
	err error
}

// readEdges parses the edge file at path. It runs on its own goroutine and
// calls no callback.
func readEdges(ctx context.Context, path string) rawEdges {
	er, err := dump.OpenEdges(path)
	if err != nil {
		return rawEdges{err: err}
	}
	defer er.Close()
	_, size := er.Progress()
	// Each line takes at least 4 bytes ("1 2\n"); typical ids are longer.
	raw := rawEdges{ends: make([]int64, 0, min(size/8, 1<<24)), size: size}
	for er.Next() {
		if er.Edges()%65536 == 0 {
			if err := ctx.Err(); err != nil {
				raw.err = err
				return raw
			}
		}
		a, b := er.Edge()
		raw.ends = append(raw.ends, a, b)
	}
	raw.err = er.Err()
	return raw
}

// resolveEdges maps the endpoints of raw to rows and keeps the pairs that
// are edges, counting the lines, self-loops and unknown endpoints. A
// parse error of the edge file is returned after the edges before it were
// resolved, so errors come in file order.
func (l *loader) resolveEdges(raw *rawEdges) error {
	rep := &l.report.Edges
	l.pairs = make([]uint32, 0, len(raw.ends))
	for i := 0; i < len(raw.ends); i += 2 {
		rep.Lines++
		if rep.Lines%65536 == 0 {
			if err := l.ctx.Err(); err != nil {
				return err
			}
		}
		a, b := raw.ends[i], raw.ends[i+1]
		ra, okA := l.table.Resolve(a)
		rb, okB := l.table.Resolve(b)
		if !okA || !okB {
			if l.opts.Strict {
				field, val := 0, a
				if okA {
					field, val = 1, b
				}
				return &dump.Error{File: filepath.Base(l.opts.Edges), Line: edgeLine(l.opts.Edges, rep.Lines), Index: field, Kind: ErrUnknownEndpoint,
					Detail: fmt.Sprintf("%d is not a node of %s (by %s)", val, l.table.Name, l.table.Endpoints())}
			}
			rep.UnknownEndpoints++
			continue
		}
		if ra == rb {
			rep.SelfLoops++
			continue
		}
		l.pairs = append(l.pairs, uint32(ra), uint32(rb))
	}
	raw.ends = nil
	if raw.err != nil {
		return raw.err
	}
	if l.opts.Progress != nil {
		l.opts.Progress("scan edges", raw.size, raw.size)
	}
	return nil
}

// edgeLine returns the line of the n-th edge (1-based) of the edge file,
// or 0 if it cannot be read again; it serves error messages only.
func edgeLine(path string, n int) int {
	er, err := dump.OpenEdges(path)
	if err != nil {
		return 0
	}
	defer er.Close()
	for er.Next() {
		if er.Edges() == n {
			return er.Line()
		}
	}
	return 0
}

// checkShape refuses a graph that parsed but cannot be meant: no nodes, and
// unless allowed one label class, one sensitive group or no edge. It runs
// before the write phase, so a refused load never touches the store.
func (l *loader) checkShape() error {
	t, o := l.table, l.opts
	spec := t.Spec()
	edges := filepath.Base(o.Edges)
	if t.Rows == 0 {
		return fmt.Errorf("%w: %s has a header but no data rows: a graph needs nodes", ErrDegenerate, t.Name)
	}
	var errs []error
	if !o.AllowSingleClass && (t.Labels[0] == 0 || t.Labels[1] == 0) {
		var cause string
		if t.Labels[0]+t.Labels[1] == 0 {
			cause = fmt.Sprintf("no node of %s is labelled (label column %q: %d unlabelled)", t.Name, spec.Label.Column, t.NumUnlabelled)
		} else {
			y := 0
			if t.Labels[1] > 0 {
				y = 1
			}
			cause = fmt.Sprintf("every labelled node of %s has class %d (%d nodes, %d unlabelled; label column %q)",
				t.Name, y, t.Labels[y], t.NumUnlabelled, spec.Label.Column)
			if t.NumUnlabelled > 0 && spec.Label.Named == nil {
				cause += "; if the unlabelled value is a class (German credit's -1), map it with a label value map (--label-values 1=1,-1=0)"
			}
		}
		errs = append(errs, fmt.Errorf("%w: %s: a classifier needs both classes (AllowSingleClass / --allow-single-class loads it anyway)", ErrDegenerate, cause))
	}
	if !o.AllowSingleGroup && (t.Groups[0] == 0 || t.Groups[1] == 0) {
		var cause string
		if t.Groups[0]+t.Groups[1] == 0 {
			cause = fmt.Sprintf("no node of %s has a known sensitive value (sensitive column %q: %d unknown)", t.Name, spec.Sensitive.Column, t.UnknownSensitive)
		} else {
			g := 0
			if t.Groups[1] > 0 {
				g = 1
			}
			cause = fmt.Sprintf("every node of %s with a known sensitive value is in group %d (%d nodes, %d unknown; sensitive column %q)",
				t.Name, g, t.Groups[g], t.UnknownSensitive, spec.Sensitive.Column)
			if spec.Sensitive.Named == nil {
				cause += fmt.Sprintf("; the numeric mapping puts values > %g in group 1 (--sens-threshold, --sens-values)", spec.Sensitive.Threshold)
			}
		}
		errs = append(errs, fmt.Errorf("%w: %s: fairness needs both groups (AllowSingleGroup / --allow-single-group loads it anyway)", ErrDegenerate, cause))
	}
	if e := l.report.Edges; !o.AllowNoEdges && e.Kept == 0 {
		var cause string
		switch {
		case e.Lines == 0:
			cause = fmt.Sprintf("%s holds no edge line", edges)
		case e.UnknownEndpoints == e.Lines:
			cause = fmt.Sprintf("all %d edge lines of %s name an endpoint that is not a node of %s, reading endpoints as %s",
				e.Lines, edges, t.Name, endpointsWord(t.Endpoints()))
			if t.Endpoints() == dump.EndpointsRow && spec.IDColumn != "" {
				cause += fmt.Sprintf("; if the edges hold values of the id column %q, use --edge-ids id", spec.IDColumn)
			} else if t.Endpoints() == dump.EndpointsID {
				cause += "; if the edges hold 0-based row indices, use --edge-ids row"
			}
		case e.SelfLoops == e.Lines:
			cause = fmt.Sprintf("all %d edge lines of %s are self-loops", e.Lines, edges)
		default:
			cause = fmt.Sprintf("no edge of %s is kept (%d lines: %d self-loops, %d with an unknown endpoint)", edges, e.Lines, e.SelfLoops, e.UnknownEndpoints)
		}
		errs = append(errs, fmt.Errorf("%w: %s (AllowNoEdges / --allow-no-edges loads it anyway)", ErrDegenerate, cause))
	}
	return errors.Join(errs...)
}

func endpointsWord(e dump.Endpoints) string {
	if e == dump.EndpointsRow {
		return "0-based row indices (--edge-ids row)"
	}
	return "node ids (--edge-ids id)"
}

// buildAdjacency turns the edge pairs into sorted, duplicate-free,
// symmetric neighbour lists (CSR).
func (l *loader) buildAdjacency() {
	n := l.table.Rows
	off := make([]int, n+1)
	for _, v := range l.pairs {
		off[v+1]++
	}
	for v := range n {
		off[v+1] += off[v]
	}
	adj := make([]uint32, off[n])
	fill := slices.Clone(off[:n])
	for i := 0; i < len(l.pairs); i += 2 {
		a, b := l.pairs[i], l.pairs[i+1]
		adj[fill[a]] = b
		fill[a]++
		adj[fill[b]] = a
		fill[b]++
	}
	l.pairs = nil
	fill = nil
	out := 0
	for v := range n {
		list := adj[off[v]:off[v+1]]
		slices.Sort(list)
		list = slices.Compact(list)
		off[v] = out
		out += copy(adj[out:], list)
	}
	off[n] = out
	l.off, l.adj = off, adj[:out]
	rep := &l.report.Edges
	rep.Kept = int64(out / 2)
	rep.Duplicates = rep.Lines - rep.SelfLoops - rep.UnknownEndpoints - int(rep.Kept)
}

func (l *loader) set(k, v []byte) error {
	if err := l.batch.Set(k, v); err != nil {
		return fmt.Errorf("index: load: write: %w", err)
	}
	return nil
}

func (l *loader) del(k []byte) error {
	if err := l.batch.Delete(k); err != nil {
		return fmt.Errorf("index: load: delete: %w", err)
	}
	return nil
}

// flush commits the current batch if it is over the bounds (or if force)
// and starts a new one.
func (l *loader) flush(force bool) error {
	if !force && l.batch.Len() < l.batchBytes && l.batch.Count() < l.batchOps {
		return nil
	}
	if err := l.commit(l.batch); err != nil {
		return err
	}
	l.batch = l.store.NewBatch()
	return nil
}

// commit commits b (unless ctx is done) and counts it.
func (l *loader) commit(b storage.Batch) error {
	if err := l.ctx.Err(); err != nil {
		return err
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("index: load: commit batch %d: %w", l.nb+1, err)
	}
	l.nb++
	if l.opts.AfterCommit != nil {
		l.opts.AfterCommit(l.nb)
	}
	return nil
}

func (l *loader) write() (err error) {
	counter, err := readVersionCounter(l.store)
	if err != nil {
		return err
	}
	if st, err := readState(l.store); err == nil {
		counter = max(counter, st.Version)
	}
	if l.opts.Replace {
		// The owners delete what depends on the old graph first.
		held, err := heldDependents(l.store)
		if err != nil {
			return err
		}
		for _, p := range held {
			if err := l.opts.Delete[p.Byte](l.store); err != nil {
				return fmt.Errorf("index: load: delete %s: %w", p.What, err)
			}
		}
		if held, err = heldDependents(l.store); err != nil {
			return err
		} else if len(held) > 0 {
			return dependentsError(held)
		}
	}
	l.batch = l.store.NewBatch()
	defer func() { l.batch.Close() }()
	marker, err := json.Marshal(loadMarker{Started: time.Now().UTC().Format(time.RFC3339), Source: l.describe()})
	if err != nil {
		return err
	}
	if err := l.set(keyLoading, marker); err != nil {
		return err
	}
	if err := l.flush(true); err != nil {
		return err
	}
	if l.opts.Replace {
		if err := l.deleteOld(); err != nil {
			return err
		}
	}
	sets, labelled, err := l.writeNodes()
	if err != nil {
		return err
	}
	return l.finish(counter, sets, labelled)
}

func (l *loader) describe() string {
	if l.opts.Source != "" {
		return fmt.Sprintf("%s (%s, %s)", l.opts.Source, filepath.Base(l.opts.Nodes), filepath.Base(l.opts.Edges))
	}
	return fmt.Sprintf("%s, %s", filepath.Base(l.opts.Nodes), filepath.Base(l.opts.Edges))
}

// deleteOld deletes every key under index's own prefixes (KeyPrefixes)
// except the marker and the version counter.
func (l *loader) deleteOld() error {
	snap, err := l.store.NewSnapshot()
	if err != nil {
		return fmt.Errorf("index: load: snapshot: %w", err)
	}
	defer snap.Close()
	for _, p := range KeyPrefixes {
		if p.Owner != "index" {
			continue
		}
		if err := l.deleteRange(snap, p.Byte); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) deleteRange(snap storage.Snapshot, prefix byte) error {
	it, err := snap.NewIter([]byte{prefix}, []byte{prefix + 1})
	if err != nil {
		return fmt.Errorf("index: load: iterate: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if string(k) == string(keyLoading) || string(k) == string(keyVersion) {
			continue
		}
		if err := l.del(k); err != nil {
			return err
		}
		if err := l.flush(false); err != nil {
			return err
		}
	}
	return it.Err()
}

// nodeSets are the node bitmaps the loader builds in memory.
type nodeSets struct {
	sens  [3]*roaring.Bitmap // by value + 1
	label [3]*roaring.Bitmap
}

// full is a batch ready to commit; keys is how many keys it sets.
type full struct {
	b    storage.Batch
	keys int
}

// writeNodes is pass 2: it reads the node rows back from the spill and
// writes each node's record, id-map entry and adjacency bitmap. A producer
// goroutine fills batches while this goroutine commits the previous one,
// so encoding and the store's work overlap; at most three batches exist at
// a time. AfterCommit and Progress are called from this goroutine.
func (l *loader) writeNodes() (*nodeSets, []uint32, error) {
	sr, err := l.spill.reader()
	if err != nil {
		return nil, nil, err
	}
	rr := l.table.NewSpillReader(sr)
	if l.batch.Count() > 0 { // deletions left over from deleteOld
		if err := l.commit(l.batch); err != nil {
			return nil, nil, err
		}
	}
	l.batch.Close()
	l.batch = nil
	ctx, cancel := context.WithCancel(l.ctx)
	defer cancel()
	ch := make(chan full, 1)
	sets := &nodeSets{}
	var labelled []uint32
	var perr error
	go func() {
		defer close(ch)
		perr = l.fillBatches(ctx, rr, sets, &labelled, ch)
	}()
	// Keys to write: a record and an id-map entry per node, and an adjacency
	// bitmap per node with neighbours.
	total := 2 * l.table.Rows
	for v := range l.table.Rows {
		if l.off[v+1] > l.off[v] {
			total++
		}
	}
	done := 0
	for f := range ch {
		if err != nil {
			f.b.Close() // draining after a failure
			continue
		}
		err = l.commit(f.b)
		f.b.Close()
		if err != nil {
			cancel()
			continue
		}
		done += f.keys
		if l.opts.Progress != nil {
			l.opts.Progress("write", int64(done), int64(total))
		}
	}
	l.batch = l.store.NewBatch()
	if err != nil {
		return nil, nil, err
	}
	if perr != nil {
		return nil, nil, perr
	}
	return sets, labelled, nil
}

// fillBatches fills batches and sends them on ch: first the node records
// (read from rr), then the adjacency bitmaps, then the external-id map, each
// in ascending key order so that the store appends to a sorted run instead
// of inserting at random places. It runs on its own goroutine; sets and
// labelled are handed over when ch is closed.
func (l *loader) fillBatches(ctx context.Context, rr *dump.RowReader, sets *nodeSets, labelled *[]uint32, ch chan<- full) error {
	for i := range 3 {
		sets.sens[i], sets.label[i] = roaring.New(), roaring.New()
	}
	b := l.store.NewBatch()
	defer func() { b.Close() }()
	keys := 0
	send := func() error {
		select {
		case ch <- full{b, keys}:
			b, keys = l.store.NewBatch(), 0
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	set := func(k, v []byte) error {
		if err := b.Set(k, v); err != nil {
			return fmt.Errorf("index: load: write: %w", err)
		}
		keys++
		if b.Len() >= l.batchBytes || b.Count() >= l.batchOps {
			return send()
		}
		return nil
	}
	// Node records, in row order.
	n := l.table.Rows
	ext := make([]int64, n)
	var rec []byte
	node := Node{}
	for rr.Next() {
		row := rr.Row()
		v := uint32(row.Index)
		node.ExternalID, node.Sensitive, node.Label, node.Features = row.ID, row.Sensitive, row.Label, row.Features
		ext[v] = row.ID
		sets.sens[row.Sensitive+1].Add(v)
		sets.label[row.Label+1].Add(v)
		if row.Label >= 0 {
			*labelled = append(*labelled, v)
		}
		rec = appendNodeRecord(rec[:0], &node)
		if err := set(nodeKey(v), rec); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil {
		return err
	}
	// Adjacency, in node order.
	bm := roaring.New()
	for v := range uint32(n) {
		list := l.adj[l.off[v]:l.off[v+1]]
		if len(list) == 0 {
			continue
		}
		bm.Clear()
		bm.AddMany(list)
		enc, err := encodeBitmap(bm)
		if err != nil {
			return fmt.Errorf("index: load: encode adjacency: %w", err)
		}
		if err := set(adjKey(v), enc); err != nil {
			return err
		}
	}
	// External ids, in the order of their keys (by value).
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return cmp.Compare(ext[a], ext[b]) })
	var val [4]byte
	for _, v := range order {
		binary.BigEndian.PutUint32(val[:], v)
		if err := set(extKey(ext[v]), val[:]); err != nil {
			return err
		}
	}
	if b.Count() > 0 {
		return send()
	}
	return nil
}

func (l *loader) computeSplit(sets *nodeSets, labelled []uint32) (split.Split, error) {
	known := func(v uint32) bool { return !sets.sens[0].Contains(v) }
	so := &l.opts.Split
	switch so.Mode {
	case SplitDIG:
		p, err := so.params()
		if err != nil {
			return split.Split{}, err
		}
		return split.DIG(labelled, known, p, so.seed())
	case SplitFractions:
		return split.Random(labelled, known, so.Fractions, rand.New(rand.NewPCG(so.seed(), 0)))
	case SplitNIFTY:
		var byClass [2][]uint32
		for _, v := range labelled {
			y := 0
			if sets.label[2].Contains(v) {
				y = 1
			}
			byClass[y] = append(byClass[y], v)
		}
		return split.NIFTY(byClass[0], byClass[1], known, so.LabelNumber, so.seed())
	}
	return split.Split{}, nil
}

// finish writes the node sets, the split, the schema, the counts and the
// report, and clears the marker, in the final batch.
func (l *loader) finish(counter uint64, sets *nodeSets, labelled []uint32) error {
	sp, err := l.computeSplit(sets, labelled)
	if err != nil {
		return fmt.Errorf("index: load: split: %w", err)
	}
	if err := l.flush(true); err != nil {
		return err
	}
	put := func(k []byte, bm *roaring.Bitmap) error {
		enc, err := encodeBitmap(bm)
		if err != nil {
			return fmt.Errorf("index: load: encode node set: %w", err)
		}
		return l.set(k, enc)
	}
	for i := range 3 {
		if err := put(sensKey(int8(i-1)), sets.sens[i]); err != nil {
			return err
		}
		if err := put(labelKey(int8(i-1)), sets.label[i]); err != nil {
			return err
		}
	}
	if err := put(labelledKey(), roaring.BitmapOf(labelled...)); err != nil {
		return err
	}
	parts := [][]uint32{sp.Train, sp.Val, sp.Test}
	for i, s := range Splits {
		if err := put(splitKey(s), roaring.BitmapOf(parts[i]...)); err != nil {
			return err
		}
	}
	schema := Schema{Format: FormatVersion, Features: append([]string{}, l.table.FeatureNames...)}
	sb, err := json.Marshal(&schema)
	if err != nil {
		return err
	}
	st := state{Version: counter + 1, Nodes: uint32(l.table.Rows), Edges: uint64(l.report.Edges.Kept)}
	rep := l.report
	rep.Nodes, rep.Features = l.table.Rows, l.table.Features()
	rep.Groups = GroupCounts{G0: l.table.Groups[0], G1: l.table.Groups[1], Unknown: l.table.UnknownSensitive}
	rep.Labels = LabelCounts{Y0: l.table.Labels[0], Y1: l.table.Labels[1], Unlabelled: l.table.NumUnlabelled}
	rep.Splits = SplitCounts{Train: len(sp.Train), Val: len(sp.Val), Test: len(sp.Test)}
	rep.SplitMethod = l.opts.Split.describe()
	rep.Version = st.Version
	rep.Batches = l.nb + 1
	rep.Finished = time.Now().UTC().Format(time.RFC3339)
	rb, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	scb, err := json.Marshal(&Scaling{Scaled: l.table.Spec().Scale, Min: l.table.Min, Max: l.table.Max})
	if err != nil {
		return fmt.Errorf("index: load: encode scaling: %w", err)
	}
	for _, kv := range [][2][]byte{{keySchema, sb}, {keyState, st.encode()}, {keyVersion, encodeU64(st.Version)}, {keyLoad, rb}, {keyScaling, scb}} {
		if err := l.set(kv[0], kv[1]); err != nil {
			return err
		}
	}
	if err := l.del(keyLoading); err != nil {
		return err
	}
	return l.flush(true)
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
