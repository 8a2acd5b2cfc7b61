package fasd

import "fmt"

// Opt is an optional option value. The zero Opt is unset, which an options
// struct reads as "use the default"; Some(v) is set to v, zero included.
// Options use it where zero is itself a meaningful setting (a corrector
// without noise, pruning nothing), so that no sentinel value is needed to
// ask for it.
type Opt[T any] struct {
	v   T
	set bool
}

// Some returns an Opt set to v.
func Some[T any](v T) Opt[T] { return Opt[T]{v: v, set: true} }

// Get returns the value and whether it is set.
func (o Opt[T]) Get() (T, bool) { return o.v, o.set }

// IsSet reports whether o holds a value.
func (o Opt[T]) IsSet() bool { return o.set }

// Or returns the value if set, else def.
func (o Opt[T]) Or(def T) T {
	if o.set {
		return o.v
	}
	return def
}

// String prints the value, or "unset".
func (o Opt[T]) String() string {
	if !o.set {
		return "unset"
	}
	return fmt.Sprint(o.v)
}
