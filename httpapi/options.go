// Options of the API: fields, defaults and their validation.

package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/fasd-db/fasd/query"
)

// Options configure the HTTP API. A nil *Options means all defaults; zero
// fields mean the default.
type Options struct {
	// MaxBodyBytes bounds a request body; 0 means 1 MiB. Larger bodies get
	// 413.
	MaxBodyBytes int64
	// MaxItems bounds the ids, edges or nodes of one request; 0 means
	// 10,000.
	MaxItems int
	// ShutdownTimeout bounds the graceful shutdown of Serve: requests
	// still running then are cancelled and their connections closed; 0
	// means 10 s.
	ShutdownTimeout time.Duration
	// ReadHeaderTimeout bounds the time to read a request head, from the
	// accepted connection or, on a kept-alive one, from the first bytes of
	// the next request; 0 means 10 s. A late head gets its connection
	// closed.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the time to read a whole request, head and body,
	// from the same start; 0 means 1 min. A body still incomplete then
	// gets 408 and its connection is closed.
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of the request head to the
	// end of the answer; 0 means 10 min (a refresh of many subgraphs
	// answers only when done).
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle that long; 0 means
	// 2 min.
	IdleTimeout time.Duration
	// MaxConns bounds the connections Serve keeps open at once; 0 means
	// 256. At the bound the connection idle the longest is closed for a
	// newcomer, or the newcomer gets 503 at once when every connection is
	// busy (see connlimit.go; LimitListener is the plain, waiting limit).
	MaxConns int
	// MaxConnsPerClient bounds the connections of one remote IP address
	// under Serve, in the same way. 0 means MaxConns/2 (at least 1) for
	// clients on other hosts, and no cap of its own for loopback clients
	// (every local user shares the address 127.0.0.1: only the global
	// policy can be fair among them).
	MaxConnsPerClient int

	// Token is the bearer token ("Authorization: Bearer TOKEN"), at least
	// MinTokenLen printable ASCII characters. Every mutation needs it;
	// without a token mutations are disabled (403).
	Token string
	// AuthenticateReads requires the token for every request, reads
	// included (it needs a Token). NewServer and Serve set it for a
	// non-loopback address.
	AuthenticateReads bool
	// ReadOnly refuses every mutation with 403, token or not.
	ReadOnly bool
	// AllowedHosts are host names or IP addresses (without port) accepted
	// in the Host header besides localhost, loopback addresses and the
	// address a connection was accepted on; "*" accepts any Host.
	AllowedHosts []string

	// Log receives Serve's notes (requests cut short by the shutdown);
	// nil means none. Nothing logged contains the token.
	Log *slog.Logger
}

// Validate reports every negative field, a malformed Token,
// AuthenticateReads without a Token and malformed AllowedHosts; errors
// never contain the token.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	var errs []error
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxBodyBytes", o.MaxBodyBytes}, {"MaxItems", int64(o.MaxItems)}, {"ShutdownTimeout", int64(o.ShutdownTimeout)},
		{"ReadHeaderTimeout", int64(o.ReadHeaderTimeout)}, {"ReadTimeout", int64(o.ReadTimeout)},
		{"WriteTimeout", int64(o.WriteTimeout)}, {"IdleTimeout", int64(o.IdleTimeout)}, {"MaxConns", int64(o.MaxConns)},
		{"MaxConnsPerClient", int64(o.MaxConnsPerClient)},
	} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%w: %s %d, want ≥ 0", query.ErrInvalid, f.name, f.v))
		}
	}
	if o.Token != "" {
		if err := validToken(o.Token); err != nil {
			errs = append(errs, fmt.Errorf("%w: %w", query.ErrInvalid, err))
		}
	} else if o.AuthenticateReads {
		errs = append(errs, fmt.Errorf("%w: AuthenticateReads needs a Token", query.ErrInvalid))
	}
	for _, h := range o.AllowedHosts {
		if err := validHost(h); err != nil {
			errs = append(errs, fmt.Errorf("%w: %w", query.ErrInvalid, err))
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns a copy of o with every zero field set to its
// default.
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	setDefault(&c.MaxBodyBytes, 1<<20)
	setDefault(&c.MaxItems, 10000)
	setDefault(&c.ShutdownTimeout, 10*time.Second)
	setDefault(&c.ReadHeaderTimeout, 10*time.Second)
	setDefault(&c.ReadTimeout, time.Minute)
	setDefault(&c.WriteTimeout, 10*time.Minute)
	setDefault(&c.IdleTimeout, 2*time.Minute)
	setDefault(&c.MaxConns, 256)
	return c
}

// DefaultOptions returns the options with every default filled in.
func DefaultOptions() Options {
	return (*Options)(nil).withDefaults()
}

func setDefault[T int | int64 | time.Duration](p *T, def T) {
	if *p == 0 {
		*p = def
	}
}
