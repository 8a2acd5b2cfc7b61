package command

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/fasd-db/fasd/httpapi"
	"github.com/fasd-db/fasd/query"
	"github.com/spf13/cobra"
)

// tokenEnv names the environment variable holding the bearer token.
const tokenEnv = "FASD_TOKEN"

func newServeCommand() *cobra.Command {
	o := &EngineOptions{}
	def := httpapi.DefaultOptions()
	var addr, tokenFile string
	var maxBody int64
	var maxItems, maxConns, maxPerClient int
	var readOnly, authReads bool
	rep := &replicaFlags{}
	var allowHosts []string
	var readHeader, read, write, idle, shutdown time.Duration
	cmd := &cobra.Command{
		Use:   "serve --db DIR [--addr 127.0.0.1:8080] [--token-file F] [--read-only] [--replica [--poll 1s]]",
		Short: "Serve fair predictions and updates over a JSON HTTP API",
		Long: `Serve answers, until interrupted (then it shuts down gracefully):

  GET    /v1/nodes/{id}/prediction   fair prediction of a node (external id)
  GET    /v1/nodes/{id}/subgraph     debiased subgraph rooted at a node
  POST   /v1/predict                 {"ids":[...], "cold":true}
  POST   /v1/edges, DELETE /v1/edges {"edges":[[u,v], ...]}
  POST   /v1/nodes                   {"nodes":[{"id", "features", "sensitive",
                                      "label", "split", "edges"}], "clip", "units"}
  PATCH  /v1/nodes                   {"edits":[{"id", "features", "sensitive",
                                      "label", "split"}], "clip", "units"}
  DELETE /v1/nodes                   {"ids":[...]}
  PATCH  /v1/nodes/{id}              {"features", "sensitive", "label", "split"}
  DELETE /v1/nodes/{id}              delete one node
  POST   /v1/refresh                 re-debias dirty subgraphs
  GET    /v1/audit?set=test|labelled fairness audit of the views
  GET    /healthz, GET /metrics      status; Prometheus text format

Security:
  Mutations (every request but GET, HEAD, OPTIONS and POST /v1/predict) need
  the bearer token, "Authorization: Bearer TOKEN", read from --token-file or
  else from the ` + tokenEnv + ` environment variable (at least 16 printable
  characters; surrounding white space of the file is ignored). Without a
  token mutations are disabled (403). On an address that is not loopback
  (0.0.0.0, [::], an empty host, a LAN address, a name other than localhost)
  every request needs the token, and serve refuses to start without one;
  --auth-reads asks for it on every request on loopback too.
  --read-only refuses every mutation (403). A wrong or missing token gets 401
  with WWW-Authenticate: Bearer; the token is never printed or logged.
  Requests with a body (every method but GET, HEAD, OPTIONS) must send
  Content-Type: application/json (charset=utf-8 allowed), else 415. The Host
  header must be localhost, a loopback address, the address the connection
  reached, the --addr host when given by name, or an --allow-host entry
  ("*": any), else 421: this defeats DNS rebinding from a web page.

Replicas:
  --replica serves a store on PostgreSQL beside its writer and other
  replicas: it takes no writer lock, refuses every mutation (403, as
  --read-only), and follows the writer's refreshes (it looks for them every
  --poll, and every read checks that it is not behind). An answer is exact
  for the graph version it reports or flagged "stale": true, never an old
  view presented as fresh. Nothing is computed or written back; stale
  nodes stay flagged until the writer refreshes. After fasd train and
  fasd materialize, a replica loads the new models at its next look and
  serves them, no restart needed; until the new views are complete its
  answers are the old views' or flagged stale.

Limits:
  A request head must arrive within --read-header-timeout of the connection
  (or, on a kept-alive connection, of its first bytes); head and body within
  --read-timeout (a stalled body gets 408 and its connection is closed); the
  answer must be written within --write-timeout of the head; an idle
  keep-alive connection is closed after --idle-timeout. At most --max-conns
  connections are open at once, at most --max-conns-per-client from one IP
  address: past either, the connection idle the longest is closed for the
  newcomer, or, when every one is busy with a request, the newcomer gets 503
  with Retry-After at once. On interrupt, requests in
  flight get --shutdown-timeout to finish, then are cancelled and their
  connections closed.

Errors are JSON {"error": ...} with a 4xx status for bad input.

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if maxBody < 0 || maxItems < 0 || maxConns < 0 || maxPerClient < 0 {
				return usagef("serve: limits must not be negative")
			}
			for _, d := range []struct {
				name string
				v    time.Duration
			}{{"read-header-timeout", readHeader}, {"read-timeout", read}, {"write-timeout", write}, {"idle-timeout", idle}, {"shutdown-timeout", shutdown}} {
				if d.v <= 0 {
					return usagef("serve: --%s %v: want a positive duration", d.name, d.v)
				}
			}
			if cmd.Flags().Changed("poll") && !rep.on {
				return usagef("serve: --poll applies to a --replica only")
			}
			errOut := cmd.ErrOrStderr()
			readOnly = readOnly || rep.on
			token, source, err := serveToken(tokenFile, errOut)
			if err != nil {
				return err
			}
			opts := &httpapi.Options{
				MaxBodyBytes: maxBody, MaxItems: maxItems, MaxConns: maxConns, MaxConnsPerClient: maxPerClient,
				ReadHeaderTimeout: readHeader, ReadTimeout: read, WriteTimeout: write, IdleTimeout: idle, ShutdownTimeout: shutdown,
				Token: token, ReadOnly: readOnly, AllowedHosts: allowHosts, AuthenticateReads: authReads,
				Log: slog.New(slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: slog.LevelWarn})),
			}
			if authReads && token == "" {
				return usagef("serve: --auth-reads needs a token: give one with --token-file F or %s", tokenEnv)
			}
			if err := opts.ValidateListen(addr); err != nil {
				if errors.Is(err, httpapi.ErrNoToken) {
					return usagef("serve: %v: give one with --token-file F or %s, or listen on 127.0.0.1", err, tokenEnv)
				}
				return usagef("serve: %s", strings.ReplaceAll(err.Error(), query.ErrInvalid.Error()+": ", ""))
			}
			var e *query.Engine
			if rep.on {
				e, err = rep.openReplica(cmd.Context(), o, opts.Log)
			} else {
				e, _, err = o.openEngine(cmd.Context(), "serve", errOut)
			}
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, e.Close()) }()
			err = httpapi.Serve(cmd.Context(), e, addr, opts, func(a net.Addr) {
				// One write, so that a reader of errOut who waits for the
				// address sees the whole start-up message.
				var msg strings.Builder
				fmt.Fprintf(&msg, "serving on http://%s\n", a)
				fmt.Fprintln(&msg, serveAccess(addr, source, readOnlyFlag(readOnly, rep.on), authReads))
				if rep.on {
					replicaNote(&msg, rep)
				}
				io.WriteString(errOut, msg.String())
			})
			if err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			fmt.Fprintln(errOut, "shut down")
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address; one that is not loopback needs a token")
	f.StringVar(&tokenFile, "token-file", "", "file holding the bearer token (default: the "+tokenEnv+" environment variable)")
	f.BoolVar(&readOnly, "read-only", false, "refuse every mutation (403)")
	f.BoolVar(&rep.on, "replica", false, "serve a store on PostgreSQL read-only beside its writer, following its refreshes (implies --read-only)")
	f.DurationVar(&rep.poll, "poll", time.Second, "with --replica: wait between two looks for the writer's refreshes")
	f.BoolVar(&authReads, "auth-reads", false, "require the token for reads too (always so on an address that is not loopback)")
	f.StringSliceVar(&allowHosts, "allow-host", nil, "another host name or IP accepted in the Host header (repeatable or comma-separated; * for any)")
	f.Int64Var(&maxBody, "max-body", 0, "request body limit in bytes (0: 1 MiB)")
	f.IntVar(&maxItems, "max-items", 0, "ids, edges or nodes per request (0: 10000)")
	f.IntVar(&maxConns, "max-conns", 0, fmt.Sprintf("connections open at once (0: %d)", def.MaxConns))
	f.IntVar(&maxPerClient, "max-conns-per-client", 0, "connections open at once from one IP address (0: half of --max-conns; loopback clients then share --max-conns)")
	f.DurationVar(&readHeader, "read-header-timeout", def.ReadHeaderTimeout, "time to read a request head")
	f.DurationVar(&read, "read-timeout", def.ReadTimeout, "time to read a whole request, head and body")
	f.DurationVar(&write, "write-timeout", def.WriteTimeout, "time from the end of a request head to the end of its answer")
	f.DurationVar(&idle, "idle-timeout", def.IdleTimeout, "time a keep-alive connection may stay idle")
	f.DurationVar(&shutdown, "shutdown-timeout", def.ShutdownTimeout, "time requests in flight get to finish on interrupt")
	return cmd
}

// serveToken reads the bearer token from file or, without one, from the
// environment; source says where it came from ("" without a token). The
// token itself is never printed.
func serveToken(file string, errOut io.Writer) (token, source string, err error) {
	if file == "" {
		token = strings.TrimSpace(os.Getenv(tokenEnv))
		if token == "" {
			return "", "", nil
		}
		return token, tokenEnv, checkToken(token, tokenEnv)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", "", usagef("serve: --token-file: %v", err)
	}
	token = strings.TrimSpace(string(b))
	if token == "" {
		return "", "", usagef("serve: --token-file %s: empty", file)
	}
	if st, err := os.Stat(file); err == nil && st.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(errOut, "warning: token file %s is readable by other users (mode %v); chmod 600 it\n", file, st.Mode().Perm())
	}
	return token, "--token-file " + file, checkToken(token, "--token-file "+file)
}

// checkToken validates the token's form, naming its source.
func checkToken(token, source string) error {
	if err := (&httpapi.Options{Token: token}).Validate(); err != nil {
		return usagef("serve: %s: %v", source, strings.TrimPrefix(err.Error(), query.ErrInvalid.Error()+": "))
	}
	return nil
}

// serveAccess describes who may do what, for the start-up message;
// readOnly names the flag that refuses mutations ("" when none does).
func serveAccess(addr, source, readOnly string, authReads bool) string {
	reads := "reads: open (loopback address)"
	switch {
	case !httpapi.IsLoopback(addr):
		reads = "reads: need the bearer token (address not loopback)"
	case authReads:
		reads = "reads: need the bearer token (--auth-reads)"
	}
	var writes string
	switch {
	case readOnly != "":
		writes = "mutations: refused (" + readOnly + ")"
	case source == "":
		writes = "mutations: disabled (no token: set --token-file or " + tokenEnv + ")"
	default:
		writes = "mutations: need the bearer token (from " + source + ")"
	}
	return reads + "; " + writes
}

// readOnlyFlag names the flag that makes serve refuse mutations.
func readOnlyFlag(readOnly, replica bool) string {
	switch {
	case replica:
		return "--replica"
	case readOnly:
		return "--read-only"
	}
	return ""
}
