package fasd

import (
	"errors"
	"testing"
)

func roundTrip[E Named](t *testing.T, values ...E) {
	t.Helper()
	var zero E
	if len(zero.Names()) != len(values) {
		t.Errorf("%T: %d names for %d values", zero, len(zero.Names()), len(values))
	}
	for _, v := range values {
		s := any(v).(interface{ String() string }).String()
		got, err := ParseName[E](s)
		if err != nil || got != v {
			t.Errorf("%T: ParseName(%q) = %v, %v; want %v", zero, s, got, err, v)
		}
	}
	if _, err := ParseName[E]("no-such-name"); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("%T: unknown name: %v", zero, err)
	}
}

// Ensure that every option enum names each of its values once, that the
// names parse back to the values, and that unknown names are errors.
func TestEnumNames(t *testing.T) {
	roundTrip(t, ScheduleFixedDT, ScheduleSpan, ScheduleGDSSFull)
	roundTrip(t, OrderPC, OrderCP)
	roundTrip(t, InitClean, InitForward)
	roundTrip(t, ReverseSDE, ReverseODE)
	roundTrip(t, SamplerAlg3, SamplerHop)
	roundTrip(t, EdgesSampled, EdgesInduced)
	roundTrip(t, GammaLiteral, GammaLinear)
	if got := Reverse(9).String(); got != "Reverse(9)" {
		t.Errorf("out of range: %q", got)
	}
	if got := NameList[Reverse](); got != "sde, ode" {
		t.Errorf("NameList = %q", got)
	}
}
