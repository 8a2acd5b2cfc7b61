package ascii

import "testing"

func TestEqualFold(t *testing.T) {
	cases := []struct {
		b, lower string
		want     bool
	}{
		{"Host", "host", true},
		{"HOST", "host", true},
		{"host", "host", true},
		{"hosts", "host", false},
		{"hos", "host", false},
		{"\u212Aeep-alive", "keep-alive", false}, // Kelvin sign: Unicode folding only
		{"Keep-Alive", "keep-alive", true},
		{"", "", true},
		{"h0st", "host", false},
	}
	for _, c := range cases {
		if got := EqualFold([]byte(c.b), c.lower); got != c.want {
			t.Errorf("EqualFold(%q, %q) = %v, want %v", c.b, c.lower, got, c.want)
		}
	}
}
