package query

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasd-db/fasd/query/internal/loadgen"
)

// HTTP throughput benchmarks: GET /v1/nodes/{id}/prediction on 127.0.0.1
// against a materialized 5,000-node engine (the cheap test model; the
// cached path reads one view), random nodes with a view, b.N requests.
//
//	nethttp  server and a net/http client (16 keep-alive connections) in
//	         this process
//	inproc   server and the loadgen client (32 connections) in this process
//	split    server in a child process (this test binary, GOMAXPROCS=1),
//	         loadgen here with GOMAXPROCS=1: one core each; split/serve is
//	         Serve (the connection-level hot path of fastconn.go),
//	         split/std the same handler behind a plain http.Server
//
// Each reports req/s, latency percentiles and CPU time per request (the
// whole process; for split the server's and the client's separately), which
// is far less sensitive to other jobs on the machine than req/s.

const (
	httpBenchNodes = 5000
	httpBenchConns = 32
	// httpBenchMaxTime bounds every sub-benchmark run.
	httpBenchMaxTime = 3 * time.Minute
	envServerProcess = "FASD_HTTP_SERVER_PROCESS"
	// envServerProfile names a file for a CPU profile of the split
	// benchmark's server process during the load (optional).
	envServerProfile = "FASD_HTTP_SERVER_CPUPROFILE"
)

// discardWriter is a ResponseWriter that keeps only the status, for
// timing the handler without a network.
type discardWriter struct {
	h    http.Header
	code int
	n    int
}

func (w *discardWriter) Header() http.Header  { return w.h }
func (w *discardWriter) WriteHeader(code int) { w.code = code }
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = 200
	}
	w.n += len(b)
	return len(b), nil
}

// BenchmarkHTTPHandler: the handler alone (routing, engine lookup, JSON,
// metrics) for GET /v1/nodes/{id}/prediction, no network.
func BenchmarkHTTPHandler(b *testing.B) {
	e, nodes := benchEngine(b, httpBenchNodes)
	h := NewHandler(e, nil)
	paths := predictionPaths(nodes)
	reqs := make([]*http.Request, len(paths))
	for i, p := range paths {
		reqs[i] = httptest.NewRequest(http.MethodGet, p, nil)
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

func BenchmarkHTTPPredict(b *testing.B) {
	// The in-process server lives as long as this parent benchmark.
	var srv *httptest.Server
	var paths []string
	parent := b
	inproc := func(*testing.B) (string, []string) {
		if srv == nil {
			// Built on the parent so that its store outlives the
			// sub-benchmark that asked first.
			e, nodes := benchEngine(parent, httpBenchNodes)
			srv = httptest.NewServer(NewHandler(e, nil)) // 127.0.0.1
			paths = predictionPaths(nodes)
		}
		return srv.URL, paths
	}
	defer func() {
		if srv != nil {
			srv.Close()
		}
	}()
	b.Run("nethttp", func(b *testing.B) { benchHTTPNetHTTP(b, inproc) })
	b.Run("inproc", func(b *testing.B) { benchHTTPInProc(b, inproc) })
	b.Run("split/serve", func(b *testing.B) { benchHTTPSplit(b, false) })
	b.Run("split/std", func(b *testing.B) { benchHTTPSplit(b, true) })
}

// predictionPaths are the request paths of nodes (external id = 1000+u in
// the test graphs), shuffled with a fixed seed.
func predictionPaths(nodes []uint32) []string {
	p := make([]string, len(nodes))
	for i, u := range nodes {
		p[i] = "/v1/nodes/" + strconv.FormatInt(1000+int64(u), 10) + "/prediction"
	}
	rng := rand.New(rand.NewPCG(3, 3))
	rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

func reportLoad(b *testing.B, res *loadgen.Result, cpu time.Duration, prefix string) {
	b.ReportMetric(res.PerSec, "req/s")
	b.ReportMetric(float64(res.P50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(res.P99.Microseconds()), "p99-µs")
	if res.Requests > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(res.Requests), prefix+"cpu-µs/req")
	}
}

func runLoad(b *testing.B, addr string, paths []string) *loadgen.Result {
	b.Helper()
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		Addr: addr, Conns: httpBenchConns, Requests: b.N, Duration: httpBenchMaxTime,
		Path: func(i int) string { return paths[i%len(paths)] },
	})
	if err != nil {
		b.Fatal(err)
	}
	if res.OK() != b.N {
		b.Fatalf("%d of %d requests answered 200 (%v)", res.OK(), b.N, res.Status)
	}
	return res
}

// benchHTTPNetHTTP is the original setup: net/http's client, 16
// goroutines, in the server's process.
func benchHTTPNetHTTP(b *testing.B, server func(*testing.B) (string, []string)) {
	url, paths := server(b)
	tr := &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	const clients = 16
	var wg sync.WaitGroup
	errc := make(chan error, clients)
	lat := make([][]time.Duration, clients)
	b.ResetTimer()
	cpu0, start := loadgen.ProcessCPU(), time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < b.N; i += clients {
				t0 := time.Now()
				resp, err := client.Get(url + paths[i%len(paths)])
				if err != nil {
					errc <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errc <- fmt.Errorf("status %d", resp.StatusCode)
					return
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	el, cpu := time.Since(start), loadgen.ProcessCPU()-cpu0
	b.StopTimer()
	close(errc)
	for err := range errc {
		b.Fatal(err)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	reportPercentiles(b, all) // p50-ns, p99-ns
	b.ReportMetric(float64(b.N)/el.Seconds(), "req/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/req")
}

// benchHTTPInProc: the loadgen client in the server's process.
func benchHTTPInProc(b *testing.B, server func(*testing.B) (string, []string)) {
	url, paths := server(b)
	b.ResetTimer()
	cpu0 := loadgen.ProcessCPU()
	res := runLoad(b, strings.TrimPrefix(url, "http://"), paths)
	cpu := loadgen.ProcessCPU() - cpu0
	b.StopTimer()
	reportLoad(b, res, cpu, "")
}

// serverProcess is the child process serving the split benchmark.
var serverProcess struct {
	once sync.Once
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	addr string // Serve
	// addrStd is the handler behind a plain http.Server.
	addrStd string
	paths   []string
	err     error
}

// startServerProcess runs this test binary as the server (see
// TestHTTPServerProcess) with GOMAXPROCS=1. The child exits when its
// standard input closes, that is when this process ends.
func startServerProcess() error {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHTTPServerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envServerProcess+"=1", "GOMAXPROCS=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	p := &serverProcess
	p.cmd, p.in, p.out = cmd, in, bufio.NewReaderSize(out, 1<<20)
	for p.addr == "" || p.addrStd == "" || p.paths == nil {
		line, err := p.out.ReadString('\n')
		if err != nil {
			return fmt.Errorf("server process: %w", err)
		}
		switch k, v, _ := strings.Cut(strings.TrimSpace(line), " "); k {
		case "addr":
			p.addr = v
		case "addr-std":
			p.addrStd = v
		case "ids":
			var nodes []uint32
			for _, f := range strings.Split(v, ",") {
				u, err := strconv.ParseUint(f, 10, 32)
				if err != nil {
					return fmt.Errorf("server process: ids: %w", err)
				}
				nodes = append(nodes, uint32(u))
			}
			p.paths = predictionPaths(nodes)
		}
	}
	return nil
}

// serverCommand sends a command line to the child and returns its answer.
func serverCommand(cmd string) (string, error) {
	p := &serverProcess
	if _, err := io.WriteString(p.in, cmd+"\n"); err != nil {
		return "", err
	}
	line, err := p.out.ReadString('\n')
	if err != nil {
		return "", err
	}
	ans, ok := strings.CutPrefix(strings.TrimSpace(line), "ok")
	if !ok {
		return "", fmt.Errorf("server process: %s: %s", cmd, line)
	}
	return strings.TrimSpace(ans), nil
}

// serverCPU asks the child for its user and system CPU time.
func serverCPU() (user, sys time.Duration, err error) {
	ans, err := serverCommand("cpu")
	if err != nil {
		return 0, 0, err
	}
	_, err = fmt.Sscanf(ans, "%d %d", &user, &sys)
	return user, sys, err
}

// benchHTTPSplit: server and client on one core each, in two processes;
// std selects the handler behind a plain http.Server instead of Serve.
func benchHTTPSplit(b *testing.B, std bool) {
	serverProcess.once.Do(func() { serverProcess.err = startServerProcess() })
	if serverProcess.err != nil {
		b.Fatal(serverProcess.err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	u0, s0, err := serverCPU()
	if err != nil {
		b.Fatal(err)
	}
	prof := os.Getenv(envServerProfile)
	if prof != "" && b.N > 1 {
		if _, err := serverCommand("profile " + prof); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	c0 := loadgen.ProcessCPU()
	addr := serverProcess.addr
	if std {
		addr = serverProcess.addrStd
	}
	res := runLoad(b, addr, serverProcess.paths)
	client := loadgen.ProcessCPU() - c0
	b.StopTimer()
	if prof != "" && b.N > 1 {
		if _, err := serverCommand("stop"); err != nil {
			b.Fatal(err)
		}
	}
	u1, s1, err := serverCPU()
	if err != nil {
		b.Fatal(err)
	}
	reportLoad(b, res, u1-u0+s1-s0, "server-")
	b.ReportMetric(float64((u1-u0).Nanoseconds())/1e3/float64(res.Requests), "server-user-µs/req")
	b.ReportMetric(float64(client.Nanoseconds())/1e3/float64(res.Requests), "client-cpu-µs/req")
}

// TestHTTPServerProcess is not a test: it is the server of the split HTTP
// benchmark when this binary runs as its child process. It prints "addr
// HOST:PORT" and "ids U,U,…" (internal ids of nodes with a view), then
// answers commands on its standard input, one per line, with "ok [value]":
// "cpu" (its user and system CPU time in nanoseconds), "profile FILE" (start a CPU
// profile), "stop" (stop it). It exits when its standard input closes.
func TestHTTPServerProcess(t *testing.T) {
	if os.Getenv(envServerProcess) != "1" {
		t.Skip("the server of BenchmarkHTTPPredict/split, run as its child process")
	}
	e, nodes := benchEngine(t, httpBenchNodes)
	// The handler behind a plain http.Server ("std"), and Serve with its
	// connection-level hot path (the product).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: NewHandler(e, nil), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	go Serve(ctx, e, "127.0.0.1:0", nil, func(a net.Addr) { addrc <- a })
	ids := make([]string, len(nodes))
	for i, u := range nodes {
		ids[i] = strconv.FormatUint(uint64(u), 10)
	}
	fmt.Printf("addr %s\naddr-std %s\nids %s\n", <-addrc, ln.Addr(), strings.Join(ids, ","))
	in := bufio.NewScanner(os.Stdin)
	deadline := time.AfterFunc(30*time.Minute, func() { os.Exit(1) }) // never outlive a benchmark run
	defer deadline.Stop()
	var prof *os.File
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		var err error
		ans := ""
		switch cmd {
		case "cpu":
			u, s := loadgen.ProcessCPUSplit()
			ans = fmt.Sprintf("%d %d", u.Nanoseconds(), s.Nanoseconds())
		case "profile":
			if prof, err = os.Create(arg); err == nil {
				err = pprof.StartCPUProfile(prof)
			}
		case "stop":
			pprof.StopCPUProfile()
			if prof != nil {
				err = prof.Close()
			}
		default:
			err = fmt.Errorf("unknown command %q", cmd)
		}
		if err != nil {
			fmt.Printf("error %v\n", err)
			continue
		}
		fmt.Printf("ok %s\n", ans)
	}
}
