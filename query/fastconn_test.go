package query

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
)

// startServe runs Serve on a loopback port for the test and returns its
// address and a stop function that checks the shutdown.
func startServe(t *testing.T, e *Engine) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, e, "127.0.0.1:0", &ServerOptions{ShutdownTimeout: 5 * time.Second}, func(a net.Addr) { addrc <- a })
	}()
	var addr string
	select {
	case a := <-addrc:
		addr = a.String()
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(8 * time.Second):
			t.Error("Serve did not return after shutdown")
		}
	}
	t.Cleanup(stop)
	return addr, stop
}

// materializedExt returns the external id of a node with a view.
func materializedExt(o *oracleResult) string {
	var u uint32
	for u = 0; o.counts[u] == 0; u++ {
	}
	return jsonNum(int64(1000 + u))
}

// Ensure that Serve answers every kind of request on one connection as
// net/http alone would: the hot path's answers equal the handler's, and
// requests it declines (with the rest of their connection) still get
// net/http's answers, in order, pipelined or split across writes.
func TestServeFastPathConversations(t *testing.T) {
	e, o, h := newTestServer(t)
	addr, _ := startServe(t, e)
	ext := materializedExt(o)
	path := "/v1/nodes/" + ext + "/prediction"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	want := rec.Body.String()
	if rec.Code != 200 || want == "" {
		t.Fatalf("handler: %d %q", rec.Code, want)
	}
	get := "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n"
	type answer struct {
		code int
		body string // "" means: the prediction
	}
	ok := answer{200, ""}
	cases := []struct {
		name   string
		writes []string
		want   []answer
		closed bool // the server closes the connection after the answers
	}{
		{"plain", []string{get}, []answer{ok}, false},
		{"pipelined", []string{get + get + get}, []answer{ok, ok, ok}, false},
		{"split head", []string{"GET " + path, " HTTP/1.1\r\nHo", "st: x\r\n", "\r\n"}, []answer{ok}, false},
		{"header case and spaces", []string{"GET " + path + " HTTP/1.1\r\nhOsT:   x \r\nUser-Agent: t\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"}, []answer{ok}, false},
		{"unknown node then fast", []string{"GET /v1/nodes/999999/prediction HTTP/1.1\r\nHost: x\r\n\r\n" + get}, []answer{{404, `"error"`}, ok}, false},
		{"post then get", []string{"POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
			jsonNum(int64(len(`{"ids":[`+ext+`]}`))) + "\r\n\r\n" + `{"ids":[` + ext + `]}` + get}, []answer{{200, `"predictions"`}, ok}, false},
		{"get then healthz", []string{get + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + get}, []answer{ok, {200, `"status"`}, ok}, false},
		{"connection close", []string{"GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"}, []answer{ok}, true},
		{"http/1.0", []string{"GET " + path + " HTTP/1.0\r\n\r\n"}, []answer{ok}, true},
		{"bare LF", []string{"GET " + path + " HTTP/1.1\nHost: x\n\n"}, []answer{ok}, false},
		{"no host", []string{"GET " + path + " HTTP/1.1\r\n\r\n"}, []answer{{400, ""}}, true},
		{"two hosts", []string{"GET " + path + " HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"}, []answer{{400, ""}}, true},
		{"long head", []string{"GET " + path + " HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", 2*fastHeaderMax) + "\r\n\r\n" + get}, []answer{ok, ok}, false},
		{"expect", []string{"GET " + path + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n"}, []answer{ok}, false},
		{"head method", []string{"HEAD " + path + " HTTP/1.1\r\nHost: x\r\n\r\n" + get}, []answer{{405, "-"}, ok}, false},
		{"query string", []string{"GET " + path + "?x=1 HTTP/1.1\r\nHost: x\r\n\r\n"}, []answer{ok}, false},
		{"folded header", []string{"GET " + path + " HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n"}, []answer{ok}, false}, // net/http unfolds it
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			for i, w := range c.writes {
				if i > 0 {
					time.Sleep(20 * time.Millisecond)
				}
				if _, err := io.WriteString(conn, w); err != nil {
					t.Fatal(err)
				}
			}
			br := bufio.NewReader(conn)
			for i, a := range c.want {
				method := "GET"
				if strings.HasPrefix(c.writes[0], "HEAD") && i == 0 {
					method = "HEAD"
				}
				resp, err := http.ReadResponse(br, &http.Request{Method: method})
				if err != nil {
					t.Fatalf("answer %d: %v", i, err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatalf("answer %d body: %v", i, err)
				}
				if resp.StatusCode != a.code {
					t.Fatalf("answer %d: status %d (%q), want %d", i, resp.StatusCode, body, a.code)
				}
				switch {
				case a.code == 200 && a.body == "":
					if string(body) != want || resp.Header.Get("Content-Type") != "application/json" || resp.ContentLength != int64(len(want)) {
						t.Fatalf("answer %d: %q %v, want %q", i, body, resp.Header, want)
					}
					if resp.Header.Get("Date") == "" {
						t.Fatalf("answer %d: no Date header", i)
					}
				case a.body != "" && a.body != "-":
					if !strings.Contains(string(body), a.body) {
						t.Fatalf("answer %d: %q lacks %q", i, body, a.body)
					}
				}
			}
			conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			n, err := br.Read(make([]byte, 1))
			var ne net.Error
			switch {
			case n > 0:
				t.Fatal("unexpected extra bytes after the answers")
			case c.closed && !errors.Is(err, io.EOF):
				t.Fatalf("connection not closed by the server: %v", err)
			case !c.closed && !(errors.As(err, &ne) && ne.Timeout()):
				t.Fatalf("connection closed by the server: %v", err)
			}
		})
	}
	// Every hot-path and router answer of the prediction route counted.
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `fasd_http_requests_total{route="prediction",code="200"} `) ||
		!strings.Contains(string(b), `fasd_http_requests_total{route="prediction",code="404"} 1`) {
		t.Fatalf("metrics:\n%s", b)
	}
}

// Ensure that shutdown closes idle keep-alive connections of both paths at
// once and lets a request in flight finish.
func TestServeFastPathShutdown(t *testing.T) {
	e, o, _ := newTestServer(t)
	addr, stop := startServe(t, e)
	get := "GET /v1/nodes/" + materializedExt(o) + "/prediction HTTP/1.1\r\nHost: x\r\n\r\n"
	dial := func(req string) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, req)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		return c, br
	}
	fastConn, fastR := dial(get)
	slowConn, slowR := dial("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	half, err := net.Dial("tcp", addr) // a request head that never ends
	if err != nil {
		t.Fatal(err)
	}
	defer half.Close()
	io.WriteString(half, "GET /v1/nodes/1/prediction HTTP/1.1\r\n")
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	stop()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("shutdown took %v with idle connections", d)
	}
	for name, r := range map[string]*bufio.Reader{"hot path": fastR, "net/http": slowR} {
		if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
			t.Errorf("%s connection after shutdown: %v, want EOF", name, err)
		}
	}
	_, _ = fastConn, slowConn
}

func TestReadFastHead(t *testing.T) {
	cases := []struct {
		head   string
		ok     bool
		id     int64
		closes bool
	}{
		{"GET /v1/nodes/12/prediction HTTP/1.1\r\nHost: a\r\n\r\n", true, 12, false},
		{"GET /v1/nodes/-7/prediction HTTP/1.1\r\nHOST: a\r\nconnection: CLOSE\r\n\r\n", true, -7, true},
		{"GET /v1/nodes/12/prediction HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", true, 12, false},
		{"GET /v1/nodes/12/prediction HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx", false, 0, false},
		{"GET /v1/nodes/12/prediction HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", false, 0, false},
		{"GET /v1/nodes/12/prediction HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\n\r\n", false, 0, false},
		{"GET /v1/nodes/12/prediction HTTP/1.1\r\nHost: a\r\nBad\r\n\r\n", false, 0, false},
		{"GET /v1/nodes/12/prediction HTTP/1.1\r\nHost: a\r\n: x\r\n\r\n", false, 0, false},
		{"GET /v1/nodes/12/prediction  HTTP/1.1\r\nHost: a\r\n\r\n", false, 0, false},
		{"GET /v1/nodes/1234567890123456789/prediction HTTP/1.1\r\nHost: a\r\n\r\n", false, 0, false},
		{"GET /v1/nodes/%31/prediction HTTP/1.1\r\nHost: a\r\n\r\n", false, 0, false},
		{"get /v1/nodes/1/prediction HTTP/1.1\r\nHost: a\r\n\r\n", false, 0, false},
		{"GET /v1/nodes/1/prediction HTTP/1.1\r\n", false, 0, false}, // incomplete: EOF
		{"\r\nGET /v1/nodes/1/prediction HTTP/1.1\r\nHost: a\r\n\r\n", false, 0, false},
	}
	for _, c := range cases {
		br := bufio.NewReaderSize(strings.NewReader(c.head), fastHeaderMax)
		n, id, closes, ok := readFastHead(br)
		if ok != c.ok || (ok && (id != c.id || closes != c.closes || n != strings.Index(c.head, "\r\n\r\n")+4)) {
			t.Errorf("%q: n %d id %d close %v ok %v; want id %d close %v ok %v", c.head, n, id, closes, ok, c.id, c.closes, c.ok)
		}
		if br.Buffered() > 0 {
			if b, _ := br.Peek(1); b[0] != c.head[0] {
				t.Errorf("%q: consumed input", c.head)
			}
		}
	}
}

// FuzzReadFastHead: the head parser never panics, never consumes input,
// and accepts only heads that an http.Server answers by calling its
// handler with a GET of the same node (and the same connection handling).
func FuzzReadFastHead(f *testing.F) {
	for _, s := range []string{
		"GET /v1/nodes/12/prediction HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /v1/nodes/-7/prediction HTTP/1.1\r\nHost: a:80\r\nConnection: close\r\n\r\n",
		"GET /v1/nodes/1/prediction HTTP/1.1\nHost: a\n\n",
		"GET /v1/nodes/0/prediction HTTP/1.1\r\nHost:\r\n\r\n",
		"POST /v1/predict HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, head string) {
		br := bufio.NewReaderSize(strings.NewReader(head), fastHeaderMax)
		n, id, closes, ok := readFastHead(br)
		if br.Buffered() > 0 && head != "" {
			if b, _ := br.Peek(1); b[0] != head[0] {
				t.Fatal("consumed input")
			}
		}
		if !ok {
			return
		}
		gotID, gotClose, code := netHTTPReads(t, head[:n])
		if code != 200 || gotID != id || gotClose != closes {
			t.Fatalf("accepted %q as id %d close %v; net/http: status %d, id %d, close %v", head[:n], id, closes, code, gotID, gotClose)
		}
	})
}

// netHTTPReads serves head on an http.Server over a pipe and reports the
// prediction id its handler saw, whether the server closes the connection,
// and the status.
func netHTTPReads(t *testing.T, head string) (id int64, closes bool, code int) {
	id = -1 << 62
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v, ok := predictionID(r); ok {
			id = v
		}
		w.WriteHeader(200)
	})}
	client, server := net.Pipe()
	defer client.Close()
	ln := newConnListener(nil)
	go srv.Serve(ln)
	defer srv.Close()
	ln.give(server)
	client.SetDeadline(time.Now().Add(5 * time.Second))
	go io.WriteString(client, head)
	resp, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		t.Fatalf("net/http on %q: %v", head, err)
	}
	resp.Body.Close()
	return id, resp.Close, resp.StatusCode
}
