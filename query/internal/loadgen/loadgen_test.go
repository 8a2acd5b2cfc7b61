package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// counter serves /ok/N with 200 and a body of N bytes, /missing with 404,
// /close with 200 and Connection: close, /chunked with a chunked body,
// /slow after 20 ms; it counts every request it sees.
func counter(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		switch {
		case strings.HasPrefix(r.URL.Path, "/ok/"):
			k, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/ok/"))
			w.Write([]byte(strings.Repeat("x", k)))
		case r.URL.Path == "/close":
			w.Header().Set("Connection", "close")
			w.Write([]byte("bye"))
		case r.URL.Path == "/chunked":
			w.Write([]byte("a"))
			w.(http.Flusher).Flush()
			w.Write([]byte("b"))
		case r.URL.Path == "/slow":
			time.Sleep(20 * time.Millisecond)
			w.Write([]byte("z"))
		default:
			http.Error(w, "no", http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func addr(srv *httptest.Server) string { return strings.TrimPrefix(srv.URL, "http://") }

// Ensure that Run sends exactly the requested number of requests, with
// and without pipelining, reads every body and counts statuses.
func TestRunCounts(t *testing.T) {
	for _, pipe := range []int{1, 3} {
		t.Run(fmt.Sprintf("pipeline=%d", pipe), func(t *testing.T) {
			srv, seen := counter(t)
			res, err := Run(context.Background(), Config{
				Addr: addr(srv), Conns: 4, Requests: 301, Duration: time.Minute, Pipeline: pipe,
				Path: func(i int) string {
					if i%10 == 0 {
						return "/missing"
					}
					return fmt.Sprintf("/ok/%d", i%7)
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != 301 || seen.Load() != 301 || res.Status[404] != 31 || res.OK() != 270 {
				t.Fatalf("result %+v, server saw %d", res, seen.Load())
			}
			if res.PerSec <= 0 || res.P50 <= 0 || res.P99 < res.P50 || res.Bytes < 270*40 {
				t.Errorf("result %+v", res)
			}
		})
	}
}

// Ensure that a Connection: close answer makes the worker reconnect.
func TestRunReconnects(t *testing.T) {
	srv, seen := counter(t)
	res, err := Run(context.Background(), Config{Addr: addr(srv), Conns: 2, Requests: 40, Duration: time.Minute,
		Path: func(i int) string { return "/close" }})
	if err != nil || res.OK() != 40 || seen.Load() != 40 {
		t.Fatalf("%v %+v, server saw %d", err, res, seen.Load())
	}
}

// Ensure that the duration bounds a run that would take longer.
func TestRunDurationBound(t *testing.T) {
	srv, _ := counter(t)
	t0 := time.Now()
	res, err := Run(context.Background(), Config{Addr: addr(srv), Conns: 2, Requests: 1_000_000, Duration: 150 * time.Millisecond,
		Path: func(int) string { return "/slow" }})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el > 5*time.Second || res.Requests == 0 || res.Requests > 40 {
		t.Fatalf("%d requests in %s", res.Requests, el)
	}
}

// Ensure that bad configs, other hosts and unsupported responses are
// rejected with the package's errors.
func TestRunErrors(t *testing.T) {
	srv, _ := counter(t)
	path := func(int) string { return "/chunked" }
	_, err := Run(context.Background(), Config{Addr: addr(srv), Requests: 3, Duration: time.Minute, Path: path})
	if !errors.Is(err, ErrProtocol) {
		t.Errorf("chunked response: %v", err)
	}
	ok := func(int) string { return "/ok/1" }
	for _, c := range []struct {
		cfg  Config
		want error
	}{
		{Config{Addr: "10.1.2.3:80", Requests: 1, Duration: time.Second, Path: ok}, ErrNotLoopback},
		{Config{Addr: "example.com:80", Requests: 1, Duration: time.Second, Path: ok}, ErrNotLoopback},
		{Config{Addr: addr(srv), Duration: time.Second, Path: ok}, ErrConfig},
		{Config{Addr: addr(srv), Requests: 1, Path: ok}, ErrConfig},
		{Config{Addr: addr(srv), Requests: 1, Duration: time.Hour, Path: ok}, ErrConfig},
		{Config{Addr: addr(srv), Requests: 1, Duration: time.Second}, ErrConfig},
		{Config{Addr: addr(srv), Requests: 1, Duration: time.Second, Path: ok, Conns: -1}, ErrConfig},
		{Config{Addr: addr(srv), Requests: 1, Duration: time.Second, Path: ok, Pipeline: 1000}, ErrConfig},
	} {
		if _, err := Run(context.Background(), c.cfg); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v, want %v", c.cfg, err, c.want)
		}
	}
	for _, a := range []string{"127.0.0.1:1", "[::1]:8080", "localhost:80", "127.9.9.9:5"} {
		if err := CheckLoopback(a); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
}

// Ensure that ProcessCPU grows when the process works.
func TestProcessCPU(t *testing.T) {
	c0 := ProcessCPU()
	x := 0
	for i := range 50_000_000 {
		x ^= i * i
	}
	if c1 := ProcessCPU(); c1 <= c0 || x == 1 {
		t.Errorf("CPU %s → %s", c0, c1)
	}
}
