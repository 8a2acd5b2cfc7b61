package storage

import (
	"errors"
	"testing"
)

// FuzzParseMarker checks the parser of the FASD-STORE marker file, which
// Open reads before either engine touches the directory: it never panics, a
// refusal is ErrNotStore or ErrFormat, and an accepted marker names a known
// backend, which the marker Open writes for it names again. The seeds are
// the markers Open writes, so that mutations start past the first line.
func FuzzParseMarker(f *testing.F) {
	for _, b := range []Backend{Pebble, Badger} {
		f.Add(markerText(b))
	}
	f.Add("fasd-store\r\nformat=1\r\nbackend=badger")
	f.Add("fasd-store\nbackend=rocks\nformat=1\n")
	f.Add("fasd-store\nbackend=pebble\nformat=x\n")
	f.Fuzz(func(t *testing.T, text string) {
		b, err := parseMarker([]byte(text))
		if err != nil {
			if !errors.Is(err, ErrNotStore) && !errors.Is(err, ErrFormat) {
				t.Fatalf("refusal %v is neither ErrNotStore nor ErrFormat", err)
			}
			return
		}
		if b != Pebble && b != Badger {
			t.Fatalf("accepted backend %q", b)
		}
		again, err := parseMarker([]byte(markerText(b)))
		if err != nil || again != b {
			t.Fatalf("canonical marker for %s parses to %q, %v", b, again, err)
		}
	})
}
