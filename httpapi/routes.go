// The routes: NewHandler's http.ServeMux, the handler of each route, and
// the mapping of errors to status codes and JSON bodies.

package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query"
)

// server is the API behind the guard: the routes, their statistics and
// the prediction fast path (ServeHTTP).
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
// wrong bearer token), 403 (read-only, a replica engine, or mutations
// without a configured token), 404 (unknown or deleted node, or path), 405
// (method), 408 (body incomplete at the read timeout), 409 (the graph
// records no scaling), 413 (body or item count over the limits), 415 (not
// application/json), 421 (Host not allowed), 500.
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
	s := newServer(e, opts)
	return newGuard(s, &s.o, &s.rej)
}

// newServer builds the routes of NewHandler, without the guard.
func newServer(e *query.Engine, opts *Options) *server {
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
	return s
}

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

// jsonContentType is shared by every answer; net/http only reads it.
var jsonContentType = []string{"application/json"}

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
	case errors.Is(err, query.ErrReadOnly):
		return http.StatusForbidden
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

// nodes adds (POST), edits (PATCH) or deletes (DELETE) nodes. The body is
// decoded and counted here; ApplyExternal validates the update (a
// query.ErrInvalid error is a 400, see statusOf).
func (s *server) nodes(_ http.ResponseWriter, r *http.Request) (any, error) {
	var u *query.ExternalUpdate
	var err error
	switch r.Method {
	case http.MethodPost:
		u, err = decodeUpdateRequest(r.Body, "nodes", s.o.MaxItems)
	case http.MethodPatch:
		u, err = decodeUpdateRequest(r.Body, "edits", s.o.MaxItems)
	default:
		var req *DeleteNodesRequest
		if req, err = decodeDeleteNodesRequest(r.Body, s.o.MaxItems); err == nil {
			u = &query.ExternalUpdate{Delete: req.IDs}
		}
	}
	if err != nil {
		return nil, err
	}
	return s.e.ApplyExternal(r.Context(), *u)
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
