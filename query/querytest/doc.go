// Package querytest holds what tests of the query engine and of the
// packages above it share: a deterministic stand-in for trained models
// (Model) and builders of random and generated graphs in throw-away
// stores. It is for tests only.
package querytest
