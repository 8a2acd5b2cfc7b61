package command

// The storage engines the CLI opens stores with: the commands link both, so
// --backend can name either.
import (
	_ "github.com/fasd-db/fasd/storage/badger"
	_ "github.com/fasd-db/fasd/storage/pebble"
)
