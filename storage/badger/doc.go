// Package badger links the Badger v4 engine into a program as the storage
// backend storage.Badger. Import it for its side effect:
//
//	import _ "github.com/fasd-db/fasd/storage/badger"
//
// and open stores with storage.Open (Options.Backend = storage.Badger). It
// is the only package of the module that imports Badger, so that the layers
// above the storage seam do not depend on Badger or on what Badger brings
// in (its metrics reach net/http through expvar).
package badger
