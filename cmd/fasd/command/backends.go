package command

// The storage engines the CLI opens stores with: the commands link all
// three, so --backend can name Pebble or Badger, and --db a postgres://
// DSN wherever it takes a directory.
import (
	_ "github.com/fasd-db/fasd/storage/badger"
	_ "github.com/fasd-db/fasd/storage/pebble"
	_ "github.com/fasd-db/fasd/storage/postgres"
)
