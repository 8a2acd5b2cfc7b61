package index

import "errors"

// Sentinel errors. Check them with errors.Is.
var (
	// ErrNoGraph is returned by Open when the store holds no graph.
	ErrNoGraph = errors.New("index: store holds no graph")
	// ErrGraphExists is returned by Create, and by Load without Replace,
	// when the store already holds a graph.
	ErrGraphExists = errors.New("index: store already holds a graph")
	// ErrDependents is returned by Load with Replace while the store holds
	// data derived from the old graph or trained on it (materialized
	// views, training runs; see KeyPrefixes) that LoadOptions.Drop does not
	// name (fasd load --replace drops the views, and the runs with
	// --drop-runs).
	ErrDependents = errors.New("index: store holds data that depends on the graph")
	// ErrIncompleteLoad is returned by Open (and by Load without Replace)
	// when a load into the store started and never finished: the store holds
	// a partial graph and must be reloaded with Replace (fasd load --replace).
	ErrIncompleteLoad = errors.New("index: store holds an incomplete load; reload with --replace")
	// ErrFormat is returned by Open for a graph written in a format this
	// build does not know.
	ErrFormat = errors.New("index: unknown graph format")
	// ErrCorrupt is returned when a stored record does not decode or the
	// stored structures contradict each other.
	ErrCorrupt = errors.New("index: corrupt graph data")
	// ErrNodeRange is returned for an internal node id ≥ the node count.
	ErrNodeRange = errors.New("index: node id out of range")
	// ErrUnknownID is returned by lookups of an external id the graph does
	// not hold.
	ErrUnknownID = errors.New("index: unknown external id")
	// ErrDuplicateID is returned by AddNode for an external id already in
	// the graph.
	ErrDuplicateID = errors.New("index: duplicate external id")
	// ErrSelfLoop is returned by AddEdge for an edge from a node to itself.
	ErrSelfLoop = errors.New("index: self-loop")
	// ErrInvalid is returned for invalid arguments: a wrong feature
	// dimension, a non-finite feature, a sensitive value or label outside
	// {-1, 0, 1}, an unknown split, invalid options.
	ErrInvalid = errors.New("index: invalid argument")
	// ErrDegenerate is returned by Load for a dump that parses but is no
	// graph to learn fairly on: no nodes, no edge kept, fewer than two label
	// classes or sensitive groups. The message names the cause and, where a
	// user may mean it, the option that loads it anyway.
	ErrDegenerate = errors.New("index: degenerate graph")
	// ErrDeleted is returned for an internal id whose node was deleted
	// (Tx.DeleteNode): the id stays taken, its record is a tombstone.
	ErrDeleted = errors.New("index: node deleted")
	// ErrOutOfRange is returned for a feature value far outside the range
	// of the loaded dump (see Scaling).
	ErrOutOfRange = errors.New("index: feature value far outside the loaded range")
	// ErrNoScaling is returned by Graph.Scaling for a graph loaded by an
	// older build that did not record its feature scaling.
	ErrNoScaling = errors.New("index: the graph records no feature scaling (loaded by an older fasd; reload the dump with fasd load --replace)")
	// ErrClosed is returned by a View after Close.
	ErrClosed = errors.New("index: view is closed")
)
