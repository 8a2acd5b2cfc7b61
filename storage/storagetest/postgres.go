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
// on the server PostgresEnv names, and skips t when the variable is unset.
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
	u.RawQuery = q.Encode()
	return u.String()
}
