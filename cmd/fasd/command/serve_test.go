package command

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
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

// httpJSON performs one request as a well-behaved client (with
// serveToken and, for other methods than GET, Content-Type
// application/json) and decodes the JSON answer.
func httpJSON(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + serveTestToken}}
	if method != http.MethodGet {
		h.Set("Content-Type", "application/json")
	}
	return httpJSONHeader(t, method, url, body, h)
}

// serveTestToken is the bearer token of the serve tests.
const serveTestToken = "serve-test-token-0123456789"

// httpJSONHeader performs one request with the headers h and decodes the
// JSON answer.
func httpJSONHeader(t *testing.T, method, url, body string, h http.Header) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	if host := h.Get("Host"); host != "" {
		req.Host = host // the client sends req.Host, not a Host header
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

	t.Setenv(tokenEnv, serveTestToken)
	base, errOut, cancel, done := startServeCommand(t, "serve", "--db", db, "--addr", "127.0.0.1:0", "--max-items", "2", "--max-body", "200")
	defer cancel()

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
	if d := errOut.String(); !strings.HasSuffix(d, "shut down\n") || strings.Contains(d, serveTestToken) ||
		!strings.Contains(d, "reads: open (loopback address); mutations: need the bearer token (from FASD_TOKEN)") {
		t.Errorf("diagnostics:\n%s", d)
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

// startServeCommand runs fasd with args (a serve command) until the test
// ends or cancel, and returns its base URL, diagnostics and result.
func startServeCommand(t *testing.T, args ...string) (string, *addrWriter, context.CancelFunc, chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var out bytes.Buffer
	errOut := &addrWriter{addr: make(chan string, 1)}
	root := NewRoot(&out, errOut)
	root.SetArgs(args)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	select {
	case a := <-errOut.addr:
		return "http://" + a, errOut, cancel, done
	case err := <-done:
		t.Fatalf("serve ended before listening: %v\n%s", err, errOut)
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not listen:\n%s", errOut)
	}
	return "", nil, nil, nil
}

// Ensure that fasd serve takes its token from --token-file or FASD_TOKEN
// (never printing it), requires it for mutations (401 with
// WWW-Authenticate), demands application/json (415), rejects a foreign
// Host (421), honours --read-only and --allow-host, refuses a non-loopback
// address without a token, and rejects bad security and timeout flags
// before opening the store.
func TestServeCommandSecurity(t *testing.T) {
	db := fixtureStore(t, "views")
	id := predictAll(t, db)[3].ID
	t.Setenv(tokenEnv, "")
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("  "+serveTestToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	edge := fmt.Sprintf(`{"edges":[[%d,%d]]}`, predictAll(t, db)[0].ID, predictAll(t, db)[1].ID)

	base, errOut, cancel, done := startServeCommand(t, "serve", "--db", db, "--addr", "127.0.0.1:0", "--token-file", tokenFile, "--allow-host", "fasd.internal")
	get := fmt.Sprintf("%s/v1/nodes/%d/prediction", base, id)
	for _, c := range []struct {
		name, method, url, body string
		h                       http.Header
		code                    int
		msg                     string
	}{
		{"read, no token", "GET", get, "", http.Header{}, 200, ""},
		{"mutation, no token", "POST", base + "/v1/edges", edge, http.Header{"Content-Type": {"application/json"}}, 401, "missing bearer token"},
		{"mutation, wrong token", "POST", base + "/v1/edges", edge,
			http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + serveTestToken + "0"}}, 401, "invalid bearer token"},
		{"text/plain", "POST", base + "/v1/edges", edge,
			http.Header{"Content-Type": {"text/plain"}, "Authorization": {"Bearer " + serveTestToken}}, 415, "send application/json"},
		{"mutation", "POST", base + "/v1/edges", edge,
			http.Header{"Content-Type": {"application/json; charset=utf-8"}, "Authorization": {"Bearer " + serveTestToken}}, 200, ""},
		{"allowed host", "GET", get, "", http.Header{"Host": {"fasd.internal:8080"}}, 200, ""},
		{"other host", "GET", get, "", http.Header{"Host": {"other.internal:8080"}}, 421, "not served here"},
	} {
		code, body := httpJSONHeader(t, c.method, c.url, c.body, c.h)
		if msg, _ := body["error"].(string); code != c.code || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: %d %v, want %d %q", c.name, code, body, c.code, c.msg)
		}
	}
	addr := strings.TrimPrefix(base, "http://")
	if resp := rawHTTP(t, addr, "GET /healthz HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"); !strings.HasPrefix(resp, "HTTP/1.1 421") {
		t.Errorf("foreign Host: %q", resp)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if d := errOut.String(); strings.Contains(d, serveTestToken) || strings.Contains(d, "warning") ||
		!strings.Contains(d, "mutations: need the bearer token (from --token-file "+tokenFile+")") {
		t.Errorf("diagnostics:\n%s", d)
	}

	// Read-only, token from the environment, a token file others can read
	// (warned about).
	t.Setenv(tokenEnv, serveTestToken)
	open := write("open-token", serveTestToken, 0o644)
	base, errOut, cancel, done = startServeCommand(t, "serve", "--db", db, "--addr", "127.0.0.1:0", "--read-only", "--token-file", open)
	code, body := httpJSON(t, "POST", base+"/v1/edges", edge)
	if msg, _ := body["error"].(string); code != 403 || !strings.Contains(msg, "read-only") {
		t.Errorf("read-only mutation: %d %v", code, body)
	}
	if code, body = httpJSON(t, "POST", base+"/v1/predict", fmt.Sprintf(`{"ids":[%d]}`, id)); code != 200 {
		t.Errorf("read-only read: %d %v", code, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if d := errOut.String(); !strings.Contains(d, "readable by other users") || !strings.Contains(d, "mutations: refused (--read-only)") || strings.Contains(d, serveTestToken) {
		t.Errorf("diagnostics:\n%s", d)
	}

	// --auth-reads on loopback.
	base, errOut, cancel, done = startServeCommand(t, "serve", "--db", db, "--addr", "127.0.0.1:0", "--auth-reads")
	if code, body = httpJSONHeader(t, "GET", fmt.Sprintf("%s/v1/nodes/%d/prediction", base, id), "", http.Header{}); code != 401 {
		t.Errorf("--auth-reads, read without the token: %d %v", code, body)
	}
	if code, body = httpJSON(t, "GET", fmt.Sprintf("%s/v1/nodes/%d/prediction", base, id), ""); code != 200 {
		t.Errorf("--auth-reads, read with the token: %d %v", code, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if d := errOut.String(); !strings.Contains(d, "reads: need the bearer token (--auth-reads)") {
		t.Errorf("diagnostics:\n%s", d)
	}

	// No token at all: mutations are disabled.
	t.Setenv(tokenEnv, "")
	base, errOut, cancel, done = startServeCommand(t, "serve", "--db", db, "--addr", "127.0.0.1:0")
	code, body = httpJSON(t, "POST", base+"/v1/refresh", "")
	if msg, _ := body["error"].(string); code != 403 || !strings.Contains(msg, "mutations are disabled") {
		t.Errorf("mutation without a configured token: %d %v", code, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if d := errOut.String(); !strings.Contains(d, "mutations: disabled (no token") {
		t.Errorf("diagnostics:\n%s", d)
	}

	checkErrCases(t, []errCase{
		{"0.0.0.0 without a token", []string{"serve", "--db", db, "--addr", "0.0.0.0:0"}, ExitUsage, `listen address "0.0.0.0:0" is not loopback: a bearer token is required`},
		{"empty host without a token", []string{"serve", "--db", db, "--addr", ":8080"}, ExitUsage, "--token-file F or FASD_TOKEN"},
		{"LAN address without a token", []string{"serve", "--db", db, "--addr", "192.168.1.5:8080"}, ExitUsage, "not loopback"},
		{"missing token file", []string{"serve", "--db", db, "--token-file", filepath.Join(dir, "absent")}, ExitUsage, "--token-file"},
		{"empty token file", []string{"serve", "--db", db, "--token-file", write("empty", " \n", 0o600)}, ExitUsage, "empty"},
		{"short token", []string{"serve", "--db", db, "--token-file", write("short", "abc\n", 0o600)}, ExitUsage, "3 characters, want at least 16"},
		{"token with a space", []string{"serve", "--db", db, "--token-file", write("space", "abcdefgh ijklmnopq", 0o600)}, ExitUsage, "character 9 is not printable"},
		{"allow-host with a port", []string{"serve", "--db", db, "--allow-host", "fasd.internal:80"}, ExitUsage, "has a port"},
		{"auth-reads without a token", []string{"serve", "--db", db, "--auth-reads"}, ExitUsage, "--auth-reads needs a token"},
		{"zero timeout", []string{"serve", "--db", db, "--read-timeout", "0s"}, ExitUsage, "--read-timeout 0s: want a positive duration"},
		{"negative conns", []string{"serve", "--db", db, "--max-conns", "-1"}, ExitUsage, "limits must not be negative"},
	})
	// A short token from the environment, also not echoed.
	t.Setenv(tokenEnv, "tiny-secret")
	if _, err, code := run(t, "serve", "--db", db); code != ExitUsage || !strings.Contains(err.Error(), "FASD_TOKEN: token: 11 characters") || strings.Contains(err.Error(), "tiny-secret") {
		t.Errorf("short token from the environment: %d %v", code, err)
	}
}

// rawHTTP writes raw on a new connection and returns what is read until
// the server closes it.
func rawHTTP(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	b, _ := io.ReadAll(c)
	return string(b)
}
