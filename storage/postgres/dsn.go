package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultTable is the table a DSN without fasd_table names.
const DefaultTable = "fasd_store"

// location is what a DSN says besides the connection: the table of the
// store and the writer lock to use.
type location struct {
	// conn is the DSN without the parameters of this package, for pgx.
	conn string
	// schema is "" for the connection's search path.
	schema, table string
	// lock is "" (the dialect's choice), "advisory" or "lease".
	lock string
}

var ident = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// parseDSN splits a postgres:// or postgresql:// URL into the connection
// string pgx reads and this package's own parameters, which pgx would
// otherwise send to the server as run-time settings.
func parseDSN(dsn string) (location, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		// url's error repeats the DSN, password included: drop it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return location{}, fmt.Errorf("postgres: malformed DSN: %w", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return location{}, fmt.Errorf("postgres: DSN scheme %q, want postgres:// or postgresql://", u.Scheme)
	}
	q := u.Query()
	loc := location{table: DefaultTable, lock: q.Get("fasd_lock")}
	if t := q.Get("fasd_table"); t != "" {
		schema, table, qualified := strings.Cut(t, ".")
		if !qualified {
			schema, table = "", t
		}
		if (qualified && !ident.MatchString(schema)) || !ident.MatchString(table) {
			return location{}, fmt.Errorf("postgres: fasd_table %q: want [schema.]table in lower-case letters, digits and _", t)
		}
		loc.schema, loc.table = schema, table
	}
	switch loc.lock {
	case "", "advisory", "lease":
	default:
		return location{}, fmt.Errorf("postgres: fasd_lock %q: want advisory or lease", loc.lock)
	}
	q.Del("fasd_table")
	q.Del("fasd_lock")
	u.RawQuery = q.Encode()
	loc.conn = u.String()
	return loc, nil
}

// qualified returns the quoted name of the store's table with suffix.
func (l location) qualified(suffix string) string {
	if l.schema == "" {
		return `"` + l.table + suffix + `"`
	}
	return `"` + l.schema + `"."` + l.table + suffix + `"`
}

// name is the unquoted, qualified table name, for messages.
func (l location) name() string {
	if l.schema == "" {
		return l.table
	}
	return l.schema + "." + l.table
}

// lockKey is the advisory-lock key of the store: a hash of its qualified
// table name, so that stores in different tables lock independently.
func (l location) lockKey() int64 {
	h := fnv.New64a()
	h.Write([]byte("fasd-store:" + l.name()))
	return int64(h.Sum64())
}

// Drop deletes the store dsn names: its table and its lease table. The
// store must not be open. Dropping a store that does not exist is not an
// error.
func Drop(ctx context.Context, dsn string) error {
	loc, err := parseDSN(dsn)
	if err != nil {
		return err
	}
	c, err := connect(ctx, loc)
	if err != nil {
		return fmt.Errorf("postgres: connect: %w", err)
	}
	defer c.Close(ctx)
	for _, t := range []string{loc.qualified(""), loc.qualified("_writer")} {
		if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return fmt.Errorf("postgres: drop %s: %w", t, err)
		}
	}
	return nil
}

// connect opens one connection (not a pool) to the DSN's server; the
// pool's own DSN parameters (pool_max_conns, …) are accepted and ignored.
func connect(ctx context.Context, loc location) (*pgx.Conn, error) {
	cfg, err := pgxpool.ParseConfig(loc.conn)
	if err != nil {
		return nil, fmt.Errorf("postgres: DSN: %w", err)
	}
	return pgx.ConnectConfig(ctx, cfg.ConnConfig)
}
