package httpapi

import "testing"

// Ensure that a JSON body that repeats a key (encoding/json would keep the
// last value) is refused with 400 on every endpoint that takes a body, and
// that the same bodies without the repetition pass the JSON stage.
func TestHandlerDuplicateJSONKeys(t *testing.T) {
	h := newTestServer(t).h
	cases := []struct {
		method, path, body string
	}{
		{"POST", "/v1/predict", `{"ids":[1000],"ids":[1001]}`},
		{"POST", "/v1/predict", `{"ids":[1000],"IDS":[1001]}`},
		{"POST", "/v1/edges", `{"edges":[[1000,1001]],"edges":[[1000,1002]]}`},
		{"POST", "/v1/nodes", `{"nodes":[{"id":5000,"id":5001,"features":[0.5,0.5,0.5]}]}`},
		{"PATCH", "/v1/nodes", `{"edits":[{"id":1000,"label":0,"label":1}]}`},
		{"PATCH", "/v1/nodes/1000", `{"label":0,"label":1}`},
		{"DELETE", "/v1/nodes", `{"ids":[1000],"ids":[1001]}`},
	}
	for _, c := range cases {
		got, body := do(t, h, c.method, c.path, c.body)
		if got != 400 {
			t.Errorf("%s %s %s: %d, want 400 (%v)", c.method, c.path, c.body, got, body)
			continue
		}
		if msg, _ := body["error"].(string); msg == "" {
			t.Errorf("%s %s: no error message: %v", c.method, c.path, body)
		}
	}
}
