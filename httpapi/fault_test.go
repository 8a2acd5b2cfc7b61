package httpapi

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/fasd-db/fasd/query"
	"github.com/fasd-db/fasd/query/querytest"
)

// Ensure that on a full disk a mutation gets 507 Insufficient Storage
// with a JSON error, and every later one too, while reads and the health
// check go on answering 200 and the handler never panics.
func TestHandlerFullDisk507(t *testing.T) {
	var full atomic.Bool
	s := querytest.OpenMemFaulty(t, &full)
	querytest.NewGraph(t, s, 120, 3, 4, 21)
	e, err := query.Open("", &query.Options{Store: s, Model: querytest.NewModel(querytest.FeatureNames(3), 2, true), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.Materialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := NewHandler(e, &Options{Token: testToken, AllowedHosts: []string{"example.com"}})
	if code, body := do(t, h, "GET", "/v1/nodes/1000/prediction", ""); code != 200 {
		t.Fatalf("before: %d %v", code, body)
	}
	full.Store(true)
	for i, body := range []string{`{"edges":[[1000,1001]]}`, `{"edges":[[1002,1003]]}`} {
		code, resp := do(t, h, "POST", "/v1/edges", body)
		if code != 507 {
			t.Errorf("mutation %d on a full disk: %d %v, want 507", i, code, resp)
		} else if msg, _ := resp["error"].(string); msg == "" {
			t.Errorf("mutation %d: 507 without an error message", i)
		}
	}
	for _, path := range []string{"/v1/nodes/1000/prediction", "/healthz"} {
		if code, body := do(t, h, "GET", path, ""); code != 200 {
			t.Errorf("GET %s on a full disk: %d %v", path, code, body)
		}
	}
}
