package command

// The storage engines the CLI opens stores with: the commands link all
// three, so --backend can name Pebble or Badger, and --db a postgres://
// DSN wherever it takes a directory.
import (
	"net/url"

	"github.com/fasd-db/fasd/storage"
	_ "github.com/fasd-db/fasd/storage/badger"
	_ "github.com/fasd-db/fasd/storage/pebble"
	_ "github.com/fasd-db/fasd/storage/postgres"
)

// displayDB is a --db value fit to print: a DSN without its password.
func displayDB(db string) string {
	if !storage.IsDSN(db) {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "(a postgres:// DSN)"
	}
	return u.Redacted()
}
