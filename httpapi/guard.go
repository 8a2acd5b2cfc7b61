package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
)

// The checks every request passes before it reaches a route, in this
// order (the first that fails answers):
//
//  1. Host: the Host header names a loopback address, "localhost", the IP
//     address the connection was accepted on, or an Options.AllowedHosts
//     entry; otherwise 421. A page of another site whose name was rebound
//     to 127.0.0.1 (DNS rebinding) sends its own name and is refused.
//  2. Reads need the bearer token when Options.AuthenticateReads is set
//     (NewServer sets it on a non-loopback address); otherwise 401.
//  3. A mutation is refused with 403 in read-only mode; otherwise it needs
//     the bearer token (401), and with no token configured mutations are
//     disabled (403).
//  4. Every request with a method other than GET, HEAD or OPTIONS (the
//     read POST /v1/predict included) must declare Content-Type
//     application/json (a charset parameter, if any, must be utf-8);
//     otherwise 415. A cross-site HTML form can send only
//     application/x-www-form-urlencoded, multipart/form-data or text/plain.
//
// A mutation is any request whose method is not GET, HEAD or OPTIONS,
// except POST /v1/predict, which only reads: routes added later are
// protected without being listed here.

// rejectStats count the requests refused before any route, by reason.
type rejectStats struct {
	host, auth, readOnly, contentType atomic.Int64
}

// guard applies the checks above in front of next.
type guard struct {
	next http.Handler
	// digest is the SHA-256 of the token; hasToken is false without one.
	digest    [sha256.Size]byte
	hasToken  bool
	authReads bool
	readOnly  bool
	// anyHost disables the Host check; hosts are the allowed names in
	// lower case without a trailing dot.
	anyHost bool
	hosts   map[string]bool
	rej     *rejectStats
}

func newGuard(next http.Handler, o *Options, rej *rejectStats) *guard {
	g := &guard{next: next, authReads: o.AuthenticateReads, readOnly: o.ReadOnly, hosts: map[string]bool{"localhost": true}, rej: rej}
	if o.Token != "" {
		g.digest, g.hasToken = sha256.Sum256([]byte(o.Token)), true
	}
	for _, h := range o.AllowedHosts {
		if h == "*" {
			g.anyHost = true
		}
		g.hosts[normHost(h)] = true
	}
	return g
}

// isMutation reports whether a request may change the store.
func isMutation(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	case http.MethodPost:
		return r.URL.Path != "/v1/predict"
	}
	return true
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r) {
		g.rej.host.Add(1)
		writeJSON(w, http.StatusMisdirectedRequest, errorBody{fmt.Sprintf(
			"host %q is not served here: use a loopback address, localhost or a host allowed with --allow-host (Options.AllowedHosts)", r.Host)})
		return
	}
	authed := false
	if g.authReads {
		if !g.authenticate(w, r) {
			return
		}
		authed = true
	}
	if isMutation(r) {
		if g.readOnly {
			g.rej.readOnly.Add(1)
			writeJSON(w, http.StatusForbidden, errorBody{fmt.Sprintf("%s %s: the server is read-only (--read-only, or a --replica): no request may change the store", r.Method, r.URL.Path)})
			return
		}
		if !g.hasToken {
			g.rej.auth.Add(1)
			writeJSON(w, http.StatusForbidden, errorBody{fmt.Sprintf(
				"%s %s: mutations are disabled: the server has no bearer token (fasd serve --token-file or FASD_TOKEN; Options.Token)", r.Method, r.URL.Path)})
			return
		}
		if !authed && !g.authenticate(w, r) {
			return
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
		if err := checkJSONType(r.Header.Get("Content-Type")); err != nil {
			g.rej.contentType.Add(1)
			writeJSON(w, http.StatusUnsupportedMediaType, errorBody{fmt.Sprintf("%s %s: %v", r.Method, r.URL.Path, err)})
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// authenticate checks the bearer token of r in constant time; on failure
// it answers 401 (or 403 when no token is configured) and returns false.
// The token is never echoed.
func (g *guard) authenticate(w http.ResponseWriter, r *http.Request) bool {
	if !g.hasToken {
		// Unreachable through NewServer, which refuses AuthenticateReads
		// without a token; a handler built that way refuses everything.
		g.rej.auth.Add(1)
		writeJSON(w, http.StatusForbidden, errorBody{"the server requires a bearer token but has none configured"})
		return false
	}
	tok, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		g.rej.auth.Add(1)
		w.Header().Set("WWW-Authenticate", `Bearer realm="fasd"`)
		writeJSON(w, http.StatusUnauthorized, errorBody{fmt.Sprintf("%s %s: missing bearer token (send Authorization: Bearer TOKEN)", r.Method, r.URL.Path)})
		return false
	}
	d := sha256.Sum256([]byte(tok))
	if subtle.ConstantTimeCompare(d[:], g.digest[:]) != 1 {
		g.rej.auth.Add(1)
		w.Header().Set("WWW-Authenticate", `Bearer realm="fasd", error="invalid_token"`)
		writeJSON(w, http.StatusUnauthorized, errorBody{fmt.Sprintf("%s %s: invalid bearer token", r.Method, r.URL.Path)})
		return false
	}
	return true
}

// bearerToken extracts the token of an "Authorization: Bearer TOKEN"
// header (the scheme is case-insensitive).
func bearerToken(h string) (string, bool) {
	const scheme = "bearer "
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return "", false
	}
	tok := strings.TrimSpace(h[len(scheme):])
	return tok, tok != ""
}

// checkJSONType accepts application/json with no parameter other than
// charset=utf-8.
func checkJSONType(ct string) error {
	if ct == "" {
		return errors.New("missing content type: send Content-Type: application/json")
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return fmt.Errorf("content type %q: %v; send application/json", ct, err)
	}
	if mt != "application/json" {
		return fmt.Errorf("content type %q is not supported: send application/json", mt)
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return fmt.Errorf("content type %q: parameter %s=%s is not supported (JSON is UTF-8)", ct, k, v)
		}
	}
	return nil
}

// hostAllowed applies the Host allow-list. A request without a Host
// (HTTP/1.0) passes: browsers always send one.
func (g *guard) hostAllowed(r *http.Request) bool {
	if g.anyHost || r.Host == "" {
		return true
	}
	h := normHost(hostOnly(r.Host))
	if g.hosts[h] {
		return true
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	if ip.Unmap().IsLoopback() {
		return true
	}
	// An IP address literal cannot be rebound: it is allowed when it is
	// the address the connection reached.
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ta, ok := la.(*net.TCPAddr); ok {
			if lip, ok := netip.AddrFromSlice(ta.IP); ok && lip.Unmap() == ip.Unmap().WithZone("") {
				return true
			}
		}
	}
	return false
}

// hostOnly strips the port of a Host header value and the brackets of an
// IPv6 literal.
func hostOnly(h string) string {
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			return h[1:i]
		}
		return h
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.IndexByte(h, ':') == i {
		return h[:i]
	}
	return h
}

// normHost lower-cases a host name and drops a trailing dot.
func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}
