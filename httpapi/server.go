package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query"
)

// Options configure the HTTP API. A nil *Options means all defaults; zero
// fields mean the default.
type Options struct {
	// MaxBodyBytes bounds a request body; 0 means 1 MiB. Larger bodies get
	// 413.
	MaxBodyBytes int64
	// MaxItems bounds the ids, edges or nodes of one request; 0 means
	// 10,000.
	MaxItems int
	// ShutdownTimeout bounds the graceful shutdown of Serve: requests
	// still running then are cancelled and their connections closed; 0
	// means 10 s.
	ShutdownTimeout time.Duration
	// ReadHeaderTimeout bounds the time to read a request head, from the
	// accepted connection or, on a kept-alive one, from the first bytes of
	// the next request; 0 means 10 s. A late head gets its connection
	// closed.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the time to read a whole request, head and body,
	// from the same start; 0 means 1 min. A body still incomplete then
	// gets 408 and its connection is closed.
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of the request head to the
	// end of the answer; 0 means 10 min (a refresh of many subgraphs
	// answers only when done).
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle that long; 0 means
	// 2 min.
	IdleTimeout time.Duration
	// MaxConns bounds the connections Serve keeps open at once; 0 means
	// 256. At the bound the connection idle the longest is closed for a
	// newcomer, or the newcomer gets 503 at once when every connection is
	// busy (see connlimit.go; LimitListener is the plain, waiting limit).
	MaxConns int
	// MaxConnsPerClient bounds the connections of one remote IP address
	// under Serve, in the same way. 0 means MaxConns/2 (at least 1) for
	// clients on other hosts, and no cap of its own for loopback clients
	// (every local user shares the address 127.0.0.1: only the global
	// policy can be fair among them).
	MaxConnsPerClient int

	// Token is the bearer token ("Authorization: Bearer TOKEN"), at least
	// MinTokenLen printable ASCII characters. Every mutation needs it;
	// without a token mutations are disabled (403).
	Token string
	// AuthenticateReads requires the token for every request, reads
	// included (it needs a Token). NewServer and Serve set it for a
	// non-loopback address.
	AuthenticateReads bool
	// ReadOnly refuses every mutation with 403, token or not.
	ReadOnly bool
	// AllowedHosts are host names or IP addresses (without port) accepted
	// in the Host header besides localhost, loopback addresses and the
	// address a connection was accepted on; "*" accepts any Host.
	AllowedHosts []string

	// Log receives Serve's notes (requests cut short by the shutdown);
	// nil means none. Nothing logged contains the token.
	Log *slog.Logger
}

// Validate reports every negative field, a malformed Token,
// AuthenticateReads without a Token and malformed AllowedHosts; errors
// never contain the token.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	var errs []error
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxBodyBytes", o.MaxBodyBytes}, {"MaxItems", int64(o.MaxItems)}, {"ShutdownTimeout", int64(o.ShutdownTimeout)},
		{"ReadHeaderTimeout", int64(o.ReadHeaderTimeout)}, {"ReadTimeout", int64(o.ReadTimeout)},
		{"WriteTimeout", int64(o.WriteTimeout)}, {"IdleTimeout", int64(o.IdleTimeout)}, {"MaxConns", int64(o.MaxConns)},
		{"MaxConnsPerClient", int64(o.MaxConnsPerClient)},
	} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%w: %s %d, want ≥ 0", query.ErrInvalid, f.name, f.v))
		}
	}
	if o.Token != "" {
		if err := validToken(o.Token); err != nil {
			errs = append(errs, fmt.Errorf("%w: %w", query.ErrInvalid, err))
		}
	} else if o.AuthenticateReads {
		errs = append(errs, fmt.Errorf("%w: AuthenticateReads needs a Token", query.ErrInvalid))
	}
	for _, h := range o.AllowedHosts {
		if err := validHost(h); err != nil {
			errs = append(errs, fmt.Errorf("%w: %w", query.ErrInvalid, err))
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns a copy of o with every zero field set to its
// default.
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	setDefault(&c.MaxBodyBytes, 1<<20)
	setDefault(&c.MaxItems, 10000)
	setDefault(&c.ShutdownTimeout, 10*time.Second)
	setDefault(&c.ReadHeaderTimeout, 10*time.Second)
	setDefault(&c.ReadTimeout, time.Minute)
	setDefault(&c.WriteTimeout, 10*time.Minute)
	setDefault(&c.IdleTimeout, 2*time.Minute)
	setDefault(&c.MaxConns, 256)
	return c
}

// DefaultOptions returns the options with every default filled in.
func DefaultOptions() Options {
	return (*Options)(nil).withDefaults()
}

func setDefault[T int | int64 | time.Duration](p *T, def T) {
	if *p == 0 {
		*p = def
	}
}

// Request bodies of the API.
type (
	// PredictRequest is the body of POST /v1/predict.
	PredictRequest struct {
		IDs []int64 `json:"ids"`
		// Cold computes missing or stale predictions (default true); with
		// false, stale views are returned marked stale and missing ones
		// with 0 subgraphs.
		Cold *bool `json:"cold,omitempty"`
	}
	// EdgesRequest is the body of POST and DELETE /v1/edges: pairs of
	// external ids.
	EdgesRequest struct {
		Edges [][2]int64 `json:"edges"`
	}
	// NodesRequest is the body of POST /v1/nodes (see query.DecodeUpdate
	// for the form of a node): features in the dump's units unless Units
	// is "stored"; Clip clips values beyond the accepted window instead of
	// refusing them.
	NodesRequest struct {
		Nodes []query.NewNode `json:"nodes"`
		Clip  bool            `json:"clip,omitempty"`
		Units string          `json:"units,omitempty"`
	}
	// EditsRequest is the body of PATCH /v1/nodes (see query.DecodeUpdate
	// for the form of an edit).
	EditsRequest struct {
		Edits []query.NodeEdit `json:"edits"`
		Clip  bool             `json:"clip,omitempty"`
		Units string           `json:"units,omitempty"`
	}
	// DeleteNodesRequest is the body of DELETE /v1/nodes.
	DeleteNodesRequest struct {
		IDs []int64 `json:"ids"`
	}
)

// errorBody is the JSON body of every 4xx/5xx answer.
type errorBody struct {
	Error string `json:"error"`
}

// httpError carries a status code.
type httpError struct {
	status int
	err    error
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Errorf(format, args...)}
}

// decodeJSON decodes exactly one JSON value of type T from r, rejecting
// unknown fields, repeated keys (query.CheckDuplicateKeys) and trailing
// data.
func decodeJSON[T any](r io.Reader, dst *T) error {
	data, err := io.ReadAll(r)
	if err == nil {
		err = query.CheckDuplicateKeys(data)
	}
	if err != nil {
		if berr := bodyError(err); berr != nil {
			return berr
		}
		return badRequest("invalid JSON body: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		if berr := bodyError(err); berr != nil {
			return berr
		}
		return badRequest("invalid JSON body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("invalid JSON body: trailing data after the value")
	}
	return nil
}

// bodyError maps a failure to read a request body to its status: 413
// over the size limit, 408 past the read timeout (a stalled body); nil for
// other errors.
func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &httpError{http.StatusRequestEntityTooLarge, fmt.Errorf("request body over %d bytes", mbe.Limit)}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &httpError{http.StatusRequestTimeout, errors.New("request body incomplete at the read timeout")}
	}
	return nil
}

// checkCount checks the number n of items of a request list: at least one
// (400), at most maxItems (413). field names the list, item one element.
func checkCount(field, item string, n, maxItems int) error {
	if n == 0 {
		return badRequest("%s: at least one %s is required", field, item)
	}
	if n > maxItems {
		return &httpError{http.StatusRequestEntityTooLarge, fmt.Errorf("%s: %d %ss, at most %d", field, n, item, maxItems)}
	}
	return nil
}

// DecodePredictRequest decodes and validates a POST /v1/predict body.
func DecodePredictRequest(r io.Reader, maxItems int) (*PredictRequest, error) {
	var req PredictRequest
	if err := decodeJSON(r, &req); err != nil {
		return nil, err
	}
	if err := checkCount("ids", "id", len(req.IDs), maxItems); err != nil {
		return nil, err
	}
	return &req, nil
}

// DecodeEdgesRequest decodes and validates a /v1/edges body.
func DecodeEdgesRequest(r io.Reader, maxItems int) (*EdgesRequest, error) {
	// Decoded as lists so that a pair of the wrong length is an error
	// rather than zero-filled.
	var raw struct {
		Edges [][]int64 `json:"edges"`
	}
	if err := decodeJSON(r, &raw); err != nil {
		return nil, err
	}
	if err := checkCount("edges", "edge", len(raw.Edges), maxItems); err != nil {
		return nil, err
	}
	req := &EdgesRequest{Edges: make([][2]int64, len(raw.Edges))}
	for i, e := range raw.Edges {
		if len(e) != 2 {
			return nil, badRequest("edges[%d]: %d ids, want a pair", i, len(e))
		}
		if e[0] == e[1] {
			return nil, badRequest("edges[%d]: self-loop on %d", i, e[0])
		}
		req.Edges[i] = [2]int64{e[0], e[1]}
	}
	return req, nil
}

// DecodeNodesRequest decodes a POST /v1/nodes body (query.DecodeUpdate
// with nodes only) and checks it against the item limit and a graph of dim
// features (query.ExternalUpdate.Validate).
func DecodeNodesRequest(r io.Reader, maxItems, dim int) (*NodesRequest, error) {
	u, err := decodeUpdateRequest(r, "nodes", maxItems, dim)
	if err != nil {
		return nil, err
	}
	return &NodesRequest{Nodes: u.Nodes, Clip: u.Clip, Units: units(u)}, nil
}

// DecodeEditsRequest decodes a PATCH /v1/nodes body (query.DecodeUpdate
// with edits only) and checks it like DecodeNodesRequest.
func DecodeEditsRequest(r io.Reader, maxItems, dim int) (*EditsRequest, error) {
	u, err := decodeUpdateRequest(r, "edits", maxItems, dim)
	if err != nil {
		return nil, err
	}
	return &EditsRequest{Edits: u.Edits, Clip: u.Clip, Units: units(u)}, nil
}

func units(u *query.ExternalUpdate) string {
	if u.StoredUnits {
		return "stored"
	}
	return "dump"
}

// decodeUpdateRequest decodes an update document holding only the list
// named field (nodes or edits), with at most maxItems items (edges of new
// nodes included), valid for a graph of dim features.
func decodeUpdateRequest(r io.Reader, field string, maxItems, dim int) (*query.ExternalUpdate, error) {
	u, err := query.DecodeUpdate(r)
	if err != nil {
		if berr := bodyError(err); berr != nil {
			return nil, berr
		}
		return nil, &httpError{http.StatusBadRequest, err}
	}
	n, item := len(u.Nodes), "node"
	if field == "edits" {
		n, item = len(u.Edits), "edit"
	}
	if n != u.Size()-edgesOfNodes(u) || (field == "edits" && len(u.Nodes) > 0) {
		return nil, badRequest("this endpoint takes %s only (and clip, units)", field)
	}
	if err := checkCount(field, item, n, maxItems); err != nil {
		return nil, err
	}
	if edges := edgesOfNodes(u); edges > maxItems {
		return nil, &httpError{http.StatusRequestEntityTooLarge, fmt.Errorf("nodes: %d edges, at most %d", edges, maxItems)}
	}
	if err := u.Validate(dim); err != nil {
		return nil, &httpError{http.StatusBadRequest, err}
	}
	return u, nil
}

func edgesOfNodes(u *query.ExternalUpdate) int {
	n := 0
	for _, nd := range u.Nodes {
		n += len(nd.Edges)
	}
	return n
}

// DecodeDeleteNodesRequest decodes and validates a DELETE /v1/nodes body.
func DecodeDeleteNodesRequest(r io.Reader, maxItems int) (*DeleteNodesRequest, error) {
	var req DeleteNodesRequest
	if err := decodeJSON(r, &req); err != nil {
		return nil, err
	}
	if err := checkCount("ids", "id", len(req.IDs), maxItems); err != nil {
		return nil, err
	}
	u := query.ExternalUpdate{Delete: req.IDs}
	if err := u.Validate(0); err != nil {
		return nil, &httpError{http.StatusBadRequest, err}
	}
	return &req, nil
}

// routeStats count the requests of one route without a lock: the common
// status codes have their own counters, others go to a locked map.
type routeStats struct {
	count atomic.Int64
	nanos atomic.Int64
	codes [len(trackedCodes)]atomic.Int64
	mu    sync.Mutex
	other map[int]int64
}

// trackedCodes are the status codes the API answers with.
var trackedCodes = [...]int{200, 400, 404, 405, 409, 413, 500, 503}

func (rs *routeStats) add(code int, d time.Duration) {
	rs.count.Add(1)
	rs.nanos.Add(int64(d))
	for i, c := range trackedCodes {
		if c == code {
			rs.codes[i].Add(1)
			return
		}
	}
	rs.mu.Lock()
	if rs.other == nil {
		rs.other = map[int]int64{}
	}
	rs.other[code]++
	rs.mu.Unlock()
}

// byCode returns the non-zero counts by status code.
func (rs *routeStats) byCode() map[int]int64 {
	m := map[int]int64{}
	for i, c := range trackedCodes {
		if n := rs.codes[i].Load(); n > 0 {
			m[c] = n
		}
	}
	rs.mu.Lock()
	for c, n := range rs.other {
		m[c] += n
	}
	rs.mu.Unlock()
	return m
}

type server struct {
	e      *query.Engine
	o      Options
	mux    *http.ServeMux
	routes map[string]*routeStats
	names  []string
	start  time.Time
	inflt  atomic.Int64
	// pred are the stats of the prediction route, also counted by the
	// handler's shortcut for it.
	pred *routeStats
	// rej count the requests the guard refused.
	rej rejectStats
}

// NewHandler returns the JSON HTTP API over e:
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
// Features of new and edited nodes are in the dump's units and are scaled
// with the scaling recorded at load time; a value that is not finite or
// lies beyond the accepted window (index.Scaling.Window) is refused with
// 400 naming the node and the column, unless "clip" is true. A graph
// loaded by an older build accepts features only with "units": "stored"
// (409 otherwise).
//
// Errors are JSON {"error": "..."} with 400 (bad input), 401 (missing or
// wrong bearer token), 403 (read-only, or mutations without a configured
// token), 404 (unknown or deleted node, or path), 405 (method), 408 (body
// incomplete at the read timeout), 409 (the graph records no scaling), 413
// (body or item count over the limits), 415 (not application/json), 421
// (Host not allowed), 500.
//
// Before any route, a guard checks the Host header, the bearer token and
// the content type (see the package documentation); mutations need
// opts.Token, so a handler without one only reads. opts is checked with
// Validate by NewServer; NewHandler takes it as given.
//
// GET /v1/nodes/{id}/prediction with a plain decimal id skips the router
// and encodes its answer without reflection (the most frequent request);
// every other request, including odd spellings of that path, goes through
// an http.ServeMux.
func NewHandler(e *query.Engine, opts *Options) http.Handler {
	s := &server{e: e, o: opts.withDefaults(), routes: map[string]*routeStats{}, start: time.Now()}
	mux := http.NewServeMux()
	handle := func(pattern, name string, methods []string, h func(w http.ResponseWriter, r *http.Request) (any, error)) {
		rs := &routeStats{}
		s.routes[name] = rs
		s.names = append(s.names, name)
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			t0 := time.Now()
			s.inflt.Add(1)
			defer s.inflt.Add(-1)
			code := s.serve(w, r, methods, h)
			rs.add(code, time.Since(t0))
		})
	}
	handle("/v1/nodes/{id}/prediction", "prediction", []string{http.MethodGet}, s.prediction)
	handle("/v1/nodes/{id}/subgraph", "subgraph", []string{http.MethodGet}, s.subgraph)
	handle("/v1/predict", "predict", []string{http.MethodPost}, s.predict)
	handle("/v1/edges", "edges", []string{http.MethodPost, http.MethodDelete}, s.edges)
	handle("/v1/nodes", "nodes", []string{http.MethodPost, http.MethodPatch, http.MethodDelete}, s.nodes)
	handle("/v1/nodes/{id}", "node", []string{http.MethodPatch, http.MethodDelete}, s.node)
	handle("/v1/refresh", "refresh", []string{http.MethodPost}, s.refresh)
	handle("/v1/audit", "audit", []string{http.MethodGet}, s.audit)
	handle("/healthz", "healthz", []string{http.MethodGet}, s.healthz)
	handle("/", "other", nil, func(http.ResponseWriter, *http.Request) (any, error) {
		return nil, &httpError{http.StatusNotFound, errors.New("no such endpoint")}
	})
	mux.HandleFunc("/metrics", s.metrics)
	s.mux, s.pred = mux, s.routes["prediction"]
	return newGuard(s, &s.o, &s.rej)
}

const (
	predPrefix = "/v1/nodes/"
	predSuffix = "/prediction"
)

// predictionID recognises a GET of "/v1/nodes/ID/prediction" (see
// predictionPathID).
func predictionID(r *http.Request) (int64, bool) {
	if r.Method != http.MethodGet || r.URL.RawPath != "" {
		return 0, false
	}
	return predictionPathID(r.URL.Path)
}

// predictionPathID recognises "/v1/nodes/ID/prediction" with ID an optional
// '-' and 1 to 18 decimal digits (no overflow), a spelling the router
// would also accept and strconv parse to the same id.
func predictionPathID(p string) (int64, bool) {
	if len(p) <= len(predPrefix)+len(predSuffix) ||
		p[:len(predPrefix)] != predPrefix || p[len(p)-len(predSuffix):] != predSuffix {
		return 0, false
	}
	id := p[len(predPrefix) : len(p)-len(predSuffix)]
	digits := id
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if id[0] == '-' {
		v = -v
	}
	return v, true
}

// bufPool holds response buffers of the prediction shortcut.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// jsonContentType is shared by every answer; net/http only reads it.
var jsonContentType = []string{"application/json"}

// dateHeader is the Date header value of the current second, shared by the
// answers of the prediction shortcut so that net/http does not format one
// per request.
type dateHeader struct {
	sec int64
	val []string
}

var curDate atomic.Pointer[dateHeader]

func dateFor(t time.Time) []string {
	sec := t.Unix()
	if d := curDate.Load(); d != nil && d.sec == sec {
		return d.val
	}
	d := &dateHeader{sec: sec, val: []string{t.UTC().Format(http.TimeFormat)}}
	curDate.Store(d)
	return d.val
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, ok := predictionID(r)
	if !ok {
		s.mux.ServeHTTP(w, r)
		return
	}
	t0 := time.Now()
	s.inflt.Add(1)
	defer s.inflt.Add(-1)
	var code int
	p, err := s.e.PredictExternal(r.Context(), id)
	if err != nil {
		code = writeJSON(w, statusOf(err), errorBody{err.Error()})
	} else {
		bp := bufPool.Get().(*[]byte)
		b, ok := appendPrediction((*bp)[:0], &p)
		if ok {
			b = append(b, '\n')
			h := w.Header()
			h["Content-Type"] = jsonContentType
			h["Date"] = dateFor(t0)
			w.WriteHeader(http.StatusOK)
			w.Write(b)
			code = http.StatusOK
		} else {
			code = writeJSON(w, http.StatusOK, p) // reports the encoding error
		}
		*bp = b
		bufPool.Put(bp)
	}
	s.pred.add(code, time.Since(t0))
}

// serve runs h and writes its JSON result or error; it returns the status.
func (s *server) serve(w http.ResponseWriter, r *http.Request, methods []string, h func(http.ResponseWriter, *http.Request) (any, error)) int {
	if methods != nil {
		ok := false
		for _, m := range methods {
			ok = ok || r.Method == m
		}
		if !ok {
			w.Header().Set("Allow", strings.Join(methods, ", "))
			return writeJSON(w, http.StatusMethodNotAllowed, errorBody{fmt.Sprintf("method %s not allowed", r.Method)})
		}
	}
	if r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, s.o.MaxBodyBytes)
	}
	v, err := h(w, r)
	if err != nil {
		return writeJSON(w, statusOf(err), errorBody{err.Error()})
	}
	return writeJSON(w, http.StatusOK, v)
}

func statusOf(err error) int {
	var he *httpError
	switch {
	case errors.As(err, &he):
		return he.status
	case errors.Is(err, query.ErrUnknownNode), errors.Is(err, query.ErrNotRoot), errors.Is(err, index.ErrNodeRange), errors.Is(err, index.ErrUnknownID),
		errors.Is(err, index.ErrDeleted):
		return http.StatusNotFound
	case errors.Is(err, index.ErrNoScaling):
		return http.StatusConflict
	case errors.Is(err, index.ErrInvalid), errors.Is(err, index.ErrSelfLoop), errors.Is(err, index.ErrDuplicateID), errors.Is(err, query.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	case errors.Is(err, query.ErrWriteFault):
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, code int, v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{"encode response: " + err.Error()})
	}
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
	return code
}

func (s *server) prediction(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return nil, badRequest("node id %q is not an integer", r.PathValue("id"))
	}
	p, err := s.e.PredictExternal(r.Context(), id)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (s *server) subgraph(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return nil, badRequest("node id %q is not an integer", r.PathValue("id"))
	}
	return s.e.SubgraphExternal(r.Context(), id)
}

func (s *server) predict(_ http.ResponseWriter, r *http.Request) (any, error) {
	req, err := DecodePredictRequest(r.Body, s.o.MaxItems)
	if err != nil {
		return nil, err
	}
	ps, err := s.e.PredictManyExternal(r.Context(), req.IDs, req.Cold == nil || *req.Cold)
	if err != nil {
		return nil, err
	}
	return map[string]any{"predictions": ps}, nil
}

func (s *server) edges(_ http.ResponseWriter, r *http.Request) (any, error) {
	req, err := DecodeEdgesRequest(r.Body, s.o.MaxItems)
	if err != nil {
		return nil, err
	}
	return s.e.EdgesExternal(r.Context(), req.Edges, r.Method == http.MethodPost)
}

func (s *server) nodes(_ http.ResponseWriter, r *http.Request) (any, error) {
	dim := len(s.e.Graph().Schema().Features)
	var u query.ExternalUpdate
	switch r.Method {
	case http.MethodPost:
		req, err := DecodeNodesRequest(r.Body, s.o.MaxItems, dim)
		if err != nil {
			return nil, err
		}
		u = query.ExternalUpdate{Nodes: req.Nodes, Clip: req.Clip, StoredUnits: req.Units == "stored"}
	case http.MethodPatch:
		req, err := DecodeEditsRequest(r.Body, s.o.MaxItems, dim)
		if err != nil {
			return nil, err
		}
		u = query.ExternalUpdate{Edits: req.Edits, Clip: req.Clip, StoredUnits: req.Units == "stored"}
	default:
		req, err := DecodeDeleteNodesRequest(r.Body, s.o.MaxItems)
		if err != nil {
			return nil, err
		}
		u = query.ExternalUpdate{Delete: req.IDs}
	}
	return s.e.ApplyExternal(r.Context(), u)
}

// node edits (PATCH) or deletes (DELETE) the node of the path.
func (s *server) node(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return nil, badRequest("node id %q is not an integer", r.PathValue("id"))
	}
	if r.Method == http.MethodDelete {
		if err := ensureEmptyBody(r.Body); err != nil {
			return nil, err
		}
		return s.e.DeleteNodesExternal(r.Context(), []int64{id})
	}
	u, err := query.DecodeNodeEdit(r.Body, id)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &httpError{http.StatusRequestEntityTooLarge, fmt.Errorf("request body over %d bytes", mbe.Limit)}
		}
		return nil, &httpError{http.StatusBadRequest, err}
	}
	return s.e.ApplyExternal(r.Context(), *u)
}

func (s *server) refresh(_ http.ResponseWriter, r *http.Request) (any, error) {
	if err := ensureEmptyBody(r.Body); err != nil {
		return nil, err
	}
	return s.e.Refresh(r.Context())
}

// ensureEmptyBody accepts an empty body, whitespace or "{}".
func ensureEmptyBody(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		if berr := bodyError(err); berr != nil {
			return berr
		}
		return badRequest("read body: %v", err)
	}
	if b = bytes.TrimSpace(b); len(b) > 0 && string(b) != "{}" {
		return badRequest("this endpoint takes no body")
	}
	return nil
}

func (s *server) audit(_ http.ResponseWriter, r *http.Request) (any, error) {
	set := r.URL.Query().Get("set")
	if set != "" && set != "test" && set != "labelled" {
		return nil, badRequest("set %q: want test or labelled", set)
	}
	return s.e.Audit(r.Context(), set)
}

func (s *server) healthz(_ http.ResponseWriter, _ *http.Request) (any, error) {
	st, err := s.e.Status()
	if err != nil {
		return nil, err
	}
	return map[string]any{"status": "ok", "views": st}, nil
}

// metrics writes the Prometheus text exposition format.
func (s *server) metrics(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{"method not allowed"})
		return
	}
	var b strings.Builder
	metric := func(name, kind, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, kind)
	}
	metric("fasd_http_requests_total", "counter", "HTTP requests by route and status code.")
	names := append([]string(nil), s.names...)
	sort.Strings(names)
	for _, n := range names {
		byCode := s.routes[n].byCode()
		codes := make([]int, 0, len(byCode))
		for c := range byCode {
			codes = append(codes, c)
		}
		sort.Ints(codes)
		for _, c := range codes {
			fmt.Fprintf(&b, "fasd_http_requests_total{route=%q,code=\"%d\"} %d\n", n, c, byCode[c])
		}
	}
	metric("fasd_http_request_duration_seconds", "summary", "Time spent serving requests, by route.")
	for _, n := range names {
		rs := s.routes[n]
		fmt.Fprintf(&b, "fasd_http_request_duration_seconds_sum{route=%q} %g\n", n, time.Duration(rs.nanos.Load()).Seconds())
		fmt.Fprintf(&b, "fasd_http_request_duration_seconds_count{route=%q} %d\n", n, rs.count.Load())
	}
	metric("fasd_http_rejected_total", "counter", "Requests refused before any route, by reason.")
	for _, c := range []struct {
		reason string
		n      *atomic.Int64
	}{{"auth", &s.rej.auth}, {"content_type", &s.rej.contentType}, {"host", &s.rej.host}, {"read_only", &s.rej.readOnly}} {
		fmt.Fprintf(&b, "fasd_http_rejected_total{reason=%q} %d\n", c.reason, c.n.Load())
	}
	metric("fasd_http_requests_in_flight", "gauge", "Requests being served.")
	fmt.Fprintf(&b, "fasd_http_requests_in_flight %d\n", s.inflt.Load())
	metric("fasd_predictions_total", "counter", "Predictions served, by source.")
	st := s.e.Counters()
	fmt.Fprintf(&b, "fasd_predictions_total{source=\"view\"} %d\n", st.PredictionsView)
	fmt.Fprintf(&b, "fasd_predictions_total{source=\"cold\"} %d\n", st.PredictionsCold)
	fmt.Fprintf(&b, "fasd_predictions_total{source=\"approx\"} %d\n", st.PredictionsApprox)
	metric("fasd_subgraphs_computed_total", "counter", "Subgraphs sampled, debiased and classified.")
	fmt.Fprintf(&b, "fasd_subgraphs_computed_total %d\n", st.SubgraphsComputed)
	metric("fasd_subgraph_cache_requests_total", "counter", "Debiased-subgraph requests, by cache result.")
	fmt.Fprintf(&b, "fasd_subgraph_cache_requests_total{result=\"hit\"} %d\n", st.SubgraphCacheHits)
	fmt.Fprintf(&b, "fasd_subgraph_cache_requests_total{result=\"miss\"} %d\n", st.SubgraphCacheMisses)
	metric("fasd_subgraph_cache_entries", "gauge", "Debiased subgraphs in the in-memory cache.")
	fmt.Fprintf(&b, "fasd_subgraph_cache_entries %d\n", st.SubgraphCacheEntries)
	metric("fasd_subgraph_cache_bytes", "gauge", "Bytes of the cached debiased subgraphs.")
	fmt.Fprintf(&b, "fasd_subgraph_cache_bytes %d\n", st.SubgraphCacheBytes)
	metric("fasd_updates_total", "counter", "Graph updates applied.")
	fmt.Fprintf(&b, "fasd_updates_total %d\n", st.Updates)
	metric("fasd_refreshes_total", "counter", "Refreshes and materializations run.")
	fmt.Fprintf(&b, "fasd_refreshes_total %d\n", st.Refreshes)
	metric("fasd_storage_background_problems_total", "counter", "Background errors and warnings reported by the storage engine.")
	fmt.Fprintf(&b, "fasd_storage_background_problems_total{level=\"error\"} %d\n", st.StorageErrors)
	fmt.Fprintf(&b, "fasd_storage_background_problems_total{level=\"warning\"} %d\n", st.StorageWarnings)
	if vs, err := s.e.Status(); err == nil {
		metric("fasd_graph_version", "gauge", "Current graph version.")
		fmt.Fprintf(&b, "fasd_graph_version %d\n", vs.GraphVersion)
		metric("fasd_views_complete", "gauge", "1 when every root has a view.")
		c := 0
		if vs.Complete {
			c = 1
		}
		fmt.Fprintf(&b, "fasd_views_complete %d\n", c)
		metric("fasd_view_roots", "gauge", "Subgraphs with a stored record.")
		fmt.Fprintf(&b, "fasd_view_roots %d\n", vs.Roots)
		metric("fasd_dirty_roots", "gauge", "Subgraphs waiting for a refresh.")
		fmt.Fprintf(&b, "fasd_dirty_roots %d\n", vs.DirtyRoots)
		metric("fasd_stale_nodes", "gauge", "Nodes whose view may be out of date.")
		fmt.Fprintf(&b, "fasd_stale_nodes %d\n", vs.StaleNodes)
	}
	metric("fasd_uptime_seconds", "gauge", "Seconds since the handler was built.")
	fmt.Fprintf(&b, "fasd_uptime_seconds %g\n", time.Since(s.start).Seconds())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, b.String())
}

// NewServer returns an http.Server for the API over e with the timeouts
// of opts (ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout) and
// addr as its address; run it with Serve, or with ListenAndServe (which
// applies no connection limit: wrap the listener with LimitListener).
// On a non-loopback address (an empty host, 0.0.0.0, [::], a LAN address
// or a name other than localhost) it refuses options without a Token
// (ErrNoToken) and requires the token for every request; a listen host
// given by name is an allowed Host.
func NewServer(e *query.Engine, addr string, opts *Options) (*http.Server, error) {
	if err := opts.ValidateListen(addr); err != nil {
		return nil, err
	}
	o := opts.forListen(addr)
	return &http.Server{
		Addr:              addr,
		Handler:           NewHandler(e, &o),
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}, nil
}

// Serve serves the API on addr (an http.Server of NewServer, at most
// MaxConns connections at once) until ctx is done, then shuts down: it
// stops accepting, lets requests in flight finish for up to
// ShutdownTimeout, then cancels the requests still running (a stalled
// body, a long refresh), closes their connections and waits for their
// handlers to return (up to ShutdownTimeout again). Ending requests that
// way is not an error; a handler that outlives the second wait is. ready,
// if set, is called with the listening address once the socket is open;
// Options.Log, if set, receives a note of requests cut short.
func Serve(ctx context.Context, e *query.Engine, addr string, opts *Options, ready func(net.Addr)) error {
	srv, err := NewServer(e, addr, opts)
	if err != nil {
		return err
	}
	o := opts.withDefaults()
	// Requests run under base, cancelled when the shutdown deadline passes.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv.BaseContext = func(net.Listener) context.Context { return base }
	var running atomic.Int64
	h := srv.Handler
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		running.Add(1)
		defer running.Add(-1)
		h.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("httpapi: listen: %w", err)
	}
	ln = fairLimit(srv, ln, o.MaxConns, o.MaxConnsPerClient)
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc: // the server failed before shutdown
		return fmt.Errorf("httpapi: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), o.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		n := running.Load()
		cancelBase()
		err = srv.Close()
		if o.Log != nil {
			o.Log.Warn("shutdown: requests still running at the deadline were cancelled and their connections closed",
				"deadline", o.ShutdownTimeout, "requests", n)
		}
		deadline := time.Now().Add(o.ShutdownTimeout)
		for running.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n := running.Load(); n > 0 {
			err = errors.Join(err, fmt.Errorf("%d requests still running %v after they were cancelled", n, o.ShutdownTimeout))
		}
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("httpapi: shutdown: %w", err)
	}
	return nil
}
