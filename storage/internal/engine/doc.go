// Package engine holds what the storage backends (storage/pebble,
// storage/badger) share and the layers above must not see: the reporter of
// background problems and the batch of a closed store.
package engine
