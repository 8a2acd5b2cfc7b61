package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query"
	"github.com/fasd-db/fasd/query/querytest"
)

// testAPI is a materialized engine over a random graph of 120 nodes
// (external ids 1000–1119) with the test model, and its handler.
type testAPI struct {
	e *query.Engine
	h http.Handler
	// viewed is a node served from its view; roots are the roots of the
	// subgraph set, nonRoot a node that roots none (-1 if none).
	viewed  int64
	roots   []int64
	nonRoot int64
}

func newTestServer(t *testing.T) *testAPI {
	t.Helper()
	ctx := context.Background()
	s := querytest.OpenMem(t, "")
	querytest.NewGraph(t, s, 120, 3, 4, 21)
	e, err := query.Open("", &query.Options{Store: s, Model: querytest.NewModel(querytest.FeatureNames(3), 2, true), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	// example.com is the Host of httptest.NewRequest with a bare path.
	a := &testAPI{e: e, h: NewHandler(e, &Options{MaxBodyBytes: 512, MaxItems: 5, Token: testToken, AllowedHosts: []string{"example.com"}}),
		viewed: -1, nonRoot: -1}
	for p, err := range e.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if a.viewed < 0 && p.Subgraphs > 0 {
			a.viewed = int64(1000 + p.Node)
		}
	}
	for id := int64(1000); id < 1120; id++ {
		_, err := e.SubgraphExternal(ctx, id)
		switch {
		case err == nil:
			a.roots = append(a.roots, id)
		case errors.Is(err, query.ErrNotRoot):
			if a.nonRoot < 0 {
				a.nonRoot = id
			}
		default:
			t.Fatal(err)
		}
	}
	if a.viewed < 0 || len(a.roots) == 0 {
		t.Fatal("test graph without views or roots")
	}
	return a
}

// testToken is the bearer token of the test handlers.
const testToken = "test-token-0123456789"

// do sends one request as a well-behaved client would: with the bearer
// token and, unless the method is GET, Content-Type application/json.
func do(t *testing.T, h http.Handler, method, path, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s %s: content type %q", method, path, ct)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: body %q: %v", method, path, rec.Body.String(), err)
	}
	if rec.Code >= 400 {
		if msg, _ := out["error"].(string); msg == "" {
			t.Fatalf("%s %s: %d without an error message: %s", method, path, rec.Code, rec.Body.String())
		}
	}
	return rec.Code, out
}

func TestHandlerBadInputs(t *testing.T) {
	h := newTestServer(t).h
	big := `{"ids":[` + strings.Repeat("1000,", 200) + `1000]}`
	feat := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("0.5,", n), ",") + "]" }
	cases := []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/v1/nodes/abc/prediction", "", 400},
		{"GET", "/v1/nodes/12345678/prediction", "", 404},
		{"POST", "/v1/nodes/1000/prediction", "", 405},
		{"GET", "/v1/nowhere", "", 404},
		{"POST", "/v1/predict", `{`, 400},
		{"POST", "/v1/predict", `{"ids":[1000]} {}`, 400},
		{"POST", "/v1/predict", `{"ids":[1000],"extra":1}`, 400},
		{"POST", "/v1/predict", `{"ids":[]}`, 400},
		{"POST", "/v1/predict", `{"ids":["x"]}`, 400},
		{"POST", "/v1/predict", `{"ids":[1000,1001,1002,1003,1004,1005]}`, 413},
		{"POST", "/v1/predict", big, 413},
		{"POST", "/v1/predict", `{"ids":[424242]}`, 404},
		{"GET", "/v1/predict", ``, 405},
		{"POST", "/v1/edges", `{"edges":[[1000,1000]]}`, 400},
		{"POST", "/v1/edges", `{"edges":[[1000]]}`, 400},
		{"POST", "/v1/edges", `{"edges":[]}`, 400},
		{"POST", "/v1/edges", `{"edges":[[1000,99999]]}`, 404},
		{"PUT", "/v1/edges", `{"edges":[[1000,1001]]}`, 405},
		{"POST", "/v1/nodes", `{"nodes":[{"id":5000,"features":[1]}]}`, 400},
		{"POST", "/v1/nodes", `{"nodes":[{"id":5000,"features":` + feat(3) + `,"sensitive":2}]}`, 400},
		{"POST", "/v1/nodes", `{"nodes":[{"id":5000,"features":` + feat(3) + `,"split":"holdout"}]}`, 400},
		{"POST", "/v1/nodes", `{"nodes":[{"id":5000,"features":` + feat(3) + `,"edges":[5000]}]}`, 400},
		{"POST", "/v1/nodes", `{"nodes":[{"id":1000,"features":` + feat(3) + `}]}`, 400}, // duplicate id
		{"POST", "/v1/nodes", `{"nodes":[{"id":5000,"features":` + feat(3) + `,"edges":[777777]}]}`, 404},
		{"POST", "/v1/nodes", `{"nodes":[{"id":5000,"features":` + feat(3) + `,"color":1}]}`, 400},
		{"POST", "/v1/nodes", `{"nodes":[]}`, 400},
		{"POST", "/v1/nodes", `{"nodes":[{"id":5000,"features":` + feat(3) + `,"edges":[1,2,3,4,5,6]}]}`, 413},
		{"POST", "/v1/refresh", `{"now":true}`, 400},
		{"GET", "/v1/audit?set=everyone", "", 400},
		{"DELETE", "/healthz", "", 405},
		{"GET", "/v1/nodes/x/subgraph", "", 400},
		{"GET", "/v1/nodes/12345678/subgraph", "", 404},
		{"POST", "/v1/nodes/1000/subgraph", "", 405},
		{"POST", "/v1/nodes", `{"nodes":[{"id":5000,"features":[1e39,0,0]}]}`, 400},
		{"POST", "/v1/nodes", `{"nodes":[{"id":5000,"features":` + feat(3) + `,"label":-1,"split":"train"}]}`, 400},
		{"POST", "/v1/nodes", `{"nodes":[{"id":5000,"features":` + feat(3) + `}],"units":"feet"}`, 400},
		{"POST", "/v1/nodes", `{"nodes":[{"id":5000,"features":` + feat(3) + `}],"delete":[1000]}`, 400},
		{"PATCH", "/v1/nodes", `{"edits":[{"id":1000}]}`, 400},
		{"PATCH", "/v1/nodes", `{"edits":[{"id":1000,"label":2}]}`, 400},
		{"PATCH", "/v1/nodes", `{"edits":[{"id":1000,"features":[1]}]}`, 400},
		{"PATCH", "/v1/nodes", `{"edits":[{"id":424242,"label":1}]}`, 404},
		{"PATCH", "/v1/nodes", `{"nodes":[{"id":5000,"features":` + feat(3) + `}]}`, 400},
		{"PATCH", "/v1/nodes", `{"edits":[{"id":1000,"label":1},{"id":1001,"label":1},{"id":1002,"label":1},{"id":1003,"label":1},{"id":1004,"label":1},{"id":1005,"label":1}]}`, 413},
		{"DELETE", "/v1/nodes", `{"ids":[]}`, 400},
		{"DELETE", "/v1/nodes", `{"ids":[1000,1000]}`, 400},
		{"DELETE", "/v1/nodes", `{"ids":[1000,424242]}`, 404},
		{"DELETE", "/v1/nodes", `{"ids":[1,2,3,4,5,6]}`, 413},
		{"PUT", "/v1/nodes", `{"ids":[1000]}`, 405},
		{"GET", "/v1/nodes/1000", "", 405},
		{"DELETE", "/v1/nodes/x", "", 400},
		{"DELETE", "/v1/nodes/424242", "", 404},
		{"DELETE", "/v1/nodes/1000", `{"ids":[1]}`, 400},
		{"PATCH", "/v1/nodes/1000", `{"id":1001,"label":1}`, 400},
		{"PATCH", "/v1/nodes/1000", `{"label":1,"colour":2}`, 400},
		{"PATCH", "/v1/nodes/1000", `{"features":[1e39,0,0]}`, 400},
		{"PATCH", "/v1/nodes/424242", `{"label":1}`, 404},
	}
	for _, c := range cases {
		if got, body := do(t, h, c.method, c.path, c.body); got != c.want {
			t.Errorf("%s %s %.60s: %d, want %d (%v)", c.method, c.path, c.body, got, c.want, body)
		}
	}
}

// Ensure that nodes deleted and edited over HTTP round trip: a deleted
// node's prediction and second deletion answer 404 and its id can name a
// new node; an edit changes the node and its views turn stale until a
// refresh; a graph that recorded no scaling refuses features in the
// dump's units with 409 and takes stored ones.
func TestHandlerDeleteEditNodes(t *testing.T) {
	ctx := context.Background()
	s := querytest.OpenMem(t, "")
	g := querytest.NewGraph(t, s, 60, 3, 4, 5)
	e, err := query.Open("", &query.Options{Store: s, Model: querytest.NewModel(querytest.FeatureNames(3), 2, true), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.Materialize(ctx); err != nil {
		t.Fatal(err)
	}
	h := NewHandler(e, &Options{Token: testToken, AllowedHosts: []string{"example.com"}})
	if code, out := do(t, h, "DELETE", "/v1/nodes/1001", ""); code != 200 || out["nodes_deleted"] != 1.0 {
		t.Fatalf("DELETE: %d %v", code, out)
	}
	for _, req := range [][2]string{{"GET", "/v1/nodes/1001/prediction"}, {"DELETE", "/v1/nodes/1001"}, {"GET", "/v1/nodes/1001/subgraph"}} {
		if code, out := do(t, h, req[0], req[1], ""); code != 404 {
			t.Errorf("%s %s after delete: %d %v", req[0], req[1], code, out)
		}
	}
	if code, out := do(t, h, "POST", "/v1/nodes", `{"nodes":[{"id":1001,"features":[0.5,0,1],"sensitive":0,"label":1,"split":"test","edges":[1002]}]}`); code != 200 {
		t.Fatalf("re-adding a deleted id: %d %v", code, out)
	}
	if code, out := do(t, h, "PATCH", "/v1/nodes/1003", `{"features":[1,1,1],"sensitive":1}`); code != 200 || out["touched"] != 1.0 {
		t.Fatalf("PATCH: %d %v", code, out)
	}
	if code, out := do(t, h, "DELETE", "/v1/nodes", `{"ids":[1004,1005]}`); code != 200 || out["nodes_deleted"] != 2.0 {
		t.Fatalf("DELETE list: %d %v", code, out)
	}
	if code, out := do(t, h, "POST", "/v1/refresh", ""); code != 200 || out["complete"] != true {
		t.Fatalf("refresh: %d %v", code, out)
	}
	v, _ := g.View()
	u, _ := v.InternalID(1003)
	n, _ := v.Node(u)
	if err := v.Check(ctx); err != nil {
		t.Fatal(err)
	}
	v.Close()
	if n.Sensitive != 1 || n.Features[0] != 1 {
		t.Fatalf("edited node %+v", n)
	}
	// An old store: loaded (a load report) but no recorded scaling.
	b := s.NewBatch()
	if err := b.Set([]byte("Mload"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if code, out := do(t, h, "PATCH", "/v1/nodes/1003", `{"features":[0,0,0]}`); code != 409 {
		t.Fatalf("dump units without a recorded scaling: %d %v", code, out)
	}
	if code, out := do(t, h, "PATCH", "/v1/nodes/1003", `{"features":[0,0,0],"units":"stored"}`); code != 200 {
		t.Fatalf("stored units without a recorded scaling: %d %v", code, out)
	}
	if code, out := do(t, h, "PATCH", "/v1/nodes/1003", `{"label":0}`); code != 200 {
		t.Fatalf("an edit without features needs no scaling: %d %v", code, out)
	}
}

func TestHandlerFlow(t *testing.T) {
	ctx := context.Background()
	a := newTestServer(t)
	e, h := a.e, a.h
	// A node in some subgraph, served from its view: the engine's answer.
	want, err := e.PredictExternal(ctx, a.viewed)
	if err != nil {
		t.Fatal(err)
	}
	code, body := do(t, h, "GET", "/v1/nodes/"+jsonNum(a.viewed)+"/prediction", "")
	if code != 200 || body["source"] != "view" || body["id"].(float64) != float64(a.viewed) {
		t.Fatalf("prediction: %d %v", code, body)
	}
	if probs := body["probs"].([]any); probs[1].(float64) != want.Probs[1] {
		t.Fatalf("probs %v, engine %v", probs, want.Probs)
	}
	code, body = do(t, h, "POST", "/v1/predict", `{"ids":[1000,1001,1002],"cold":false}`)
	if code != 200 || len(body["predictions"].([]any)) != 3 {
		t.Fatalf("predict: %d %v", code, body)
	}
	// The debiased subgraph of a root, and 404 for a node that roots none.
	root := a.roots[0]
	code, body = do(t, h, "GET", "/v1/nodes/"+jsonNum(root)+"/subgraph", "")
	if code != 200 || body["root_id"].(float64) != float64(root) || len(body["x"].([]any)) != len(body["nodes"].([]any))*int(body["d"].(float64)) {
		t.Fatalf("subgraph: %d %v", code, body)
	}
	if a.nonRoot >= 0 {
		if code, body = do(t, h, "GET", "/v1/nodes/"+jsonNum(a.nonRoot)+"/subgraph", ""); code != 404 {
			t.Fatalf("subgraph of a non-root: %d %v", code, body)
		}
	}
	code, body = do(t, h, "POST", "/v1/edges", `{"edges":[[`+jsonNum(a.viewed)+`,1001],[1002,1003]]}`)
	if code != 200 {
		t.Fatalf("edges: %d %v", code, body)
	}
	code, body = do(t, h, "POST", "/v1/nodes", `{"nodes":[{"id":9000,"features":[0.1,0.2,0.3],"sensitive":1,"label":0,"split":"test","edges":[1000,9001]},{"id":9001,"features":[0,0,0]}]}`)
	if code != 200 || len(body["nodes_added"].([]any)) != 2 {
		t.Fatalf("nodes: %d %v", code, body)
	}
	// The new labelled node is a root: its prediction is computed cold.
	code, body = do(t, h, "GET", "/v1/nodes/9000/prediction", "")
	if code != 200 || body["source"] != "cold" || body["subgraphs"].(float64) < 1 {
		t.Fatalf("new node: %d %v", code, body)
	}
	code, body = do(t, h, "POST", "/v1/refresh", "")
	if code != 200 || body["complete"] != true {
		t.Fatalf("refresh: %d %v", code, body)
	}
	// Remove the edge between a root and the first other member of its
	// subgraph: the root expanded itself, so it must become dirty.
	var del string
	for _, r := range a.roots {
		d, err := e.SubgraphExternal(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.IDs) > 1 {
			del = `{"edges":[[` + jsonNum(r) + `,` + jsonNum(d.IDs[1]) + `]]}`
			break
		}
	}
	code, body = do(t, h, "DELETE", "/v1/edges", del)
	if code != 200 || body["edges_removed"].(float64) != 1 {
		t.Fatalf("delete edges %s: %d %v", del, code, body)
	}
	code, body = do(t, h, "GET", "/v1/audit?set=labelled", "")
	if code != 200 || body["fair"] == nil || body["variants"].(map[string]any)["no_diffusion"] == nil {
		t.Fatalf("audit: %d %v", code, body)
	}
	code, body = do(t, h, "GET", "/healthz", "")
	if code != 200 || body["status"] != "ok" {
		t.Fatalf("healthz: %d %v", code, body)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	text := rec.Body.String()
	for _, want := range []string{
		`fasd_http_requests_total{route="prediction",code="200"} 2`,
		`fasd_http_requests_total{route="edges",code="200"} 2`,
		"# TYPE fasd_subgraph_cache_entries gauge",
		"# TYPE fasd_dirty_roots gauge", `fasd_predictions_total{source="cold"} `,
		`fasd_storage_background_problems_total{level="error"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Fatalf("metrics lack %q:\n%s", want, text)
		}
	}
	if st, _ := e.Status(); st.DirtyRoots == 0 {
		t.Fatal("the edge deletion dirtied nothing")
	}
}

func jsonNum(x int64) string { b, _ := json.Marshal(x); return string(b) }

func TestServeGracefulShutdown(t *testing.T) {
	e := newTestServer(t).e
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, e, "127.0.0.1:0", nil, func(a net.Addr) { addrc <- a }) }()
	addr := <-addrc
	resp, err := http.Get("http://" + addr.String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no shutdown")
	}
}

// FuzzDecodeRequest feeds arbitrary bodies to every request decoder: none
// may panic, and an accepted request must satisfy the validation rules and
// survive an encode/decode round trip unchanged.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"ids":[1,2,3]}`, `{"ids":[1],"cold":false}`, `{"edges":[[1,2],[3,4]]}`,
		`{"nodes":[{"id":1,"features":[0.5,1],"sensitive":0,"label":1,"split":"test","edges":[2]}]}`,
		`{"nodes":[{"id":1,"features":[1e39,0]}]}`, `{}`, `[]`, `{"ids":null}`, "",
		`{"nodes":[{"id":1,"features":[3.4e38,0],"sensitive":1,"label":1}],"clip":true,"units":"stored"}`,
		`{"edits":[{"id":3,"features":[0.5,-2],"sensitive":-1,"label":0,"split":"none"}],"clip":true}`,
		`{"edits":[{"id":3,"label":-1,"split":"train"}]}`, `{"edits":[{"id":3}]}`,
		`{"ids":[4,5]}`, `{"ids":[4,4]}`, `{"delete":[1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const maxItems, dim = 8, 2
		if p, err := DecodePredictRequest(bytes.NewReader(data), maxItems); err == nil {
			if len(p.IDs) == 0 || len(p.IDs) > maxItems {
				t.Fatalf("accepted %d ids", len(p.IDs))
			}
			roundTrip(t, p, func(b []byte) (any, error) { return DecodePredictRequest(bytes.NewReader(b), maxItems) })
		}
		if p, err := DecodeEdgesRequest(bytes.NewReader(data), maxItems); err == nil {
			for _, e := range p.Edges {
				if e[0] == e[1] {
					t.Fatal("accepted a self-loop")
				}
			}
			roundTrip(t, p, func(b []byte) (any, error) { return DecodeEdgesRequest(bytes.NewReader(b), maxItems) })
		}
		if p, err := DecodeNodesRequest(bytes.NewReader(data), maxItems, dim); err == nil {
			for _, n := range p.Nodes {
				if len(n.Features) != dim {
					t.Fatal("accepted a wrong feature count")
				}
				if n.Sensitive < -1 || n.Sensitive > 1 || n.Label < -1 || n.Label > 1 || n.Split > index.SplitTest {
					t.Fatalf("accepted node %+v", n)
				}
			}
			roundTrip(t, p, func(b []byte) (any, error) { return DecodeNodesRequest(bytes.NewReader(b), maxItems, dim) })
		}
		if p, err := DecodeEditsRequest(bytes.NewReader(data), maxItems, dim); err == nil {
			if len(p.Edits) == 0 || len(p.Edits) > maxItems {
				t.Fatalf("accepted %d edits", len(p.Edits))
			}
			for _, ed := range p.Edits {
				if (ed.Features != nil && len(ed.Features) != dim) || (ed.Features == nil && ed.Sensitive == nil && ed.Label == nil && ed.Split == nil) {
					t.Fatalf("accepted edit %+v", ed)
				}
			}
			roundTrip(t, p, func(b []byte) (any, error) { return DecodeEditsRequest(bytes.NewReader(b), maxItems, dim) })
		}
		if p, err := DecodeDeleteNodesRequest(bytes.NewReader(data), maxItems); err == nil {
			if len(p.IDs) == 0 || len(p.IDs) > maxItems {
				t.Fatalf("accepted %d ids", len(p.IDs))
			}
			roundTrip(t, p, func(b []byte) (any, error) { return DecodeDeleteNodesRequest(bytes.NewReader(b), maxItems) })
		}
	})
}

func roundTrip(t *testing.T, v any, decode func([]byte) (any, error)) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	w, err := decode(b)
	if err != nil {
		t.Fatalf("re-decoding %s: %v", b, err)
	}
	if !reflect.DeepEqual(v, w) {
		t.Fatalf("round trip changed %+v into %+v", v, w)
	}
}

// Ensure that the shortcut for GET /v1/nodes/{id}/prediction answers byte
// for byte what the router path answers for other spellings of the same
// request, that both count in the route's metrics, and that ids the
// shortcut declines still get the router's answer.
func TestHandlerPredictionShortcut(t *testing.T) {
	a := newTestServer(t)
	h := a.h
	ext := jsonNum(a.viewed)
	get := func(path string) (int, string, http.Header) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code, rec.Body.String(), rec.Header()
	}
	code, fast, hdr := get("/v1/nodes/" + ext + "/prediction")
	if code != 200 || hdr.Get("Content-Type") != "application/json" || !strings.HasSuffix(fast, "}\n") {
		t.Fatalf("fast path: %d %q %v", code, fast, hdr)
	}
	var p query.Prediction
	if err := json.Unmarshal([]byte(fast), &p); err != nil || p.Source != query.SourceView || p.ID != a.viewed {
		t.Fatalf("fast path body %q: %v", fast, err)
	}
	// Escaped ("%3d" is the digit d) or signed spellings go through the
	// router.
	for _, path := range []string{"/v1/nodes/%3" + ext + "/prediction", "/v1/nodes/+" + ext + "/prediction"} {
		if code, slow, _ := get(path); code != 200 || slow != fast {
			t.Errorf("%s: %d %q, fast path %q", path, code, slow, fast)
		}
	}
	for _, c := range []struct {
		path string
		code int
	}{
		{"/v1/nodes/-5/prediction", 404},
		{"/v1/nodes/1234567890123456789/prediction", 404},  // 19 digits: router
		{"/v1/nodes/99999999999999999999/prediction", 400}, // overflows int64
		{"/v1/nodes/12a/prediction", 400},
		{"/v1/nodes/1/2/prediction", 404},
	} {
		if code, body, _ := get(c.path); code != c.code || !strings.Contains(body, `"error":`) {
			t.Errorf("%s: %d %q, want %d", c.path, code, body, c.code)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		`fasd_http_requests_total{route="prediction",code="200"} 3`,
		`fasd_http_requests_total{route="prediction",code="404"} 2`,
		`fasd_http_requests_total{route="prediction",code="400"} 2`,
		`fasd_http_request_duration_seconds_count{route="prediction"} 7`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %q:\n%s", want, rec.Body.String())
		}
	}
}

// Ensure that the shared Date header is the HTTP date of the given second
// and is reused within it.
func TestDateFor(t *testing.T) {
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 100, time.FixedZone("X", 3600))
	a := dateFor(t0)
	if a[0] != "Wed, 04 Mar 2026 04:06:07 GMT" {
		t.Fatalf("date %q", a[0])
	}
	if b := dateFor(t0.Add(500 * time.Millisecond)); &b[0] != &a[0] {
		t.Error("not reused within the second")
	}
	if c := dateFor(t0.Add(time.Second)); c[0] != "Wed, 04 Mar 2026 04:06:08 GMT" {
		t.Errorf("next second: %q", c[0])
	}
}

// Ensure that NewServer configures the standard server's timeouts and
// limits, with defaults for zero fields, and that negative options are
// refused.
func TestNewServerTimeouts(t *testing.T) {
	e := newTestServer(t).e
	srv, err := NewServer(e, "127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	if srv.ReadHeaderTimeout != 10*time.Second || srv.ReadTimeout != time.Minute || srv.WriteTimeout != 10*time.Minute ||
		srv.IdleTimeout != 2*time.Minute || srv.MaxHeaderBytes != 64<<10 || srv.Handler == nil {
		t.Fatalf("defaults: %+v", srv)
	}
	srv, err = NewServer(e, "127.0.0.1:0", &Options{ReadHeaderTimeout: time.Second, ReadTimeout: 2 * time.Second,
		WriteTimeout: 3 * time.Second, IdleTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if srv.ReadHeaderTimeout != time.Second || srv.ReadTimeout != 2*time.Second || srv.WriteTimeout != 3*time.Second || srv.IdleTimeout != 4*time.Second {
		t.Fatalf("overrides: %+v", srv)
	}
	if _, err := NewServer(e, "", &Options{IdleTimeout: -1, MaxItems: -2}); !errors.Is(err, query.ErrInvalid) ||
		!strings.Contains(err.Error(), "IdleTimeout") || !strings.Contains(err.Error(), "MaxItems") {
		t.Fatalf("negative options: %v", err)
	}
}

// Ensure that Serve runs the standard server with its header timeout: a
// client that sends half a request head and stalls is disconnected, while
// a keep-alive client gets several answers over one connection.
func TestServeHeaderTimeout(t *testing.T) {
	a := newTestServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, a.e, "127.0.0.1:0", &Options{ReadHeaderTimeout: 100 * time.Millisecond}, func(a net.Addr) { addrc <- a })
	}()
	addr := (<-addrc).String()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	// Closed either way: an orderly close (EOF, maybe after a 408) or, when
	// the server closes with the half head unread, a reset.
	if b, err := io.ReadAll(c); err != nil && !errors.Is(err, syscall.ECONNRESET) || len(b) != 0 && !strings.HasPrefix(string(b), "HTTP/1.1 408") {
		t.Fatalf("stalled head: read %q, %v; want the connection closed", b, err)
	}
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	for range 3 {
		resp, err := client.Get("http://" + addr + "/v1/nodes/" + jsonNum(a.viewed) + "/prediction")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"source":"view"`) {
			t.Fatalf("prediction: %d %s", resp.StatusCode, b)
		}
	}
}

// TestStatusOfInvalid: an update refused by query's validation (which the
// handler leaves to ApplyExternal) answers 400, wrapped or not.
func TestStatusOfInvalid(t *testing.T) {
	u := query.ExternalUpdate{Delete: []int64{7, 7}}
	err := u.Validate(0)
	if !errors.Is(err, query.ErrInvalid) {
		t.Fatalf("Validate: %v, want query.ErrInvalid", err)
	}
	for _, e := range []error{err, fmt.Errorf("apply: %w", err)} {
		if got := statusOf(e); got != http.StatusBadRequest {
			t.Errorf("statusOf(%v) = %d, want 400", e, got)
		}
	}
}
