package httpapi

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Connection fairness under Serve. A plain limit (LimitListener) lets N
// keep-alive connections, busy or idle until IdleTimeout, make every
// further client wait silently in the kernel's backlog. Serve instead
// accepts every connection at once and, when a limit is reached, makes
// room or answers:
//
//   - at MaxConns open connections, the connection idle the longest (or
//     opened longest ago without sending a request, after newGrace) is
//     closed for the newcomer; when every connection is busy with a
//     request, the newcomer gets 503 with Retry-After at once;
//   - a client (a remote IP address) holding MaxConnsPerClient
//     connections has its own longest-idle one closed, or gets 503.
//
// Closing an idle keep-alive connection is what HTTP allows a server to do
// at any time; clients reconnect.

// newGrace is how long a connection that has not yet sent a request
// counts as busy; after it, it may be closed to make room like an idle
// one.
const newGrace = time.Second

// refuseTimeout bounds the 503 answer to a refused connection.
const refuseTimeout = time.Second

// fairLimit wraps ln and sets srv.ConnState (after any hook already set)
// so that at most maxConns connections are open at once, at most perClient of
// them from one remote IP address, as described above.
//
// perClient 0 means maxConns/2 (at least 1) for clients on other hosts and no
// cap of its own for loopback clients (Options.MaxConnsPerClient).
func fairLimit(srv *http.Server, ln net.Listener, maxConns, perClient int) net.Listener {
	lim := &connLimiter{max: maxConns, perClient: perClient, conns: map[*fairConn]bool{}, byClient: map[string]int{}}
	if perClient == 0 {
		lim.perClient, lim.exemptLoopback = max(1, maxConns/2), true
	}
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		if fc, ok := c.(*fairConn); ok {
			lim.setState(fc, st)
		}
		if prev != nil {
			prev(c, st)
		}
	}
	return &fairListener{Listener: ln, lim: lim}
}

type connLimiter struct {
	max, perClient int
	exemptLoopback bool // the per-client cap spares loopback clients

	mu       sync.Mutex
	conns    map[*fairConn]bool
	byClient map[string]int
	refused  int // connections answered 503, for tests
	evicted  int // idle connections closed for a newcomer, for tests
}

// fairConn is a connection counted by a connLimiter.
type fairConn struct {
	net.Conn
	lim    *connLimiter
	client string
	// under lim.mu:
	busy  bool      // a request is being read or answered (or hijacked)
	fresh bool      // no request yet
	since time.Time // when the connection became idle (or was opened)
	gone  bool      // released (closed or evicted)
}

func (c *fairConn) Close() error {
	c.lim.release(c)
	return c.Conn.Close()
}

func (l *connLimiter) setState(c *fairConn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateActive, http.StateHijacked:
		c.busy, c.fresh = true, false
	case http.StateIdle:
		c.busy, c.fresh, c.since = false, false, time.Now()
	case http.StateClosed:
		l.releaseLocked(c)
	}
}

func (l *connLimiter) release(c *fairConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseLocked(c)
}

func (l *connLimiter) releaseLocked(c *fairConn) {
	if c.gone {
		return
	}
	c.gone = true
	delete(l.conns, c)
	if l.byClient[c.client]--; l.byClient[c.client] <= 0 {
		delete(l.byClient, c.client)
	}
}

// victimLocked returns the connection to close for a newcomer: among the
// connections of client (all connections if client is ""), the one idle
// the longest, or nil when every one is busy.
func (l *connLimiter) victimLocked(client string, now time.Time) *fairConn {
	var v *fairConn
	for c := range l.conns {
		if client != "" && c.client != client {
			continue
		}
		if c.busy || (c.fresh && now.Sub(c.since) < newGrace) {
			continue
		}
		if v == nil || c.since.Before(v.since) {
			v = c
		}
	}
	return v
}

// admit counts a new connection from client, closing an idle one to make
// room if a limit is reached; it returns nil when the newcomer must be
// refused.
func (l *connLimiter) admit(nc net.Conn) *fairConn {
	client := remoteHost(nc.RemoteAddr())
	now := time.Now()
	var victims []*fairConn
	l.mu.Lock()
	capped := !(l.exemptLoopback && isLoopbackIP(client))
	if capped && l.byClient[client] >= l.perClient {
		v := l.victimLocked(client, now)
		if v == nil {
			l.refused++
			l.mu.Unlock()
			return nil
		}
		l.releaseLocked(v)
		victims = append(victims, v)
	}
	if len(l.conns) >= l.max {
		v := l.victimLocked("", now)
		if v == nil {
			l.refused++
			l.mu.Unlock()
			for _, v := range victims {
				v.Conn.Close()
			}
			return nil
		}
		l.releaseLocked(v)
		victims = append(victims, v)
	}
	l.evicted += len(victims)
	c := &fairConn{Conn: nc, lim: l, client: client, fresh: true, since: now}
	l.conns[c] = true
	l.byClient[client]++
	l.mu.Unlock()
	for _, v := range victims {
		v.Conn.Close() // the server sees its idle read fail and drops it
	}
	return c
}

func isLoopbackIP(host string) bool {
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

func remoteHost(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

type fairListener struct {
	net.Listener
	lim *connLimiter
}

// Accept never waits on the limit: it admits the next connection (see
// admit) or answers it 503 on its own goroutine and accepts the next.
func (l *fairListener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c := l.lim.admit(nc); c != nil {
			return c, nil
		}
		go refuse(nc)
	}
}

// busyBody is the body of the 503 answer to a refused connection.
const busyBody = `{"error":"too many connections: every connection is busy; retry shortly"}` + "\n"

// refuse answers a connection the limits leave no room for: it reads
// what the client sent so far (so that closing does not reset the
// connection before the answer is read), answers 503 with Retry-After and
// closes, all within refuseTimeout.
func refuse(nc net.Conn) {
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(refuseTimeout))
	buf := make([]byte, 4096)
	_ = nc.SetReadDeadline(time.Now().Add(refuseTimeout / 4))
	_, _ = nc.Read(buf)
	_ = nc.SetWriteDeadline(time.Now().Add(refuseTimeout / 2))
	_, _ = io.WriteString(nc, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n"+
		"Content-Length: "+strconv.Itoa(len(busyBody))+"\r\n\r\n"+busyBody)
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}
