package command

import "testing"

// Ensure sizes parse with binary and decimal units and print back.
func TestParseByteSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ByteSize
		ok   bool
	}{
		{"0", 0, true},
		{"4096", 4096, true},
		{"512MiB", 512 << 20, true},
		{"1.5GiB", 3 << 29, true},
		{"1.5 gib", 3 << 29, true},
		{"800MB", 800e6, true},
		{"2G", 2 << 30, true},
		{"10kB", 10e3, true},
		{"7b", 7, true},
		{"", 0, false},
		{"MiB", 0, false},
		{"-1GiB", 0, false},
		{"lots", 0, false},
		{"NaN", 0, false},
		{"1e30GiB", 0, false},
	} {
		got, err := ParseByteSize(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		b    ByteSize
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {3 << 29, "1.5 GiB"}, {410 << 20, "410.0 MiB"}} {
		if got := c.b.String(); got != c.want {
			t.Errorf("%d prints %q, want %q", c.b, got, c.want)
		}
	}
}
