package storagetest

import (
	"crypto/rand"
	"net/url"
	"os"
	"strings"
	"testing"
)

// PostgresEnv names the environment variable that holds the DSN of a
// PostgreSQL server the tests may create tables in, e.g.
//
//	FASD_TEST_POSTGRES='postgres://fasd@127.0.0.1:5432/postgres?sslmode=disable'
//
// .ci/start-postgres starts a throwaway server and prints such a DSN.
const PostgresEnv = "FASD_TEST_POSTGRES"

// PostgresDSN returns a DSN naming a fresh table (fasd_table=t_<random>)
// on the server PostgresEnv names, with pools that close idle connections
// after 2 s, and skips t when the variable is unset.
// The caller drops the table when done (storage/postgres.Drop).
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skipf("no PostgreSQL server: set %s to a DSN to run this test (.ci/start-postgres starts one)", PostgresEnv)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", PostgresEnv, err)
	}
	q := u.Query()
	q.Set("fasd_table", "t_"+strings.ToLower(rand.Text()[:16]))
	// Tests keep many stores open at once (one per case, closed when the
	// test ends): let each pool close its idle connections within seconds
	// so that they do not add up to the server's max_connections.
	if !q.Has("pool_max_conn_idle_time") {
		q.Set("pool_max_conn_idle_time", "2s")
		q.Set("pool_health_check_period", "1s")
	}
	u.RawQuery = q.Encode()
	return u.String()
}
