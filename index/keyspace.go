package index

import "github.com/fasd-db/fasd/storage"

// KeyPrefix is one top-level key prefix of a store: every key whose first
// byte is Byte belongs to Owner, the one package that writes and deletes
// it.
type KeyPrefix struct {
	Byte  byte
	Owner string
	What  string
	// DependsOnGraph marks data derived from the graph or trained on it
	// (kept by packages above index): Load with Replace refuses while such
	// keys exist unless LoadOptions.Drop names the prefix; then Load
	// deletes the whole prefix (the owner's own deleter, query.DeleteViews
	// or runs.DeleteAll, is the same prefix delete).
	DependsOnGraph bool
}

// The prefixes of the packages above index, declared here so that the
// registry is in one place.
const (
	// PrefixViews is the first byte of the query engine's materialized
	// views (package query).
	PrefixViews byte = 'V'
	// PrefixRuns is the first byte of training runs and model bundles
	// (package runs).
	PrefixRuns byte = 'T'
)

// KeyPrefixes is the registry of every top-level key prefix of a store, in
// byte order. No two entries share a byte; a key with a first byte not
// listed here is written by no package of this module.
var KeyPrefixes = []KeyPrefix{
	{Byte: storage.ReservedPrefix, Owner: "storage", What: "backend name and format version"},
	{Byte: prefixAdj, Owner: "index", What: "adjacency bitmap by internal id"},
	{Byte: prefixGroup, Owner: "index", What: "node sets: sensitive groups, labels, splits"},
	{Byte: prefixMeta, Owner: "index", What: "graph metadata: schema, state, version counter, load marker and report"},
	{Byte: prefixNode, Owner: "index", What: "node record by internal id"},
	{Byte: PrefixRuns, Owner: "runs", What: "training runs: records, model bundles and the debias memo", DependsOnGraph: true},
	{Byte: PrefixViews, Owner: "query", What: "materialized views: subgraph records, node views, inverted indexes", DependsOnGraph: true},
	{Byte: prefixExt, Owner: "index", What: "external id → internal id"},
}

// LookupPrefix returns the registry entry of first byte b.
func LookupPrefix(b byte) (KeyPrefix, bool) {
	for _, p := range KeyPrefixes {
		if p.Byte == b {
			return p, true
		}
	}
	return KeyPrefix{}, false
}
