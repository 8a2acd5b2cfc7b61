// NewServer and Serve: the API on an http.Server, with timeouts, a fair
// connection limit and a graceful shutdown.

package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/fasd-db/fasd/query"
)

// NewServer returns an http.Server for the API over e with the timeouts
// of opts (ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout) and
// addr as its address; run it with Serve, or with ListenAndServe (which
// applies no connection limit: wrap the listener with LimitListener).
// On a non-loopback address (an empty host, 0.0.0.0, [::], a LAN address
// or a name other than localhost) it refuses options without a Token
// (ErrNoToken) and requires the token for every request; a listen host
// given by name is an allowed Host.
func NewServer(e *query.Engine, addr string, opts *Options) (*http.Server, error) {
	if err := opts.ValidateListen(addr); err != nil {
		return nil, err
	}
	o := opts.forListen(addr)
	return &http.Server{
		Addr:              addr,
		Handler:           NewHandler(e, &o),
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}, nil
}

// Serve serves the API on addr (an http.Server of NewServer, at most
// MaxConns connections at once) until ctx is done, then shuts down: it
// stops accepting, lets requests in flight finish for up to
// ShutdownTimeout, then cancels the requests still running (a stalled
// body, a long refresh), closes their connections and waits for their
// handlers to return (up to ShutdownTimeout again). Ending requests that
// way is not an error; a handler that outlives the second wait is. ready,
// if set, is called with the listening address once the socket is open;
// Options.Log, if set, receives a note of requests cut short.
func Serve(ctx context.Context, e *query.Engine, addr string, opts *Options, ready func(net.Addr)) error {
	srv, err := NewServer(e, addr, opts)
	if err != nil {
		return err
	}
	o := opts.withDefaults()
	// Requests run under base, cancelled when the shutdown deadline passes.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv.BaseContext = func(net.Listener) context.Context { return base }
	var running atomic.Int64
	h := srv.Handler
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		running.Add(1)
		defer running.Add(-1)
		h.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("httpapi: listen: %w", err)
	}
	ln = fairLimit(srv, ln, o.MaxConns, o.MaxConnsPerClient)
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc: // the server failed before shutdown
		return fmt.Errorf("httpapi: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), o.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		n := running.Load()
		cancelBase()
		err = srv.Close()
		if o.Log != nil {
			o.Log.Warn("shutdown: requests still running at the deadline were cancelled and their connections closed",
				"deadline", o.ShutdownTimeout, "requests", n)
		}
		deadline := time.Now().Add(o.ShutdownTimeout)
		for running.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n := running.Load(); n > 0 {
			err = errors.Join(err, fmt.Errorf("%d requests still running %v after they were cancelled", n, o.ShutdownTimeout))
		}
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("httpapi: shutdown: %w", err)
	}
	return nil
}
