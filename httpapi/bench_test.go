package httpapi

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/fasd-db/fasd/query"
	"github.com/fasd-db/fasd/query/querytest"
)

// benchNodes is the size of the benchmarks' graph.
const benchNodes = 5000

// benchEngine is a materialized engine over a random graph of benchNodes
// nodes with the cheap test model (the cached path reads one view), and
// the request paths of every node with a view, shuffled with a fixed seed.
func benchEngine(b *testing.B) (*query.Engine, []string) {
	b.Helper()
	s := querytest.OpenMem(b, "")
	querytest.NewGraph(b, s, benchNodes, 8, 10, 1)
	e, err := query.Open("", &query.Options{Store: s, Model: querytest.NewModel(querytest.FeatureNames(8), 1, true)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	if _, err := e.Materialize(context.Background()); err != nil {
		b.Fatal(err)
	}
	var paths []string
	for p, err := range e.All(context.Background()) {
		if err != nil {
			b.Fatal(err)
		}
		paths = append(paths, "/v1/nodes/"+strconv.FormatInt(1000+int64(p.Node), 10)+"/prediction")
	}
	rng := rand.New(rand.NewPCG(3, 3))
	rng.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	return e, paths
}

// discardWriter is a ResponseWriter that keeps only the status, for
// timing the handler without a network.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header  { return w.h }
func (w *discardWriter) WriteHeader(code int) { w.code = code }
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = 200
	}
	return len(b), nil
}

// BenchmarkHandlerPrediction: the handler alone (routing, engine lookup,
// JSON, metrics) for GET /v1/nodes/{id}/prediction, no network.
func BenchmarkHandlerPrediction(b *testing.B) {
	e, paths := benchEngine(b)
	h := NewHandler(e, nil)
	reqs := make([]*http.Request, len(paths))
	for i, p := range paths {
		reqs[i] = httptest.NewRequest(http.MethodGet, p, nil)
		reqs[i].Host = "127.0.0.1:8080" // passes the Host check like a real client
	}
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clear(w.h)
		w.code = 0
		h.ServeHTTP(w, reqs[i%len(reqs)])
		if w.code != 200 {
			b.Fatalf("status %d", w.code)
		}
	}
}

// BenchmarkPredictionFastPath justifies the fast path (fastpath.go): the
// same GET /v1/nodes/{id}/prediction requests, behind the same guard,
// through the handler with its fast path ("fast") and through the plain
// http.ServeMux and its reflective JSON encoding ("mux"), no network.
func BenchmarkPredictionFastPath(b *testing.B) {
	e, paths := benchEngine(b)
	s := newServer(e, nil)
	for _, p := range paths { // warm the engine's caches for both variants
		if _, err := e.PredictExternal(context.Background(), mustID(b, p)); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"fast", newGuard(s, &s.o, &s.rej)},
		{"mux", newGuard(s.mux, &s.o, &s.rej)},
	} {
		b.Run(c.name, func(b *testing.B) {
			reqs := make([]*http.Request, len(paths))
			for i, p := range paths {
				reqs[i] = httptest.NewRequest(http.MethodGet, p, nil)
				reqs[i].Host = "127.0.0.1:8080"
			}
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				clear(w.h)
				w.code = 0
				c.h.ServeHTTP(w, reqs[i%len(reqs)])
				if w.code != 200 {
					b.Fatalf("status %d", w.code)
				}
			}
		})
	}
}

// mustID is the node id of a prediction path.
func mustID(b *testing.B, path string) int64 {
	id, ok := predictionPathID(path)
	if !ok {
		b.Fatalf("%s is not a prediction path", path)
	}
	return id
}

// BenchmarkServePrediction: GET /v1/nodes/{id}/prediction through Serve
// (the standard server with fasd serve's timeouts) on 127.0.0.1, from a
// net/http client with 16 keep-alive connections in the same process;
// reports requests per second.
func BenchmarkServePrediction(b *testing.B) {
	e, paths := benchEngine(b)
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, e, "127.0.0.1:0", nil, func(a net.Addr) { addrc <- a }) }()
	base := "http://" + (<-addrc).String()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()
	const conns = 16
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}
	defer client.CloseIdleConnections()
	var next sync.Mutex
	i := 0
	b.ResetTimer()
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= b.N {
					return
				}
				resp, err := client.Get(base + paths[k%len(paths)])
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- &httpError{resp.StatusCode, io.ErrUnexpectedEOF}
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
