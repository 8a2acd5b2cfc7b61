// Package attr is the vocabulary of node attributes that the method
// (package fasd) and the graph store (package index) share: the split a
// node belongs to and the value of an unknown sensitive attribute or a
// missing label. It imports nothing, so both can use the same types
// without depending on each other.
package attr
