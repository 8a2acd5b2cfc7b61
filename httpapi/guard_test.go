package httpapi

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fasd-db/fasd/query"
)

// req is one request of a guard test; zero fields are left out.
type req struct {
	method, path, body string
	host, token, ctype string
}

func (q req) send(h http.Handler) *httptest.ResponseRecorder {
	r := httptest.NewRequest(q.method, q.path, strings.NewReader(q.body))
	if q.host != "" {
		r.Host = q.host
	}
	if q.token != "" {
		r.Header.Set("Authorization", q.token)
	}
	if q.ctype != "" {
		r.Header.Set("Content-Type", q.ctype)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// Ensure that the guard answers every request as documented: Host
// allow-list (421), bearer token for mutations and, when asked, reads
// (401 with WWW-Authenticate: Bearer), read-only and token-less servers
// (403), application/json for every body-carrying method (415), and that
// no refused request changes the store.
func TestGuard(t *testing.T) {
	a := newTestServer(t)
	e := a.e
	const json = "application/json"
	bearer := "Bearer " + testToken
	edge := `{"edges":[[1000,1001]]}`
	pred := `{"ids":[1000],"cold":false}`
	handlers := map[string]http.Handler{
		"token":    NewHandler(e, &Options{Token: testToken}),
		"no-token": NewHandler(e, nil),
		"readonly": NewHandler(e, &Options{Token: testToken, ReadOnly: true}),
		"all":      NewHandler(e, &Options{Token: testToken, AuthenticateReads: true}),
		"hosts":    NewHandler(e, &Options{Token: testToken, AllowedHosts: []string{"fasd.internal", "10.1.2.3"}}),
		"any-host": NewHandler(e, &Options{Token: testToken, AllowedHosts: []string{"*"}}),
	}
	get := "/v1/nodes/" + jsonNum(a.viewed) + "/prediction"
	cases := []struct {
		name    string
		handler string
		r       req
		code    int
		msg     string // part of the error message
		www     string // WWW-Authenticate
	}{
		// Authentication of mutations.
		{"unauthenticated edge add", "token", req{method: "POST", path: "/v1/edges", body: edge, ctype: json}, 401, "missing bearer token", `Bearer realm="fasd"`},
		{"unauthenticated edge delete", "token", req{method: "DELETE", path: "/v1/edges", body: edge, ctype: json}, 401, "missing bearer token", `Bearer realm="fasd"`},
		{"unauthenticated nodes", "token", req{method: "POST", path: "/v1/nodes", body: `{"nodes":[{"id":9,"features":[0,0,0]}]}`, ctype: json}, 401, "missing bearer token", `Bearer realm="fasd"`},
		{"unauthenticated refresh", "token", req{method: "POST", path: "/v1/refresh", ctype: json}, 401, "missing bearer token", `Bearer realm="fasd"`},
		{"unknown mutating route", "token", req{method: "PATCH", path: "/v1/nodes/1000", body: `{}`, ctype: json}, 401, "missing bearer token", `Bearer realm="fasd"`},
		{"wrong token", "token", req{method: "POST", path: "/v1/edges", body: edge, ctype: json, token: "Bearer " + testToken + "x"}, 401, "invalid bearer token", `Bearer realm="fasd", error="invalid_token"`},
		{"token prefix", "token", req{method: "POST", path: "/v1/edges", body: edge, ctype: json, token: bearer[:len(bearer)-1]}, 401, "invalid bearer token", `error="invalid_token"`},
		{"basic scheme", "token", req{method: "POST", path: "/v1/edges", body: edge, ctype: json, token: "Basic " + testToken}, 401, "missing bearer token", `Bearer`},
		{"empty bearer", "token", req{method: "POST", path: "/v1/edges", body: edge, ctype: json, token: "Bearer "}, 401, "missing bearer token", `Bearer`},
		{"lower-case scheme", "token", req{method: "POST", path: "/v1/refresh", ctype: json, token: "bearer " + testToken}, 200, "", ""},
		{"reads open on loopback", "token", req{method: "GET", path: get}, 200, "", ""},
		{"read POST open", "token", req{method: "POST", path: "/v1/predict", body: pred, ctype: json}, 200, "", ""},
		{"metrics open", "token", req{method: "GET", path: "/healthz"}, 200, "", ""},
		// Content type, checked after the token.
		{"text/plain", "token", req{method: "POST", path: "/v1/edges", body: edge, ctype: "text/plain", token: bearer}, 415, "not supported", ""},
		{"form", "token", req{method: "POST", path: "/v1/refresh", ctype: "application/x-www-form-urlencoded", token: bearer}, 415, "not supported", ""},
		{"multipart", "token", req{method: "DELETE", path: "/v1/edges", body: edge, ctype: "multipart/form-data; boundary=x", token: bearer}, 415, "not supported", ""},
		{"no content type", "token", req{method: "POST", path: "/v1/edges", body: edge, token: bearer}, 415, "missing content type", ""},
		{"bad charset", "token", req{method: "POST", path: "/v1/edges", body: edge, ctype: "application/json; charset=latin1", token: bearer}, 415, "charset=latin1", ""},
		{"malformed type", "token", req{method: "POST", path: "/v1/edges", body: edge, ctype: "application/json;;", token: bearer}, 415, "send application/json", ""},
		{"text/plain read POST", "token", req{method: "POST", path: "/v1/predict", body: pred, ctype: "text/plain"}, 415, "not supported", ""},
		{"charset utf-8", "token", req{method: "POST", path: "/v1/predict", body: pred, ctype: "application/json; charset=UTF-8"}, 200, "", ""},
		{"unauthenticated text/plain", "token", req{method: "POST", path: "/v1/edges", body: edge, ctype: "text/plain"}, 401, "missing bearer token", "Bearer"},
		// No token configured: mutations are disabled, reads work.
		{"no token: mutation", "no-token", req{method: "POST", path: "/v1/edges", body: edge, ctype: json, token: bearer}, 403, "mutations are disabled", ""},
		{"no token: read", "no-token", req{method: "POST", path: "/v1/predict", body: pred, ctype: json}, 200, "", ""},
		// Read-only: every mutation refused, token or not; reads work.
		{"read-only add", "readonly", req{method: "POST", path: "/v1/edges", body: edge, ctype: json, token: bearer}, 403, "read-only", ""},
		{"read-only delete", "readonly", req{method: "DELETE", path: "/v1/edges", body: edge, ctype: json, token: bearer}, 403, "read-only", ""},
		{"read-only nodes", "readonly", req{method: "POST", path: "/v1/nodes", body: `{"nodes":[{"id":9,"features":[0,0,0]}]}`, ctype: json, token: bearer}, 403, "read-only", ""},
		{"read-only refresh", "readonly", req{method: "POST", path: "/v1/refresh", ctype: json}, 403, "read-only", ""},
		{"read-only read", "readonly", req{method: "POST", path: "/v1/predict", body: pred, ctype: json}, 200, "", ""},
		// Every route behind the token.
		{"all: read without token", "all", req{method: "GET", path: get}, 401, "missing bearer token", "Bearer"},
		{"all: metrics without token", "all", req{method: "GET", path: "/metrics"}, 401, "missing bearer token", "Bearer"},
		{"all: read POST without token", "all", req{method: "POST", path: "/v1/predict", body: pred, ctype: json}, 401, "missing bearer token", "Bearer"},
		{"all: read with token", "all", req{method: "GET", path: get, token: bearer}, 200, "", ""},
		{"all: wrong token", "all", req{method: "GET", path: "/healthz", token: "Bearer nope"}, 401, "invalid bearer token", "invalid_token"},
		// Host allow-list, checked first.
		{"rebound name", "token", req{method: "GET", path: get, host: "evil.example:8080"}, 421, `evil.example:8080\" is not served here`, ""},
		{"rebound name mutation", "token", req{method: "POST", path: "/v1/edges", body: edge, ctype: json, token: bearer, host: "evil.example"}, 421, "not served here", ""},
		{"lan address", "token", req{method: "GET", path: get, host: "192.168.1.5:8080"}, 421, "not served here", ""},
		{"localhost", "token", req{method: "GET", path: get, host: "localhost:8080"}, 200, "", ""},
		{"localhost upper case, dot", "token", req{method: "GET", path: get, host: "LocalHost.:8080"}, 200, "", ""},
		{"127.0.0.1", "token", req{method: "GET", path: get, host: "127.0.0.1:8080"}, 200, "", ""},
		{"127.9.9.9 no port", "token", req{method: "GET", path: get, host: "127.9.9.9"}, 200, "", ""},
		{"[::1]", "token", req{method: "GET", path: get, host: "[::1]:8080"}, 200, "", ""},
		{"mapped 127.0.0.1", "token", req{method: "GET", path: get, host: "[::ffff:127.0.0.1]:8080"}, 200, "", ""},
		{"localhost suffix", "token", req{method: "GET", path: get, host: "localhost.evil.example"}, 421, "not served here", ""},
		{"allowed name", "hosts", req{method: "GET", path: get, host: "FASD.internal:443"}, 200, "", ""},
		{"allowed ip", "hosts", req{method: "GET", path: get, host: "10.1.2.3"}, 200, "", ""},
		{"other name", "hosts", req{method: "GET", path: get, host: "fasd.internal.evil.example"}, 421, "not served here", ""},
		{"any host", "any-host", req{method: "GET", path: get, host: "whatever.example"}, 200, "", ""},
		{"any host still needs the token", "any-host", req{method: "POST", path: "/v1/edges", body: edge, ctype: json, host: "whatever.example"}, 401, "missing bearer token", "Bearer"},
	}
	st0, err := e.Status()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.r.host == "" {
				c.r.host = "127.0.0.1:8080"
			}
			rec := c.r.send(handlers[c.handler])
			body := rec.Body.String()
			if rec.Code != c.code || !strings.Contains(body, c.msg) {
				t.Fatalf("%d %s, want %d %q", rec.Code, body, c.code, c.msg)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("content type %q", ct)
			}
			if got := rec.Header().Get("WWW-Authenticate"); c.www != "" && !strings.Contains(got, c.www) || c.www == "" && got != "" {
				t.Errorf("WWW-Authenticate %q, want %q", got, c.www)
			}
			if strings.Contains(body, testToken) {
				t.Errorf("the answer echoes the token: %s", body)
			}
		})
	}
	// No refused mutation reached the store (the one authenticated
	// refresh changes no graph version).
	st1, err := e.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st1.GraphVersion != st0.GraphVersion {
		t.Errorf("graph version %d → %d: a refused mutation changed the store", st0.GraphVersion, st1.GraphVersion)
	}
	rec := req{method: "GET", path: "/metrics", host: "localhost"}.send(handlers["token"])
	for _, want := range []string{
		`fasd_http_rejected_total{reason="auth"} 10`, `fasd_http_rejected_total{reason="content_type"} 7`,
		`fasd_http_rejected_total{reason="host"} 4`, `fasd_http_rejected_total{reason="read_only"} 0`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// Ensure that options are validated (token form, hosts, negative
// limits) without echoing the token, and that the loopback rule is the
// documented one.
func TestOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		o   Options
		msg string
	}{
		{Options{Token: "short"}, "5 characters, want at least 16"},
		{Options{Token: "has a space in the token"}, "character 4 is not printable"},
		{Options{Token: "tab\tin-the-token-1234"}, "character 4 is not printable"},
		{Options{Token: "ünicode-token-1234567"}, "character 1 is not printable"},
		{Options{AuthenticateReads: true}, "AuthenticateReads needs a Token"},
		{Options{Token: testToken, AllowedHosts: []string{"fasd.internal:8080"}}, "has a port"},
		{Options{Token: testToken, AllowedHosts: []string{""}}, "is not a host name"},
		{Options{Token: testToken, AllowedHosts: []string{"http://x"}}, "is not a host name"},
		{Options{MaxConns: -1}, "MaxConns -1"},
	} {
		err := c.o.Validate()
		if !errors.Is(err, query.ErrInvalid) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.msg)
		} else if c.o.Token != "" && strings.Contains(err.Error(), c.o.Token) {
			t.Errorf("the error echoes the token: %v", err)
		}
	}
	for _, o := range []Options{{Token: testToken, AllowedHosts: []string{"*", "::1", "[::1]", "fasd.internal"}}, {}} {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.1.2.3:0": true, "localhost:8080": true, "LOCALHOST:1": true, "[::1]:80": true,
		"0.0.0.0:8080": false, ":8080": false, "[::]:80": false, "192.168.1.5:80": false, "fasd.internal:80": false,
		"127.0.0.1": false, "": false, "localhost.evil.example:80": false, "[::ffff:127.0.0.1]:80": true, "[::ffff:10.0.0.1]:80": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
		err := (&Options{}).ValidateListen(addr)
		if want && err != nil || !want && !errors.Is(err, ErrNoToken) {
			t.Errorf("ValidateListen(%q) without a token: %v", addr, err)
		}
		if err := (&Options{Token: testToken}).ValidateListen(addr); err != nil {
			t.Errorf("ValidateListen(%q) with a token: %v", addr, err)
		}
	}
}

// served is a running Serve of a test.
type served struct {
	addr   string
	cancel context.CancelFunc
	done   chan error
}

// startServe runs Serve on addr until the test ends (or stop).
func startServe(t *testing.T, e *query.Engine, addr string, o *Options) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	s := &served{cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- Serve(ctx, e, addr, o, func(a net.Addr) { addrc <- a }) }()
	select {
	case a := <-addrc:
		s.addr = a.String()
	case err := <-s.done:
		t.Fatalf("serve ended before listening: %v", err)
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s
}

// stop cancels the server and returns Serve's error, once.
func (s *served) stop() error {
	s.cancel()
	if s.done == nil {
		return nil
	}
	err := <-s.done
	s.done = nil
	return err
}

// url is the address of path through 127.0.0.1 (also for a server on
// 0.0.0.0).
func (s *served) url(path string) string {
	_, port, _ := net.SplitHostPort(s.addr)
	return "http://127.0.0.1:" + port + path
}

// send performs one request with its own connection and returns the
// status and body.
func send(t *testing.T, method, url, body, token, ctype string) (int, string) {
	t.Helper()
	r, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// Ensure that the standard server refuses to listen on a non-loopback
// address without a token, and on one with a token requires it for every
// route, while the mutation rules (401, 415, read-only 403, Host 421)
// hold over real connections.
func TestServeAuthentication(t *testing.T) {
	a := newTestServer(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		called := false
		err := Serve(context.Background(), a.e, addr, &Options{ReadOnly: true}, func(net.Addr) { called = true })
		if !errors.Is(err, ErrNoToken) || called || !strings.Contains(err.Error(), addr) {
			t.Errorf("Serve(%q) without a token: %v (listening: %v)", addr, err, called)
		}
	}
	if _, err := NewServer(a.e, "192.168.1.5:8080", nil); !errors.Is(err, ErrNoToken) {
		t.Errorf("NewServer on a LAN address without a token: %v", err)
	}

	get := "/v1/nodes/" + jsonNum(a.viewed) + "/prediction"
	edge := `{"edges":[[1000,1001]]}`
	// All interfaces, with a token: everything needs it.
	s := startServe(t, a.e, "0.0.0.0:0", &Options{Token: testToken})
	for _, c := range []struct {
		method, path, body, token, ctype string
		code                             int
	}{
		{"GET", get, "", "", "", 401},
		{"GET", "/healthz", "", "", "", 401},
		{"GET", "/metrics", "", "wrong-token-0123456789", "", 401},
		{"GET", get, "", testToken, "", 200},
		{"POST", "/v1/edges", edge, "", "application/json", 401},
		{"POST", "/v1/edges", edge, testToken, "text/plain", 415},
		{"POST", "/v1/edges", edge, testToken, "application/json", 200},
	} {
		if code, body := send(t, c.method, s.url(c.path), c.body, c.token, c.ctype); code != c.code {
			t.Errorf("0.0.0.0: %s %s token %q %s: %d %s, want %d", c.method, c.path, c.token, c.ctype, code, body, c.code)
		}
	}
	// Loopback, read-only with a token.
	s = startServe(t, a.e, "127.0.0.1:0", &Options{Token: testToken, ReadOnly: true})
	for _, c := range []struct {
		method, path, body, token, ctype string
		code                             int
	}{
		{"GET", get, "", "", "", 200},
		{"POST", "/v1/edges", edge, testToken, "application/json", 403},
		{"DELETE", "/v1/edges", edge, testToken, "application/json", 403},
		{"POST", "/v1/refresh", "", testToken, "application/json", 403},
		{"POST", "/v1/predict", `{"ids":[1000]}`, "", "application/json", 200},
	} {
		if code, body := send(t, c.method, s.url(c.path), c.body, c.token, c.ctype); code != c.code {
			t.Errorf("read-only: %s %s: %d %s, want %d", c.method, c.path, code, body, c.code)
		}
	}
	// A rebound name in Host.
	resp := rawRequest(t, s.addr, "GET "+get+" HTTP/1.1\r\nHost: evil.example:8080\r\nConnection: close\r\n\r\n")
	if !strings.HasPrefix(resp, "HTTP/1.1 421") {
		t.Errorf("rebound Host: %q", resp)
	}
}

// rawRequest writes raw bytes on a new connection and returns everything
// read until the server closes it (bounded by 20 s).
func rawRequest(t *testing.T, addr, raw string) string {
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

// stalledPost opens a connection and sends an authenticated POST
// /v1/edges whose head announces 100 bytes of body but only part of it.
func stalledPost(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := "POST /v1/edges HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + testToken +
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"edges\":"
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	return c
}

// Ensure that a stalled body is answered 408 and its connection closed
// once the read timeout has passed, and not before.
func TestServeStalledBody(t *testing.T) {
	a := newTestServer(t)
	const timeout = 300 * time.Millisecond
	s := startServe(t, a.e, "127.0.0.1:0", &Options{Token: testToken, ReadTimeout: timeout})
	t0 := time.Now()
	c := stalledPost(t, s.addr)
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if el := time.Since(t0); el < timeout {
		t.Errorf("answered after %v, before the read timeout %v", el, timeout)
	}
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "read timeout") {
		t.Fatalf("stalled body: %d %s", resp.StatusCode, b)
	}
	var ne net.Error
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("connection still open after the 408: %v", err)
	}
}

// Ensure that Serve keeps at most MaxConns connections: with the limit
// taken by idle clients a new request is served at once, and the
// connection idle the longest is closed to make room (the other stays).
func TestServeConnectionLimit(t *testing.T) {
	a := newTestServer(t)
	s := startServe(t, a.e, "127.0.0.1:0", &Options{MaxConns: 2})
	var hold []net.Conn
	var readers []*bufio.Reader
	for range 2 {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// A complete request keeps the connection open, idle, afterwards.
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("held connection: %v %v", resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		hold, readers = append(hold, c), append(readers, br)
		time.Sleep(10 * time.Millisecond)
	}
	c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	begin := time.Now()
	resp, err := c.Get(s.url("/healthz"))
	if err != nil || resp.StatusCode != 200 || time.Since(begin) > time.Second {
		t.Fatalf("third connection: %v %v after %v, want 200 at once", resp, err, time.Since(begin))
	}
	resp.Body.Close()
	// The oldest idle connection was closed: reading it ends.
	hold[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := readers[0].ReadByte(); err == nil {
		t.Error("the oldest idle connection is still open")
	}
	io.WriteString(hold[1], "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
	if resp, err := http.ReadResponse(readers[1], nil); err != nil || resp.StatusCode != 200 {
		t.Errorf("the other held connection: %v %v", resp, err)
	}
}

// Ensure that shutting down with a stalled request returns promptly,
// without an error, and closes the stalled connection.
func TestServeShutdownStalled(t *testing.T) {
	a := newTestServer(t)
	const grace = 200 * time.Millisecond
	s := startServe(t, a.e, "127.0.0.1:0", &Options{Token: testToken, ShutdownTimeout: grace})
	c := stalledPost(t, s.addr)
	// Wait until the request is in its handler.
	for i := 0; ; i++ {
		_, body := send(t, "GET", s.url("/metrics"), "", "", "")
		if strings.Contains(body, "fasd_http_requests_in_flight 1\n") {
			break
		}
		if i == 2000 {
			t.Fatal("the stalled request never reached its handler")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t0 := time.Now()
	if err := s.stop(); err != nil {
		t.Fatalf("shutdown with a stalled request: %v", err)
	}
	if el := time.Since(t0); el > 5*time.Second {
		t.Errorf("shutdown took %v with a grace of %v", el, grace)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("stalled connection still open after shutdown (read %q)", b)
	}
}

// Ensure that the head timeout runs from the connection's start and, on a
// kept-alive connection, from the first bytes of the next request, well
// before the idle timeout.
func TestServeHeadTimeoutKeepAlive(t *testing.T) {
	a := newTestServer(t)
	const head, idle = 200 * time.Millisecond, 10 * time.Second
	s := startServe(t, a.e, "127.0.0.1:0", &Options{ReadHeaderTimeout: head, IdleTimeout: idle})
	// closedWithin reports how long the server took to close c.
	closedWithin := func(c net.Conn, r *bufio.Reader) time.Duration {
		t0 := time.Now()
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		// net/http closes the connection, answering 400 first when part
		// of a header line had arrived.
		if b, err := io.ReadAll(r); err != nil || len(b) != 0 && !strings.HasPrefix(string(b), "HTTP/1.1 400 ") && !strings.HasPrefix(string(b), "HTTP/1.1 408 ") {
			t.Fatalf("stalled head: read %q, %v; want the connection closed", b, err)
		}
		return time.Since(t0)
	}
	// First request: half a head right away.
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /healthz HTTP/1.1\r\nHo")
	if d := closedWithin(c, bufio.NewReader(c)); d >= idle {
		t.Errorf("first head: closed after %v", d)
	}
	// Second request on a kept-alive connection: one answer, then half a
	// head.
	c2, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	io.WriteString(c2, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
	r := bufio.NewReader(c2)
	c2.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("first request: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	io.WriteString(c2, "GET /healthz HTTP/1.1\r\nHo")
	if d := closedWithin(c2, r); d >= idle {
		t.Errorf("kept-alive head: closed after %v, the idle timeout is %v", d, idle)
	}
}

// Ensure that hostOnly agrees with net.JoinHostPort for every form of
// host, and leaves a host without port as it is.
func TestHostOnly(t *testing.T) {
	for _, h := range []string{"localhost", "127.0.0.1", "::1", "fe80::1%eth0", "fasd.internal", "FASD.Internal.", "::ffff:127.0.0.1"} {
		for _, port := range []string{"80", "8080", ""} {
			hp := net.JoinHostPort(h, port)
			if got := hostOnly(hp); got != h {
				t.Errorf("hostOnly(%q) = %q, want %q", hp, got, h)
			}
		}
		if strings.Contains(h, ":") {
			if got := hostOnly("[" + h + "]"); got != h {
				t.Errorf("hostOnly([%s]) = %q", h, got)
			}
		} else if got := hostOnly(h); got != h {
			t.Errorf("hostOnly(%q) = %q", h, got)
		}
	}
}
