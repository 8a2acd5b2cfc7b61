package command

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// addrWriter collects diagnostics safely across goroutines and reports
// the address of the first "serving on http://ADDR" line.
type addrWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	addr chan string
	sent bool
}

func (w *addrWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.sent {
		for _, line := range strings.Split(w.buf.String(), "\n") {
			if a, ok := strings.CutPrefix(line, "serving on http://"); ok {
				w.addr <- strings.TrimSpace(a)
				w.sent = true
			}
		}
	}
	return len(p), nil
}

func (w *addrWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// testClient bounds every request of the serve test.
var testClient = &http.Client{Timeout: 20 * time.Second}

// httpJSON performs one request and decodes the JSON answer.
func httpJSON(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: %d %q: %v", method, url, resp.StatusCode, b, err)
	}
	return resp.StatusCode, out
}

// Ensure that fasd serve listens on the given address, answers /healthz,
// a prediction equal to fasd predict's, JSON errors under the configured
// limits and /metrics, and shuts down cleanly (releasing the store) when
// its context is cancelled; bad flags and stores fail before serving.
func TestServeCommand(t *testing.T) {
	db := fixtureStore(t, "views")
	id := predictAll(t, db)[3].ID
	want, err, _ := run(t, "predict", "--db", db, "--node", fmt.Sprint(id), "--json")
	if err != nil {
		t.Fatal(err)
	}
	var wantP predictionJSON
	decodeStrict(t, want, &wantP)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	errOut := &addrWriter{addr: make(chan string, 1)}
	root := NewRoot(&out, errOut)
	root.SetArgs([]string{"serve", "--db", db, "--addr", "127.0.0.1:0", "--max-items", "2", "--max-body", "200"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	var base string
	select {
	case a := <-errOut.addr:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("serve ended before listening: %v\n%s", err, errOut)
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not listen:\n%s", errOut)
	}

	code, body := httpJSON(t, "GET", base+"/healthz", "")
	views, _ := body["views"].(map[string]any)
	if code != 200 || body["status"] != "ok" || views["complete"] != true || views["model"] != wantP.Model {
		t.Errorf("healthz: %d %v", code, body)
	}
	code, body = httpJSON(t, "GET", fmt.Sprintf("%s/v1/nodes/%d/prediction", base, id), "")
	probs, _ := body["probs"].([]any)
	if code != 200 || body["source"] != "view" || body["id"] != float64(id) || len(probs) != 2 ||
		probs[0] != wantP.Probs[0] || probs[1] != wantP.Probs[1] || body["subgraphs"] != float64(wantP.Subgraphs) {
		t.Errorf("prediction: %d %v, fasd predict: %+v", code, body, wantP)
	}
	// The limit flags reach the handler.
	for _, c := range []struct {
		method, path, body string
		code               int
		msg                string
	}{
		{"POST", "/v1/predict", fmt.Sprintf(`{"ids":[%d,%d,%d]}`, id, id, id), 413, "at most 2"},
		{"POST", "/v1/edges", `{"edges":[` + strings.Repeat(`[1,2],`, 40) + `[1,2]]}`, 413, "over 200 bytes"},
		{"GET", "/v1/nodes/nope/prediction", "", 400, "not an integer"},
		{"GET", "/v1/nodes/12345/prediction", "", 404, "unknown node"},
	} {
		code, body := httpJSON(t, c.method, base+c.path, c.body)
		if msg, _ := body["error"].(string); code != c.code || !strings.Contains(msg, c.msg) {
			t.Errorf("%s %s: %d %v, want %d %q", c.method, c.path, code, body, c.code, c.msg)
		}
	}
	resp, err := testClient.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `fasd_http_requests_total{route="prediction",code="200"} 1`) {
		t.Errorf("metrics:\n%s", metrics)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not shut down")
	}
	if !strings.HasSuffix(errOut.String(), "shut down\n") {
		t.Errorf("diagnostics:\n%s", errOut)
	}
	if _, err := testClient.Get(base + "/healthz"); err == nil {
		t.Error("the server still answers after shutdown")
	}
	// The store was closed: another command can open it.
	if again, err, _ := run(t, "predict", "--db", db, "--node", fmt.Sprint(id), "--json"); err != nil || again != want {
		t.Errorf("predict after serve: %v\n%s", err, again)
	}

	checkErrCases(t, []errCase{
		{"negative body", []string{"serve", "--db", db, "--max-body", "-1"}, ExitUsage, "limits must not be negative"},
		{"negative items", []string{"serve", "--db", db, "--max-items", "-5"}, ExitUsage, "limits must not be negative"},
		{"bad items", []string{"serve", "--db", db, "--max-items", "lots"}, ExitUsage, "invalid argument"},
		{"bad addr", []string{"serve", "--db", db, "--addr", "127.0.0.1:port"}, ExitFailure, "listen"},
		{"no db", []string{"serve"}, ExitUsage, "--db DIR is required"},
		{"no store", []string{"serve", "--db", filepath.Join(t.TempDir(), "absent")}, ExitStoreState, "no store"},
		{"no model", []string{"serve", "--db", fixtureStore(t, "graph")}, ExitStoreState, "no trained models"},
	})
}
