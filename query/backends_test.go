package query

// The storage engines the tests open stores with.
import (
	_ "github.com/fasd-db/fasd/storage/badger"
	_ "github.com/fasd-db/fasd/storage/pebble"
	_ "github.com/fasd-db/fasd/storage/postgres"
)
