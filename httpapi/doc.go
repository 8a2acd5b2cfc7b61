// Package httpapi is the JSON HTTP API of the query engine, on the
// standard library's net/http:
//
//	GET    /v1/nodes/{id}/prediction   fair prediction of a node (external id)
//	GET    /v1/nodes/{id}/subgraph     debiased subgraph rooted at a node
//	POST   /v1/predict                 {"ids":[…], "cold":true} → predictions
//	POST   /v1/edges, DELETE /v1/edges {"edges":[[u,v],…]} → update report
//	POST   /v1/nodes                   {"nodes":[{id, features, sensitive,
//	                                    label, split, edges}], "clip":false,
//	                                    "units":"dump"} → update report
//	PATCH  /v1/nodes                   {"edits":[{id, features, sensitive,
//	                                    label, split}], "clip", "units"}
//	                                    → update report
//	DELETE /v1/nodes                   {"ids":[…]} → update report
//	PATCH  /v1/nodes/{id}              {features, sensitive, label, split,
//	                                    clip, units} → update report
//	DELETE /v1/nodes/{id}              → update report
//	POST   /v1/refresh                 → refresh report
//	GET    /v1/audit?set=test|labelled → audit report
//	GET    /healthz                    → status
//	GET    /metrics                    Prometheus text format
//
// NewHandler is the API as an http.Handler, for embedding in a caller's
// server; NewServer wraps it in an http.Server with read, write, header
// and idle timeouts; Serve runs that server until its context is done and
// shuts it down gracefully (fasd serve).
//
// Request bodies are decoded strictly (unknown fields and trailing data
// are errors) and bounded (Options.MaxBodyBytes, Options.MaxItems). Every
// error is a JSON {"error": "…"} with 400 (bad input), 404 (unknown or
// deleted node, or path), 405 (method), 409 (features in the dump's units
// for a graph that recorded no scaling), 413 (body or item count over the
// limits), 503 (cancelled) or 500.
//
// Features of new and edited nodes are in the dump's units (the numbers of
// the node file) and are scaled with the scaling recorded at load time; a
// value that is not finite or lies more than one range width beyond the
// column's loaded min or max is refused with 400 naming the node and the
// column, and nothing is written, unless "clip" is true ("units": "stored"
// takes stored, scaled values). In an edit an omitted field stays as it
// is; -1 makes a sensitive value unknown or a node unlabelled; "split":
// "none" takes a node out of the split (see query.ExternalUpdate for the
// split membership rule). A deleted node's id answers 404 afterwards and
// may be given to a new node. Updates go through the engine's typed write API
// (query.Engine.ApplyExternal); this package only maps JSON and status
// codes.
package httpapi
