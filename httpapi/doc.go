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
// # Mounting
//
// Serve runs the API on an address until its context is done, then shuts
// it down gracefully (fasd serve):
//
//	err := httpapi.Serve(ctx, e, "127.0.0.1:8080", &httpapi.Options{Token: tok}, nil)
//
// NewServer returns the http.Server of Serve (the timeouts of Options set,
// the address checked) for a caller that runs it; wrap its listener with
// LimitListener to bound the connections.
//
// NewHandler is the API as an http.Handler, guard included, for a caller's
// own server. Its paths are absolute (/v1/…, /healthz, /metrics): mount it
// at the root, or under a prefix with http.StripPrefix:
//
//	mux.Handle("/fasd/", http.StripPrefix("/fasd", httpapi.NewHandler(e, &opts)))
//
// The caller then owns the timeouts and the connection limit, and checks
// opts with Options.Validate first.
//
// Options configure all three (nil means DefaultOptions). The request
// bodies have exported types and decoders (PredictRequest and
// DecodePredictRequest, …) for clients and tests.
//
// # Security
//
// A guard in front of the routes checks every request, in this order:
//
//  1. Host (421 Misdirected Request otherwise): localhost, a loopback
//     address, the IP address the connection was accepted on, or an
//     Options.AllowedHosts entry ("*" accepts any; NewServer adds a listen
//     host given by name). A web page whose name an attacker re-resolves
//     to 127.0.0.1 (DNS rebinding) sends its own name and is refused, for
//     reads as for mutations; an IP literal cannot be rebound. A request
//     without Host (HTTP/1.0) passes: browsers always send one.
//  2. When Options.AuthenticateReads is set, every request needs the bearer
//     token ("Authorization: Bearer TOKEN"); NewServer and Serve set it for
//     a listen address that is not loopback, and refuse such an address
//     without a token (ErrNoToken). Loopback means "localhost" or a
//     loopback IP; an empty host, 0.0.0.0, [::], a LAN address or any other
//     name is not. 401 with WWW-Authenticate: Bearer otherwise.
//  3. A mutation (any method but GET, HEAD and OPTIONS, except POST
//     /v1/predict, which only reads; routes added later are covered
//     without being listed) is refused with 403 in read-only mode
//     (Options.ReadOnly) and without a configured token (mutations
//     disabled); otherwise it needs the token (401).
//  4. Any method but GET, HEAD and OPTIONS, POST /v1/predict included,
//     must declare Content-Type: application/json (a charset parameter, if
//     any, must be utf-8), even with an empty body; 415 otherwise. An HTML
//     form of another site can only send form or text/plain bodies, and a
//     script of another origin cannot send application/json without a
//     CORS preflight, which this API never approves.
//
// The token (Options.Token, at least MinTokenLen printable ASCII
// characters) is compared in constant time through its SHA-256 digest and
// never echoed, logged or put in an error. Refused requests are counted in
// /metrics as fasd_http_rejected_total{reason="host|auth|read_only|content_type"}.
//
// # Limits and timeouts
//
// Defaults in brackets (DefaultOptions):
//
//   - ReadHeaderTimeout [10 s]: the request head, from the accepted
//     connection or, on a kept-alive connection, from the first bytes of
//     the next request (net/http waits for those bytes up to
//     IdleTimeout). A late head gets its connection closed (net/http
//     answers a plain 400 or 408 first when part of the head arrived).
//   - ReadTimeout [1 min]: head and body together, from the same start. A
//     body still incomplete then gets 408 ("request body incomplete at the
//     read timeout") and its connection is closed.
//   - WriteTimeout [10 min]: from the end of the head to the end of the
//     answer (a refresh answers when done).
//   - IdleTimeout [2 min]: a keep-alive connection without a request.
//   - MaxConns [256]: connections open at once under Serve. At the limit
//     the connection idle the longest (or silent past 1 s since it opened)
//     is closed for the newcomer; when all are busy with a request the
//     newcomer gets 503 with Retry-After at once (connlimit.go).
//     LimitListener, the plain limit whose Accept waits, is for callers of
//     NewServer.
//   - MaxConnsPerClient [MaxConns/2, none for loopback clients]:
//     connections of one remote IP address under Serve, enforced the same
//     way.
//   - MaxBodyBytes [1 MiB] and MaxItems [10,000]: 413 beyond.
//   - ShutdownTimeout [10 s]: when Serve's context is done it stops
//     accepting and lets requests finish for this long, then cancels the
//     contexts of those still running, closes their connections and waits
//     up to ShutdownTimeout again for their handlers to return. A stalled
//     client therefore delays shutdown by ShutdownTimeout at most, and is
//     not an error.
//
// Request bodies are decoded strictly (unknown fields and trailing data
// are errors) and bounded (Options.MaxBodyBytes, Options.MaxItems). Every
// error is a JSON {"error": "…"} with 400 (bad input), 401 (token), 403
// (read-only; mutations without a configured token), 404 (unknown or
// deleted node, or path), 405 (method), 408 (body past the read timeout),
// 409 (features in the dump's units for a graph that recorded no scaling),
// 413 (body or item count over the limits), 415 (content type), 421
// (Host), 503 (cancelled) or 500.
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
