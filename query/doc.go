// Package query serves fair node predictions from materialized views kept
// in the graph's own key-value store, and keeps them up to date under graph
// updates without retraining.
//
// Conventions: nodes are the internal uint32 ids of package index (the
// *External calls take external ids); probabilities are [P(y=0), P(y=1)];
// every view write is one atomic storage batch.
//
// The engine gets its models through the small interface of package
// query/model (Options.Model, or Options.LoadModel reading them from the
// store: runs.LoadLatest serves what fasd train persisted). Package
// httpapi puts the engine behind a JSON HTTP API; this package imports no
// networking. Stores are opened through storage.Open, so a program that
// embeds the engine links a storage engine itself, e.g.
// import _ "github.com/fasd-db/fasd/storage/pebble".
//
// # Concepts
//
// The paper's inference (docs/method.md §10) averages a node's class
// probabilities over every subgraph of the set that contains it; the set
// has one subgraph per root, the labelled train/val/test nodes. The Engine
// (Open) materializes that computation:
//
//   - per root r, a record: the recipe (r, the run seed, the model version,
//     the graph version it was sampled at), the members and the expanded
//     nodes of its sample, and the members' class probabilities of every
//     variant of the model (model.Info.Variants: the served one, the fair
//     classifier on the debiased subgraph, first; then for example the
//     w/o-Diffusion baseline or other debiasing settings);
//   - per node u, its view: per variant, the probabilities averaged over
//     the subgraphs containing u; their number, the model and the graph
//     version. Predict serves the first variant as Prediction.Probs and
//     the others by name in Prediction.Variants.
//   - roaring inverted indexes u → roots whose subgraph contains u, and
//     u → roots that expanded u (whose sampling read u's neighbour list).
//
// Roots are the train, val and test nodes plus every labelled node with a
// known sensitive value (on a graph loaded with the DIG split the two
// coincide; nodes labelled later become roots).
//
// Root r's subgraph is sampled with fasd.RootSeed(seed, PurposeSample, r)
// and debiased with fasd.RootSeed(seed, PurposeDebias, r): it depends only
// on (run seed, r), the adjacency lists it read and its members' data,
// never on the graph version or on scheduling. So recomputing only the
// subgraphs an update can change gives the same records as recomputing all
// of them, and a node's view, recomputed from the stored contributions in
// ascending root order (fasd.AverageNode, float64), is bit-identical to a
// rebuild.
//
// The debiased subgraphs themselves are not stored: they are only needed
// to compute the contributions, the recipe regenerates them exactly, and
// they would cost about 4·N·(D+N) bytes each (31 nodes × 270 features on
// Pokec: ≈37 KB, ≈1 GB for its ≈27k roots) against ≈0.6 KB for a record.
// See BENCHMARKS.md (Query engine) for measured sizes. Engine.Subgraph
// returns a root's debiased subgraph regenerated from its recipe (the one
// its stored contributions were computed from: tests classify it again and
// compare) and keeps recent ones in a least-recently-used in-memory cache
// bounded by Options.SubgraphCacheBytes (64 MiB by default, ≈1,800 Pokec
// subgraphs), keyed by root and the graph version that determined the
// subgraph, so an update that dirties a root bypasses its cached entry.
//
// # Reusing training's work
//
// fasd train has debiased the subgraph of every training root already,
// with the same per-root seeds, so debiasing them again to materialize
// would repeat the most expensive step. A model may keep such work in the
// store (model.Reuser: package runs keeps, per training root, f's
// probabilities on the debiased subgraph, its "debias memo"). Materialize
// and Refresh read the stored values of each chunk's roots in one
// request, and the scorer (model.ReusingScorer) classifies a root with its
// value instead of debiasing when the value is provably what debiasing
// would give: written by models with the same fingerprint, for the same
// root and the same clean subgraph (features and adjacency as the engine
// samples and builds it now). Roots training did not see (nodes labelled
// since, labelled nodes outside the split), subgraphs an update changed
// and values of other models are computed as before. Either way the
// record is bit for bit the one computed from scratch, so the views, their
// crash consistency and "incremental equals rebuild" do not change.
// Options.NoReuse computes everything; RefreshReport.Reused and
// Counters.SubgraphsReused count what was reused.
//
// # Updates, dirty marks, refresh
//
// Engine.Update applies a graph update (index.Graph.Update, one atomic
// batch, a new graph version) and then marks roots dirty: those that
// expanded a node whose neighbour list changed (Algorithm 3 reads only the
// lists of at most d expanded nodes, a sharper rule than "contains"), those
// containing a node whose features or attributes changed, and nodes that
// became or stopped being roots. Dirty roots are re-sampled at once (no
// model runs) so that the stale set, the old and new members of every
// dirty subgraph, is exact. Refresh recomputes the dirty subgraphs in
// chunks, each committed with its inverted-index edits, then recomputes the
// view of every affected node. Interrupted, Refresh and Materialize resume
// where they stopped.
//
// An interruption (a cancelled context, a failed commit, a killed process)
// never makes a read wrong: committed chunks keep their subgraphs, the
// nodes whose view still lacks them stay in the affected set and count as
// stale (Open adds the affected set to the stale set), and the cold path
// recomputes the view of an affected node even when none of its subgraphs
// is still dirty or missing. So before the resume every prediction is
// exact or flagged stale, and Audit counts a view stale exactly when All
// flags it (every view while the views are incomplete).
//
// # Queries
//
// Predict reads one key (the node's view) when the views are complete and
// the node is not stale. Otherwise it takes the cold path under the writer
// lock: it recomputes the dirty (or, before Materialize, never computed)
// subgraphs whose sample contains the node, writes them back and
// recomputes the node's view, which is then exact (SourceCold). A node in
// no subgraph gets an approximation from its own subgraph, marked
// SourceApprox and not stored. Before Materialize the cold path considers
// the roots within d hops of the node, which on dense graphs means
// sampling many subgraphs.
//
// # Writes
//
// Update applies a function to an index.Tx; ApplyExternal applies a typed
// ExternalUpdate (deleted nodes, new nodes with their edges, node edits,
// added and removed edges, by external id) after validating it
// (ExternalUpdate.Validate: field-named errors wrapping ErrInvalid),
// resolving ids inside the update under the writer lock. Features of new
// and edited nodes are in the dump's units and are scaled with the scaling
// recorded at load time (index.Scaling): a value that is not finite or lies
// more than index.RangeSlack ranges beyond the loaded min or max fails the
// whole update, naming the node and the column (errors wrapping ErrInvalid
// and index.ErrOutOfRange), unless ExternalUpdate.Clip clips it;
// ExternalUpdate.StoredUnits takes stored values instead. Deletions
// (index.Tx.DeleteNode) and edits dirty subgraphs like any other change
// (see Update), a deleted node's external id leaves the engine's id cache,
// and Predict refuses a deleted node with ErrUnknownNode. DecodeUpdate
// reads the JSON update document that fasd update's files and the HTTP
// node endpoints take (DecodeNodes, DecodeNodeEdit: parts of it).
//
// # Concurrency
//
// Reads take no lock. Each view is one key, so a reader sees a node's view
// either before or after a refresh, never a mix; the cold path recomputes
// only the queried node's view, leaving other affected nodes on their old
// views (marked stale) until a full refresh, so no view ever mixes old and
// new subgraphs. Writers are serialised by one mutex.
//
// # Distributed work
//
// Parts of a materialize or refresh can be computed by other workers
// (goroutines, or processes on a shared server store). A worker claims a
// part by a lease kept in the store itself (ClaimLease): a key written by
// a guarded commit (storage.CommitIf) that expects the value it read, so
// two workers never both win a part, and that raises a generation number
// on every claim. The holder writes for the part only through
// CommitUnderLease, guarded by its exact lease value: once its lease
// expired and another worker claimed the part, the generation differs and
// its write is refused (ErrLeaseLost). While it computes the part the
// holder renews its lease every third of its lifetime (RenewLease), so a
// part slower than the lease is not claimed again from a live holder; a
// renewal that finds the lease lost stops the computation. Deadlines
// decide only when a part may be claimed again; admission is decided by
// the generation in the data, not by anyone's clock, so a stalled or
// partitioned worker cannot commit late. The leases sit in the store rather than in a job-queue
// library (River and the like are bound to PostgreSQL) because the
// compare-and-set is the one thing they need and every engine provides
// it, so the same code runs on Pebble and Badger in one process and on
// PostgreSQL across machines.
//
// A plan names the coordinator's models (their tag): a worker whose
// models differ (one started before a fasd train) computes nothing of it
// and reports ErrPlanModels, and the coordinator refuses to fold a stage
// whose records carry another tag, so work of other models never reaches
// the views.
//
// The coordinator alone folds the parts in order (reads each stage, then
// the chunk commit) and computes the node views after the last part;
// RefreshReport.Times reports both, and WorkReport a worker's time per
// root, so a worker's time per root divided by the coordinator's fold
// time per root is how many workers one coordinator keeps busy
// (docs/scaling.md, "Workers").
//
// # Replicas
//
// An engine opened with Options.Replica is a read-only replica of a store
// that another engine writes: several serve processes on one PostgreSQL
// table (the store opened with storage.Options.Shared, so no writer lock
// is taken), or a second engine on the writer's Store in one process, on
// any engine. Open writes nothing (no meta record, no dirty marks: views
// of other models or no views at all make every answer stale), and every
// write (Update, ApplyExternal, Refresh, Materialize, Work) fails with
// ErrReadOnly.
//
// A replica keeps what a writer keeps in memory, the stale set (with the
// affected set, as Open adds it) and whether the views are complete,
// read in one snapshot together with the state record ("V" "s") it came
// with; the graph version it reports is the one the writer marked. The
// state record changes in every batch that can make a view stale that was
// not (an update's dirty marks carry its graph version) and at the end of
// every refresh, and never returns to an earlier value while the views
// are complete (views rebuilt with other models start a state record
// naming them). So each read fetches the node's view and the state record
// together (one request on a server, the view first on a local engine)
// and serves the view as fresh only when the record is still the one the
// replica's state came with, the views were complete and marked up to the
// graph version then, and the node was not stale: a replica that is
// behind the writer flags every answer stale, never serves an old view as
// fresh. It catches up (reads the state again) when a poll, every
// Replica.Poll, finds the state or meta record changed, at once when a
// read found it behind, and on CatchUp. A poll also compares the graph
// version with the marked one: a writer that died between a graph update
// and its dirty marks leaves the state record unchanged, and the
// replica's answers are stale from its next poll until a writer opens
// the store again (which marks the update). A replica computes
// nothing and writes nothing back: where a writer takes the cold path it
// returns the stored view flagged stale (or, with no view, an empty
// prediction flagged stale) until the writer refreshes or recomputes the
// node itself (its cold path shrinks the stale set without a new state
// record: a replica with stale nodes reads the sets again at every poll);
// a node in no subgraph of complete, current views gets the approximation
// a writer gives (SourceApprox, not stored).
//
// A replica follows the writer's models too. A writer serves the models
// it was opened with until it closes (fasd train takes the store's writer
// lock, so new models are saved while no writer runs, and a writer opened
// on them rebuilds the views: it deletes the meta and state records
// first, then every view, and starts a state record that names the new
// models). When a catch-up finds the meta record naming other models than
// the replica's and the engine was opened with Options.LoadModel, it
// loads the newest models with it; if they are the views' models, it
// stores them with the state it read in one atomic pointer. Every read
// takes that pointer once, so it answers with the old models and state or
// the new ones, never a mix, and a view is fresh only if its model tag is
// that of the read's models (a missing view only if the meta record is
// still the state's: a writer of an earlier build may end a rebuild on
// the old state record, but deletes the meta record before any view). A
// failed load keeps the old models (whose answers are then flagged
// stale), is returned by CatchUp and passed to Replica.OnError, and is
// tried again at the next poll; newest models that are not the views'
// (trained after the writer materialized) are reported once
// (ErrStaleModels) and loaded again only when the views move. ModelInfo,
// Status and every answer name the models used. A replica opened with
// Options.Model keeps it.
//
// # Key layout
//
// Every view key starts with 'V' (index.PrefixViews; index.KeyPrefixes
// registers every prefix of a store with its owner). Ids are big-endian
// u32, values little-endian. DeleteViews deletes them all; fasd load
// --replace drops the same prefix through index.LoadOptions.Drop.
//
//	key                 value
//	──────────────────  ─────────────────────────────────────────────────
//	"V" "m"             JSON meta {format, model, seed, sampler, feature
//	                    hash, variants}; other values → views rebuilt
//	"V" "s"             JSON state {complete, marked, refreshed}
//	"V" "R"             roaring bitmap: roots with a record
//	"V" "D"             roaring bitmap: dirty roots
//	"V" "S"             roaring bitmap: stale nodes
//	"V" "F"             roaring bitmap: nodes whose view must be recomputed
//	"V" "r" root:u32    u8 format │ u8 variants k │ u16 n │ u16 e │ u64
//	                    graph version │ u64 model tag │ n×u32 members │
//	                    e×u16 expanded │ k × 2n×f32 probabilities
//	"V" "n" node:u32    u8 format │ u8 variants k │ u32 count │ u64 graph
//	                    version │ u64 model tag │ k × 2×f64 mean
//	"V" "c" node:u32    roaring bitmap: roots whose subgraph contains node
//	"V" "e" node:u32    roaring bitmap: roots that expanded node
//	"V" "L" part:u32    lease of a part of distributed work: u64
//	                    generation │ i64 deadline (unix ns) │ owner
//	                    (big-endian; see "Distributed work")
//
// Bitmaps are stored in a canonical form (rebuilt and run-optimised), so
// equal sets are equal bytes.
//
// The views' format is 2 (in the meta record and the first byte of every
// record and view). Format 1 had the same layout with a flags byte in
// place of k (bit 0: a w/o-Diffusion baseline follows the fair vector)
// and "baseline" instead of "variants" in the meta record; Open migrates
// such views in place by rewriting the meta record (their records read
// as one or two variants, "fasd" and "no_diffusion"). Other formats are
// refused with ErrFormat.
//
// Trained runs (package runs) start with 'T'.
//
// # Caveats
//
//   - Only one Engine may write a store, and graph updates must go through
//     it; an update made elsewhere is noticed on the next Open (the graph
//     version differs from the last marked one) and dirties every subgraph.
//   - A replica serves the models it opened with: after fasd train and a
//     materialize by the writer its answers are all stale until it is
//     opened again.
//   - Each Update re-samples every dirty root (cheap, but O(dirty) per
//     update): refresh regularly.
//   - The per-record graph version is the version at which the record was
//     computed; it differs between an incremental history and a rebuild,
//     everything else is bit-identical.
package query
