package query

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasd-db/fasd/query/internal/ascii"
)

// This file is the connection-level hot path of Serve. net/http spends most
// of a cached GET /v1/nodes/{id}/prediction on its own machinery (a
// background read per request to notice closed connections, header maps,
// several goroutine wake-ups) rather than on the answer, which is a view
// lookup of about 2 µs. Serve therefore reads requests itself first: as long
// as a keep-alive connection sends plain HTTP/1.1 GETs of that path which
// answer 200, it writes the responses directly (one read and one write
// system call per request, no goroutine besides the connection's). At the
// first request that is anything else, or is unusual in any way (HTTP/1.0,
// a body, Expect, a missing Host, bare-LF line ends, a header block over
// fastHeaderMax, an error answer), the connection with every byte not yet
// answered goes to the ordinary http.Server and stays there. So net/http
// decides every case but the common one, and the answers agree with it
// (tests compare them).

// fastHeaderMax bounds the request head the hot path reads; longer heads
// go to net/http (which answers 431 past its own limit).
const fastHeaderMax = 4096

// fastServer accepts connections, runs the hot path on them and hands the
// rest to an http.Server through handoff.
type fastServer struct {
	s       *server
	idle    time.Duration // read deadline while waiting for a request
	header  time.Duration // read deadline for the rest of a request head
	handoff *connListener

	ctx     context.Context // request context; cancelled at forced shutdown
	cancel  context.CancelFunc
	closing atomic.Bool
	mu      sync.Mutex
	conns   map[net.Conn]*fastConnState
	wg      sync.WaitGroup
}

// fastConnState tells shutdown whether a connection is answering a request
// (shutdown waits for it) or waits for or reads one (shutdown wakes it and
// it closes; a request whose head has not fully arrived is not in flight).
type fastConnState struct{ busy atomic.Bool }

func newFastServer(s *server, idle, header time.Duration, addr net.Addr) *fastServer {
	ctx, cancel := context.WithCancel(context.Background())
	return &fastServer{s: s, idle: idle, header: header, handoff: newConnListener(addr),
		ctx: ctx, cancel: cancel, conns: map[net.Conn]*fastConnState{}}
}

// acceptLoop serves ln until it is closed.
func (f *fastServer) acceptLoop(ln net.Listener) error {
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if f.closing.Load() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Transient (for example out of file descriptors): back off
				// as net/http does.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		st := &fastConnState{}
		f.mu.Lock()
		if f.closing.Load() {
			f.mu.Unlock()
			c.Close()
			return nil
		}
		f.conns[c] = st
		f.wg.Add(1)
		f.mu.Unlock()
		go f.serveConn(c, st)
	}
}

// shutdown stops the hot path: idle connections are closed, busy ones
// finish their request and close; it waits for them until ctx is done,
// then cancels the requests' context.
func (f *fastServer) shutdown(ctx context.Context) error {
	f.mu.Lock()
	f.closing.Store(true)
	for c, st := range f.conns {
		if !st.busy.Load() {
			// Wakes a reader blocked on the connection; the loop sees
			// closing and closes it.
			c.SetReadDeadline(time.Unix(1, 0))
		}
	}
	f.mu.Unlock()
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		f.cancel()
		f.mu.Lock()
		for c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
		<-done
		return ctx.Err()
	}
}

func (f *fastServer) forget(c net.Conn) {
	f.mu.Lock()
	delete(f.conns, c)
	f.mu.Unlock()
	f.wg.Done()
}

// serveConn runs the hot path on one connection until it closes or is
// handed to net/http.
func (f *fastServer) serveConn(c net.Conn, st *fastConnState) {
	br := bufio.NewReaderSize(c, fastHeaderMax)
	out, body := make([]byte, 0, 1024), make([]byte, 0, 512)
	for {
		// Setting a deadline and then checking closing pairs with
		// shutdown, which sets closing and then a past deadline: either
		// this loop sees closing or its read wakes up.
		c.SetReadDeadline(time.Now().Add(f.idle))
		if f.closing.Load() {
			break
		}
		if _, err := br.Peek(1); err != nil {
			// EOF, idle timeout, shutdown wake-up or a broken connection:
			// no request is lost.
			break
		}
		c.SetReadDeadline(time.Now().Add(f.header))
		if f.closing.Load() {
			break
		}
		head, id, closeAfter, ok := readFastHead(br)
		if !ok && f.closing.Load() {
			break // woken by shutdown in the middle of a head
		}
		if ok {
			st.busy.Store(true)
			t0 := time.Now()
			f.s.inflt.Add(1)
			var okAns bool
			out, body, okAns = f.s.fastAnswer(f.ctx, out, body, id, closeAfter, t0)
			f.s.inflt.Add(-1)
			if okAns {
				br.Discard(head)
				_, err := c.Write(out)
				f.s.pred.add(http.StatusOK, time.Since(t0))
				st.busy.Store(false)
				if err != nil || closeAfter {
					break
				}
				continue
			}
			st.busy.Store(false)
		}
		// Anything else: net/http takes the connection with the bytes
		// not yet answered (the head is still buffered).
		c.SetReadDeadline(time.Time{})
		f.forget(c)
		if !f.handoff.give(&bufferedConn{Conn: c, r: br}) {
			c.Close()
		}
		return
	}
	f.forget(c)
	c.Close()
}

// fastAnswer writes into dst the whole HTTP response for the prediction of
// external id (cached, or computed by the cold path), using body as
// scratch; false means the request should go to net/http (an error answer,
// or a prediction JSON cannot hold).
func (s *server) fastAnswer(ctx context.Context, dst, body []byte, id int64, closeAfter bool, now time.Time) (_, _ []byte, ok bool) {
	p, err := s.e.PredictExternal(ctx, id)
	if err != nil {
		return dst, body, false
	}
	if body, ok = appendPrediction(body[:0], &p); !ok {
		return dst, body, false
	}
	body = append(body, '\n')
	dst = append(dst[:0], "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: "...)
	dst = append(dst, dateFor(now)[0]...)
	if closeAfter {
		dst = append(dst, "\r\nConnection: close"...)
	}
	dst = append(dst, "\r\nContent-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...), body, true
}

// readFastHead parses the request head at the start of br without
// consuming it. It returns the head's length, the node id and whether the
// client asked to close, and ok only for a request the hot path answers:
//
//	GET /v1/nodes/ID/prediction HTTP/1.1   (ID as predictionID accepts)
//	CRLF line ends, exactly one Host, no Content-Length other than 0, no
//	Transfer-Encoding, no Expect, no folded lines, head ≤ fastHeaderMax.
//
// It reads more from the connection as needed; a read error yields !ok
// (net/http then sees the same error or the data that did arrive).
func readFastHead(br *bufio.Reader) (n int, id int64, closeAfter, ok bool) {
	var buf []byte
	pos := 0 // start of the current line
	line := 0
	hosts := 0
	for {
		buf, _ = br.Peek(br.Buffered())
		i := indexByteFrom(buf, pos, '\n')
		if i < 0 {
			if br.Buffered() >= fastHeaderMax {
				return 0, 0, false, false
			}
			if _, err := br.Peek(br.Buffered() + 1); err != nil {
				return 0, 0, false, false
			}
			continue
		}
		if i == pos || buf[i-1] != '\r' {
			return 0, 0, false, false // bare LF
		}
		l := buf[pos : i-1]
		pos = i + 1
		if line == 0 {
			var good bool
			if id, good = fastRequestLine(l); !good {
				return 0, 0, false, false
			}
			line++
			continue
		}
		line++
		if len(l) == 0 {
			if hosts != 1 {
				return 0, 0, false, false
			}
			return pos, id, closeAfter, true
		}
		if l[0] == ' ' || l[0] == '\t' {
			return 0, 0, false, false // obsolete line folding
		}
		colon := indexByteFrom(l, 0, ':')
		if colon <= 0 {
			return 0, 0, false, false
		}
		name, val := l[:colon], trimOWS(l[colon+1:])
		if !fastToken(name) || !fastFieldValue(val) {
			return 0, 0, false, false // net/http rejects these: let it answer
		}
		switch {
		case ascii.EqualFold(name, "host"):
			if !fastHost(val) {
				return 0, 0, false, false
			}
			hosts++
		case ascii.EqualFold(name, "content-length"):
			if string(val) != "0" {
				return 0, 0, false, false
			}
		case ascii.EqualFold(name, "transfer-encoding"), ascii.EqualFold(name, "expect"):
			return 0, 0, false, false
		case ascii.EqualFold(name, "connection"):
			switch {
			case ascii.EqualFold(val, "close"):
				closeAfter = true
			case ascii.EqualFold(val, "keep-alive"):
			default:
				return 0, 0, false, false // token lists: let net/http read them
			}
		}
	}
}

// fastRequestLine accepts "GET <prediction path> HTTP/1.1".
func fastRequestLine(l []byte) (int64, bool) {
	const get, proto = "GET ", " HTTP/1.1"
	if len(l) <= len(get)+len(proto) || string(l[:len(get)]) != get || string(l[len(l)-len(proto):]) != proto {
		return 0, false
	}
	return predictionPathID(string(l[len(get) : len(l)-len(proto)]))
}

// fastToken reports a non-empty header name of RFC 9110 token characters.
func fastToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// fastFieldValue reports a header value without control characters (tab
// allowed), as net/http requires.
func fastFieldValue(b []byte) bool {
	for _, c := range b {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// fastHost accepts the plain host[:port] spellings (letters, digits, '.',
// '-', '_', ':', '[', ']'); anything else goes to net/http, which checks
// Host itself.
func fastHost(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.' || c == '-' || c == '_' || c == ':' || c == '[' || c == ']':
		default:
			return false
		}
	}
	return true
}

func indexByteFrom(b []byte, from int, c byte) int {
	for i := from; i < len(b); i++ {
		if b[i] == c {
			return i
		}
	}
	return -1
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// bufferedConn is a connection whose first bytes wait in r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite lets net/http half-close as it does on a *net.TCPConn.
func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// connListener is the net.Listener through which the hot path hands
// connections to the http.Server.
type connListener struct {
	addr net.Addr
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newConnListener(addr net.Addr) *connListener {
	return &connListener{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

// give passes c to the http.Server; false if the listener is closed.
func (l *connListener) give(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return l.addr }
