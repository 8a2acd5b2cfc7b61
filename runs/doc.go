// Package runs trains the FASD models on the graph of a store and keeps
// them there: Train reads every node and one sampled subgraph per split
// node (TrainInput), runs the pipeline (package fasd/pipeline) and saves
// the model bundle with a run record (Save); List, Latest and LoadModels
// read them back.
//
// TrainedModel hands trained models to the query engine through the
// small interface of package query/model; LoadLatest, given to the
// engine's Options.LoadModel, serves the newest models of the store:
//
//	e, err := query.Open(dir, &query.Options{LoadModel: runs.LoadLatest})
//
// # Key layout
//
// Runs live under the first key byte 'T' (index.PrefixRuns; see
// index.KeyPrefixes for the registry of every prefix); run ids are
// big-endian u64. DeleteAll deletes them all; fasd load --replace
// --drop-runs drops the same prefix through index.LoadOptions.Drop:
//
//	key                          value
//	───────────────────────────  ─────────────────────────────────────────
//	"T" "s"                      highest run id used, u64 big-endian
//	"T" "r" id:u64               JSON Record (config TOML, seed, graph
//	                             version, metrics, per-group metrics, stage
//	                             timings, diagnostics, model size/SHA-256);
//	                             written last, so its presence marks the
//	                             run complete
//	"T" "m" id:u64 chunk:u32     model bundle (pipeline.Models
//	                             .MarshalBinary) in chunks of ≤ 1 MiB, one
//	                             write batch each (Badger's batch bound)
//	"T" "c" fp:16 root:u32       debias memo of the models with fair
//	                             fingerprint fp: f's probabilities on the
//	                             root's debiased training subgraph, with a
//	                             digest (see memo.go); only the newest
//	                             run's memo is kept
//
// # The debias memo
//
// fasd train debiases one subgraph per training root; Train keeps f's
// probabilities on each (pipeline.Options.FairProbs) so that the query
// engine classifies those roots without debiasing them again
// (TrainedModel implements model.Reuser and its scorers
// model.ReusingScorer). An entry is used only for the same models (their
// pipeline.Models.FairFingerprint) and the same clean subgraph, so it
// never changes a view: it only saves the debiasing.
package runs
