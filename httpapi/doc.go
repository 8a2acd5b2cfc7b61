// Package httpapi is the JSON HTTP API of the query engine, on the
// standard library's net/http:
//
//	GET    /v1/nodes/{id}/prediction   fair prediction of a node (external id)
//	GET    /v1/nodes/{id}/subgraph     debiased subgraph rooted at a node
//	POST   /v1/predict                 {"ids":[…], "cold":true} → predictions
//	POST   /v1/edges, DELETE /v1/edges {"edges":[[u,v],…]} → update report
//	POST   /v1/nodes                   {"nodes":[{id, features, sensitive,
//	                                    label, split, edges}]} → update report
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
// error is a JSON {"error": "…"} with 400 (bad input), 404 (unknown node
// or path), 405 (method), 413 (body or item count over the limits), 503
// (cancelled) or 500. Updates go through the engine's typed write API
// (query.Engine.ApplyExternal); this package only maps JSON and status
// codes.
package httpapi
