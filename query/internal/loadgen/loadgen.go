package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasd-db/fasd/query/internal/ascii"
)

// Sentinel errors.
var (
	// ErrConfig reports an invalid Config.
	ErrConfig = errors.New("loadgen: invalid config")
	// ErrNotLoopback is returned for an address that is not a loopback
	// address.
	ErrNotLoopback = errors.New("loadgen: not a loopback address")
	// ErrProtocol reports a response loadgen cannot parse.
	ErrProtocol = errors.New("loadgen: malformed response")
)

// Caps on a run.
const (
	MaxRequests = 100_000_000
	MaxDuration = 10 * time.Minute
	MaxConns    = 4096
	MaxPipeline = 256
)

// Config describes one run. Requests and Duration are both required.
type Config struct {
	// Addr is the server's host:port; the host must be a loopback IP
	// (127.0.0.0/8 or ::1) or "localhost".
	Addr string
	// Conns is the number of keep-alive connections, each driven by one
	// goroutine; 0 means 32.
	Conns int
	// Requests is the total number of requests (at most MaxRequests).
	Requests int
	// Duration bounds the run (at most MaxDuration); requests not sent by
	// then are not sent.
	Duration time.Duration
	// Pipeline is the number of requests written back to back on a
	// connection before their responses are read; 0 or 1 means none.
	Pipeline int
	// Path returns the path (with query, if any) of request i. It is
	// called concurrently.
	Path func(i int) string
}

// Result summarises a run.
type Result struct {
	Requests int           // complete responses
	Status   map[int]int   // responses by status code
	Elapsed  time.Duration // from the first connection to the last response
	PerSec   float64       // Requests / Elapsed
	P50, P99 time.Duration // request latencies
	Bytes    int64         // response bytes read (headers and bodies)
}

// OK returns the number of 200 responses.
func (r *Result) OK() int { return r.Status[200] }

func (c *Config) validate() (Config, error) {
	o := *c
	if o.Conns == 0 {
		o.Conns = 32
	}
	if o.Pipeline == 0 {
		o.Pipeline = 1
	}
	var errs []error
	if o.Conns < 1 || o.Conns > MaxConns {
		errs = append(errs, fmt.Errorf("%w: Conns %d, want 1..%d", ErrConfig, o.Conns, MaxConns))
	}
	if o.Requests < 1 || o.Requests > MaxRequests {
		errs = append(errs, fmt.Errorf("%w: Requests %d, want 1..%d", ErrConfig, o.Requests, MaxRequests))
	}
	if o.Duration <= 0 || o.Duration > MaxDuration {
		errs = append(errs, fmt.Errorf("%w: Duration %s, want (0, %s]", ErrConfig, o.Duration, MaxDuration))
	}
	if o.Pipeline < 1 || o.Pipeline > MaxPipeline {
		errs = append(errs, fmt.Errorf("%w: Pipeline %d, want 1..%d", ErrConfig, o.Pipeline, MaxPipeline))
	}
	if o.Path == nil {
		errs = append(errs, fmt.Errorf("%w: Path is nil", ErrConfig))
	}
	if err := CheckLoopback(o.Addr); err != nil {
		errs = append(errs, err)
	}
	return o, errors.Join(errs...)
}

// CheckLoopback returns ErrNotLoopback unless addr is host:port with a
// loopback host.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrNotLoopback, addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w: %q", ErrNotLoopback, addr)
	}
	return nil
}

// Run sends cfg.Requests GET requests over cfg.Conns connections, or as
// many as fit in cfg.Duration, and returns what it measured. It stops at
// the first transport or protocol error (returning it with the partial
// result) or when ctx is done.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	o, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	var next atomic.Int64
	workers := make([]*worker, o.Conns)
	var wg sync.WaitGroup
	errc := make(chan error, o.Conns)
	start := time.Now()
	for i := range workers {
		w := &worker{cfg: &o, next: &next, status: map[int]int{}}
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.run(ctx); err != nil {
				errc <- err
				cancel()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errc)
	res := &Result{Status: map[int]int{}, Elapsed: elapsed}
	var lat []time.Duration
	for _, w := range workers {
		res.Requests += w.done
		res.Bytes += w.bytes
		for c, n := range w.status {
			res.Status[c] += n
		}
		lat = append(lat, w.lat...)
	}
	if elapsed > 0 {
		res.PerSec = float64(res.Requests) / elapsed.Seconds()
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		res.P50, res.P99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	var errs []error
	for err := range errc {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return res, errors.Join(errs...)
	}
	return res, nil
}

// worker drives one connection.
type worker struct {
	cfg    *Config
	next   *atomic.Int64
	conn   net.Conn
	r      *bufio.Reader
	out    []byte
	done   int
	bytes  int64
	status map[int]int
	lat    []time.Duration
}

func (w *worker) dial(ctx context.Context) error {
	if w.conn != nil {
		w.conn.Close()
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", w.cfg.Addr)
	if err != nil {
		return fmt.Errorf("loadgen: %w", err)
	}
	w.conn = c
	if w.r == nil {
		w.r = bufio.NewReaderSize(c, 64<<10)
	} else {
		w.r.Reset(c)
	}
	return nil
}

func (w *worker) run(ctx context.Context) error {
	if err := w.dial(ctx); err != nil {
		return err
	}
	defer w.conn.Close()
	// Unblock reads and writes when the run ends.
	stop := context.AfterFunc(ctx, func() { w.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	n := int64(w.cfg.Requests)
	for ctx.Err() == nil {
		first := w.next.Add(int64(w.cfg.Pipeline)) - int64(w.cfg.Pipeline)
		if first >= n {
			return nil
		}
		batch := int(min(int64(w.cfg.Pipeline), n-first))
		w.out = w.out[:0]
		for i := range batch {
			w.out = append(w.out, "GET "...)
			w.out = append(w.out, w.cfg.Path(int(first)+i)...)
			w.out = append(w.out, " HTTP/1.1\r\nHost: "...)
			w.out = append(w.out, w.cfg.Addr...)
			w.out = append(w.out, "\r\n\r\n"...)
		}
		t0 := time.Now()
		if _, err := w.conn.Write(w.out); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("loadgen: write: %w", err)
		}
		closeConn := false
		for range batch {
			code, cl, err := w.readResponse()
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			w.done++
			w.status[code]++
			closeConn = closeConn || cl
		}
		w.lat = append(w.lat, time.Since(t0))
		if closeConn {
			if err := w.dial(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// readResponse reads one response; it returns the status code and whether
// the server asked to close the connection.
func (w *worker) readResponse() (code int, closeConn bool, err error) {
	line, err := w.line()
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.1 200 OK"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, fmt.Errorf("%w: status line %q", ErrProtocol, line)
	}
	code, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, fmt.Errorf("%w: status line %q", ErrProtocol, line)
	}
	length := -1
	for {
		h, err := w.line()
		if err != nil {
			return 0, false, err
		}
		if len(h) == 0 {
			break
		}
		k, v, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return 0, false, fmt.Errorf("%w: header %q", ErrProtocol, h)
		}
		v = bytes.TrimSpace(v)
		switch {
		case ascii.EqualFold(k, "content-length"):
			if length, err = strconv.Atoi(string(v)); err != nil || length < 0 {
				return 0, false, fmt.Errorf("%w: Content-Length %q", ErrProtocol, v)
			}
		case ascii.EqualFold(k, "transfer-encoding"):
			return 0, false, fmt.Errorf("%w: Transfer-Encoding %q is not supported", ErrProtocol, v)
		case ascii.EqualFold(k, "connection"):
			closeConn = ascii.EqualFold(v, "close")
		}
	}
	if length < 0 {
		return 0, false, fmt.Errorf("%w: no Content-Length", ErrProtocol)
	}
	m, err := w.r.Discard(length)
	w.bytes += int64(m)
	if err != nil {
		return 0, false, fmt.Errorf("loadgen: read body: %w", err)
	}
	return code, closeConn, nil
}

// line returns the next CRLF-terminated line without its terminator; the
// slice is valid until the next read.
func (w *worker) line() ([]byte, error) {
	b, err := w.r.ReadSlice('\n')
	w.bytes += int64(len(b))
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: header line over %d bytes", ErrProtocol, w.r.Size())
		}
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("loadgen: connection closed by the server: %w", io.ErrUnexpectedEOF)
		}
		return nil, fmt.Errorf("loadgen: read: %w", err)
	}
	b = b[:len(b)-1]
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b, nil
}
