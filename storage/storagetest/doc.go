// Package storagetest is the conformance suite for storage.Store
// implementations. Every backend runs the same suite (see Run), so that the
// layers above can rely on one behaviour whichever engine is underneath.
package storagetest
