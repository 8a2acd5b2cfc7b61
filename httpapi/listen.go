package httpapi

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
)

// ErrNoToken is returned for a non-loopback listen address without a
// bearer token.
var ErrNoToken = errors.New("a bearer token is required to listen on a non-loopback address")

// IsLoopback reports whether the listen address addr ("host:port") binds
// only the loopback interface: its host is "localhost" or a loopback IP
// address. An empty host, 0.0.0.0, [::], a LAN address and any other
// name are not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if normHost(host) == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// ValidateListen checks o (Validate) for a server listening on addr: on
// a non-loopback address a token is required (ErrNoToken).
func (o *Options) ValidateListen(addr string) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if !IsLoopback(addr) && (o == nil || o.Token == "") {
		return fmt.Errorf("listen address %q is not loopback: %w", addr, ErrNoToken)
	}
	return nil
}

// forListen returns the options with defaults of a server on addr: on a
// non-loopback address every route needs the token; a listen host given
// by name is an allowed Host.
func (o *Options) forListen(addr string) Options {
	c := o.withDefaults()
	if !IsLoopback(addr) {
		c.AuthenticateReads = true
	}
	if host, _, err := net.SplitHostPort(addr); err == nil && host != "" {
		if _, err := netip.ParseAddr(host); err != nil {
			c.AllowedHosts = append(append([]string(nil), c.AllowedHosts...), host)
		}
	}
	return c
}

// validToken checks the form of a bearer token; the error never contains
// it.
func validToken(tok string) error {
	if len(tok) < MinTokenLen {
		return fmt.Errorf("token: %d characters, want at least %d", len(tok), MinTokenLen)
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("token: character %d is not printable ASCII (spaces and control characters cannot be sent in a header)", i+1)
		}
	}
	return nil
}

// MinTokenLen is the shortest accepted bearer token.
const MinTokenLen = 16

// validHost checks an Options.AllowedHosts entry: a host name, an IP
// address or "*", without a port.
func validHost(h string) error {
	if h == "*" {
		return nil
	}
	if h == "" || strings.ContainsAny(h, " /\t\r\n@") {
		return fmt.Errorf("allowed host %q is not a host name", h)
	}
	if _, _, err := net.SplitHostPort(h); err == nil {
		return fmt.Errorf("allowed host %q has a port; give the host alone", h)
	}
	return nil
}

// LimitListener returns a listener that accepts at most n connections at
// once: Accept waits while n are open (further clients wait in the
// kernel's backlog). Serve applies it with Options.MaxConns; a caller of
// NewServer can wrap its own listener.
func LimitListener(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	sem  chan struct{}
	done chan struct{}
	once sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
