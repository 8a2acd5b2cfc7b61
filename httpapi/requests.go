// Request bodies: their types and strict decoders (size and item limits,
// unknown fields, duplicate keys, trailing data).

package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/fasd-db/fasd/query"
)

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
// features (query.ExternalUpdate.Validate). It is for a caller that
// decodes without applying: the handler leaves the validation to
// query.Engine.ApplyExternal, which always does it.
func DecodeNodesRequest(r io.Reader, maxItems, dim int) (*NodesRequest, error) {
	u, err := decodeUpdateRequest(r, "nodes", maxItems)
	if err == nil {
		err = validate(u, dim)
	}
	if err != nil {
		return nil, err
	}
	return &NodesRequest{Nodes: u.Nodes, Clip: u.Clip, Units: units(u)}, nil
}

// DecodeEditsRequest decodes a PATCH /v1/nodes body (query.DecodeUpdate
// with edits only) and checks it like DecodeNodesRequest.
func DecodeEditsRequest(r io.Reader, maxItems, dim int) (*EditsRequest, error) {
	u, err := decodeUpdateRequest(r, "edits", maxItems)
	if err == nil {
		err = validate(u, dim)
	}
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
// nodes included). It does not validate the update (see validate).
func decodeUpdateRequest(r io.Reader, field string, maxItems int) (*query.ExternalUpdate, error) {
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
	return u, nil
}

// validate checks u against a graph of dim features
// (query.ExternalUpdate.Validate); its error is a 400.
func validate(u *query.ExternalUpdate, dim int) error {
	if err := u.Validate(dim); err != nil {
		return &httpError{http.StatusBadRequest, err}
	}
	return nil
}

func edgesOfNodes(u *query.ExternalUpdate) int {
	n := 0
	for _, nd := range u.Nodes {
		n += len(nd.Edges)
	}
	return n
}

// DecodeDeleteNodesRequest decodes and validates a DELETE /v1/nodes body
// (an id given twice is an error), like DecodeNodesRequest for a caller
// that decodes without applying.
func DecodeDeleteNodesRequest(r io.Reader, maxItems int) (*DeleteNodesRequest, error) {
	req, err := decodeDeleteNodesRequest(r, maxItems)
	if err == nil {
		err = validate(&query.ExternalUpdate{Delete: req.IDs}, 0)
	}
	if err != nil {
		return nil, err
	}
	return req, nil
}

// decodeDeleteNodesRequest decodes a DELETE /v1/nodes body without
// validating its ids.
func decodeDeleteNodesRequest(r io.Reader, maxItems int) (*DeleteNodesRequest, error) {
	var req DeleteNodesRequest
	if err := decodeJSON(r, &req); err != nil {
		return nil, err
	}
	if err := checkCount("ids", "id", len(req.IDs), maxItems); err != nil {
		return nil, err
	}
	return &req, nil
}
