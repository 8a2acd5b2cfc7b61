// Package ascii holds the ASCII-only string helpers that the HTTP code of
// package query and its load generator share: HTTP/1.1 header names and
// tokens compare case-insensitively in ASCII only, unlike bytes.EqualFold,
// which also folds Unicode (the Kelvin sign matches 'k').
package ascii
