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
