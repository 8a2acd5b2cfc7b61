// Package index stores an attributed, undirected graph in a storage.Store
// with roaring bitmaps, and loads graph dumps into it.
//
// Conventions: nodes are dense internal uint32 ids 0..n−1 (the row order of
// the node file); every slice or bitmap a read returns belongs to the
// caller; every write is one atomic storage batch.
//
// # Concepts
//
// A Graph (Open, Create) is the graph of one store. Reads go through a View
// (Graph.View), a consistent read-only view at one graph version backed by a
// storage snapshot: Neighbors / NeighborBitmap, Degree, HasEdge, Node,
// Features, Sensitive, Label, ExternalID ↔ InternalID, the node sets
// (Group, LabelSet, Labelled, SplitSet), SampleNeighbors, the BFS helpers
// (Layers, Ball, Expand, HopDistances), Stats and Check. A View implements
// the fasd.NeighborSampler and fasd.NeighborLister method sets.
//
// Writes go through Graph.Update: the function given to it changes a Tx
// (AddEdge, RemoveEdge, AddNode, DeleteNode, SetFeatures, SetSensitive,
// SetLabel, SetSplit) and Update commits everything as one batch together with all
// bitmaps that depend on it, the counts and a new graph version, and returns
// a Change listing the nodes whose adjacency or attributes changed.
//
// Load reads a node CSV and an edge list (package dump) into an empty store,
// or over an existing graph with Replace, and stores the train/val/test
// split (package split).
//
// # Key layout
//
// Every key starts with one ASCII byte that names its family (never 0x00,
// which package storage reserves). Integers in keys are big-endian, so
// keys of one family sort by id. KeyPrefixes is the registry of every
// top-level prefix of a store with its owning package, index's own and
// those of the packages above it (query's views 'V', runs' 'T'); a test
// checks that no two owners share a byte.
//
//	key                                  value
//	───────────────────────────────────  ──────────────────────────────────────────
//	"M" "schema"                         JSON {format, features:[names]}  (fixed)
//	"M" "state"                          version u64 │ nodes u32 │ edges u64
//	"M" "version"                        highest version ever used, u64 (kept
//	                                     across Replace so versions never repeat)
//	"M" "loading"                        JSON {started, source}: incomplete-load
//	                                     marker, present only during a load
//	"M" "load"                           JSON LoadReport of the load that made
//	                                     the graph
//	"M" "scaling"                        JSON Scaling {scaled, min:[], max:[]}:
//	                                     the per-column scaling of the load
//	"N" id:u32                           ext:i64 │ sens:i8 │ label:i8 │
//	                                     dim × f32 (little-endian)
//	"X" ext:u64 (= i64 with sign bit     id:u32
//	    flipped, so keys sort by value)
//	"A" id:u32                           roaring bitmap of the neighbours of id
//	                                     (absent when the node has none)
//	"G" "s" sens:i8                      roaring bitmap of the nodes with that
//	                                     sensitive value (0, 1, 0xff = unknown)
//	"G" "y" label:i8                     nodes with that label (0, 1, 0xff =
//	                                     unlabelled)
//	"G" "L"                              nodes with label 0 or 1
//	"G" "p" split:u8                     nodes of the split part (1 train,
//	                                     2 val, 3 test)
//	"G" "d"                              deleted nodes (tombstones)
//
// Bitmaps are the portable roaring serialisation, run-optimised.
//
// # Invariants
//
// Every committed state satisfies (View.Check verifies all of them):
// adjacency is symmetric (w ∈ A(v) ⇔ v ∈ A(w)), has no self-loops and no id
// ≥ n; "M" "state" holds the number of node records and half the degree sum;
// there is exactly one "N" record per id in 0..n−1 and the "X" map is the
// inverse of the live (not deleted) ones; each "G" bitmap equals the set
// the live node records imply; a deleted node has no edges, a tombstone
// record (Unknown, Unlabelled, zero features) and is in no other set; the
// split parts are disjoint. The version grows with every committed update and
// every load and is never reused in a store, so (store, version) names one
// graph state: the query engine may key cached views on it.
//
// # Loading
//
// Load validates everything before it writes anything: pass 1 over the node
// file checks every row and computes the scaling ranges, and the whole edge
// file is parsed and its endpoints resolved. Bad input therefore leaves the
// store exactly as it was, and the error names file:line (and column where
// it applies). Pass 1 also writes every parsed row to a compact binary
// spill (in memory up to LoadOptions.SpillMemory, else an already unlinked
// temporary file), and the edge file is parsed concurrently. Then Load
// drops what depends on the old graph (Replace with LoadOptions.Drop:
// views, runs, each one prefix delete through the key-space registry;
// for such data that exists and Drop does not name, Load refuses up
// front with ErrDependents), commits the "M" "loading"
// marker, deletes the old graph (every key under index's own prefixes),
// reads the spill back and writes node records, adjacency and the id map
// in key order, in bounded batches (LoadOptions.BatchBytes, by default the
// store's hint, storage.HintsOf), and
// commits the node sets, split, schema, state and report while deleting the
// marker in its final batch. The store receives exactly what was validated,
// even if the node file changes during the load. A load stopped in the write
// phase (error, cancelled context, crash, kill) leaves the marker: Open then
// fails with ErrIncompleteLoad and a Load with Replace recovers.
//
// A dump that parses but is no graph to learn fairly on is refused in the
// validation phase too, with ErrDegenerate and its cause: a node file
// without data rows always; unless LoadOptions allows it, labelled nodes of
// one class, known sensitive values of one group, or no edge kept (an empty
// edge file, or endpoints that name no node under the Endpoints mode).
// Replace therefore never swaps a trained graph for nothing by accident.
//
// The split is DIG, NIFTY (per class), plain fractions or none
// (SplitOptions); PresetSplit gives a dump preset's.
//
// Memory of Load is bounded apart from the adjacency being built: one map
// entry per node id, the edge list as resolved pairs and then as sorted
// lists (O(edges) uint32s, about 16 bytes per undirected edge), O(nodes)
// bits of node sets, the in-memory part of the spill and one batch.
//
// # Scaling and validated updates
//
// Load records how it mapped the dump's feature values to stored ones
// (Graph.Scaling: scaled to [-1, 1] or not, and each column's min and max
// in the dump). Scaling.Scale maps a new value of the dump's units the same
// way, bit for bit for values inside the loaded range and linearly beyond
// it, and refuses values that are not finite (ErrInvalid) or lie more than
// RangeSlack range widths beyond the loaded min or max (ErrOutOfRange; a
// column constant in the dump accepts only its constant), unless asked to
// clip them to that window. Tx.AddNode and Tx.SetFeatures take stored
// values and refuse, with ErrOutOfRange, any that Scale could not have
// produced, so no write path can store a value that would overflow the
// models. A graph made by Create records no scaling (features are stored as
// given, only checked to be finite); a graph loaded by an older build has
// none either (Graph.Scaling: ErrNoScaling; stored values are then only
// checked to be finite, and reloading with Replace records it).
//
// # Deleting nodes
//
// Tx.DeleteNode removes a node's edges, takes it out of the id map and of
// every node set, and turns its record into a tombstone listed in "G" "d"
// (View.Deleted). Internal ids stay dense and are never reused: the
// tombstone is an isolated, unlabelled node of unknown group with zero
// features, so that code iterating over 0..n−1 (training) keeps working
// and no sampling reaches it. Its external id is free again: a new node
// may take it (with a new internal id). Using a deleted id in an update is
// an error wrapping ErrDeleted.
//
// # Sampling
//
// View.SampleNeighbors draws min(k, deg) distinct neighbours uniformly
// without replacement, in draw order, with exactly the algorithm of
// fasd.DrawPositions (a partial Fisher–Yates shuffle over positions of the
// ascending neighbour list, one rng.IntN call per drawn neighbour), using a
// roaring Select for position → id. For the same generator state it returns
// the same neighbours as fasd.CSRGraph over the same graph.
//
// # Caveats
//
// Only one Graph value may update a store at a time (updates are serialised
// inside a Graph, not across processes). An update must fit in one atomic
// batch (a few MiB with Badger). A deleted node's internal id stays taken
// (its tombstone costs one small record). A View pins a storage snapshot: close it.
// Reads do not cache: each call fetches the record from the snapshot (the
// engines' block caches make repeated reads cheap).
package index
