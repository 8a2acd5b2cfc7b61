package fasd

import (
	"fmt"
	"strings"
)

// Named is implemented by the option enums of this package (Schedule,
// Order, Init, Reverse, SamplerMode, EdgeMode, GammaMode): Names lists the
// name of every value, indexed by the value. The names are the spellings
// that configs, flags and help text use; each enum declares them once.
type Named interface {
	~uint8
	Names() []string
}

// ParseName returns the value of E whose name is s, or an error wrapping
// ErrInvalidOptions that lists the names.
func ParseName[E Named](s string) (E, error) {
	var zero E
	for i, n := range zero.Names() {
		if n == s {
			return E(i), nil
		}
	}
	return zero, fmt.Errorf("%w: %q is not one of %s", ErrInvalidOptions, s, NameList[E]())
}

// NameList returns E's names joined by ", ", for help text and errors.
func NameList[E Named]() string {
	var zero E
	return strings.Join(zero.Names(), ", ")
}

// enumString is the String method of an enum: its name, or Type(n) for a
// value without one.
func enumString(names []string, v uint8, typ string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
}
