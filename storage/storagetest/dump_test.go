package storagetest_test

import (
	"testing"

	"github.com/fasd-db/fasd/storage"
	_ "github.com/fasd-db/fasd/storage/pebble"
	"github.com/fasd-db/fasd/storage/storagetest"
)

func TestDump(t *testing.T) {
	s, err := storage.Open("", &storage.Options{Backend: storage.Pebble, InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := s.NewBatch()
	defer b.Close()
	for _, kv := range [][2]string{{"Vb", "2"}, {"Aa", "1"}, {"Vc", ""}} {
		if err := b.Set([]byte(kv[0]), []byte(kv[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		skip []byte
		want string
	}{
		{[]byte{storage.ReservedPrefix}, "4161=31\n5662=32\n5663=\n"},
		{[]byte{storage.ReservedPrefix, 'V'}, "4161=31\n"},
		{[]byte{'A', 'V', storage.ReservedPrefix}, ""},
	} {
		if got := storagetest.Dump(t, s, tc.skip...); got != tc.want {
			t.Errorf("Dump(skip %q) = %q, want %q", tc.skip, got, tc.want)
		}
	}
}

// Ensure that Copy writes the user keys of the source, less the skipped
// prefixes (the destination's own reserved keys are left out of the
// comparison).
func TestCopy(t *testing.T) {
	open := func() storage.Store {
		s, err := storage.Open("", &storage.Options{Backend: storage.Pebble, InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	src := open()
	b := src.NewBatch()
	defer b.Close()
	for _, kv := range [][2]string{{"Vb", "2"}, {"Aa", "1"}, {"Vc", ""}} {
		if err := b.Set([]byte(kv[0]), []byte(kv[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		skip []byte
		want string
	}{
		{nil, "4161=31\n5662=32\n5663=\n"},
		{[]byte{'V'}, "4161=31\n"},
	} {
		dst := open()
		storagetest.Copy(t, dst, src, tc.skip...)
		if got := storagetest.Dump(t, dst, storage.ReservedPrefix); got != tc.want {
			t.Errorf("Copy(skip %q): %q, want %q", tc.skip, got, tc.want)
		}
	}
}
