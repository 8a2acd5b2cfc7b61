// Package pebble links the Pebble v2 engine into a program as the storage
// backend storage.Pebble (the default). Import it for its side effect:
//
//	import _ "github.com/fasd-db/fasd/storage/pebble"
//
// and open stores with storage.Open. It is the only package of the module
// that imports Pebble, so that the layers above the storage seam (the graph
// index and the query engine) do not depend on Pebble or on what Pebble
// brings in (its error reporting reaches net/http).
package pebble
