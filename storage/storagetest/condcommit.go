package storagetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// testCommitIf checks the guarded commit: it commits when the guard key
// holds the expected value (absent, empty, a value), and otherwise
// commits nothing and reports ErrConflict; concurrent compare-and-sets on
// one key let exactly one winner through per generation.
func testCommitIf(t *testing.T, s storage.Store) {
	guard := func(want []byte, kv ...string) error {
		b := s.NewBatch()
		defer b.Close()
		for i := 0; i+1 < len(kv); i += 2 {
			if err := b.Set([]byte(kv[i]), []byte(kv[i+1])); err != nil {
				t.Fatal(err)
			}
		}
		return storage.CommitIf(s, b, []byte("g"), want)
	}
	steps := []struct {
		name     string
		want     []byte
		kv       []string
		conflict bool
	}{
		{"absent as expected", nil, []string{"g", "1", "x", "a"}, false},
		{"absent but present", nil, []string{"g", "9", "x", "bad"}, true},
		{"value as expected", []byte("1"), []string{"g", "", "x", "b"}, false},
		{"empty is not absent", nil, []string{"x", "bad"}, true},
		{"stale value", []byte("1"), []string{"x", "bad"}, true},
		{"empty as expected", []byte{}, []string{"g", "2", "x", "c"}, false},
	}
	for _, st := range steps {
		err := guard(st.want, st.kv...)
		if got := errors.Is(err, storage.ErrConflict); got != st.conflict || (!st.conflict && err != nil) {
			t.Fatalf("%s: err = %v, want conflict %v", st.name, err, st.conflict)
		}
	}
	if got := mustGet(t, s, "x"); got != "c" {
		t.Fatalf("x = %q after the guarded commits, want %q", got, "c")
	}
	// Four contenders race for each generation of g; one wins each.
	const gens, contenders = 5, 4
	for g := 0; g < gens; g++ {
		cur := []byte(mustGet(t, s, "g"))
		next := string(rune('a' + g))
		var wg sync.WaitGroup
		wins := make([]bool, contenders)
		for c := range wins {
			wg.Add(1)
			go func(c int) {
				defer wg.Done()
				b := s.NewBatch()
				defer b.Close()
				_ = b.Set([]byte("g"), []byte(next))
				err := storage.CommitIf(s, b, []byte("g"), cur)
				switch {
				case err == nil:
					wins[c] = true
				case !errors.Is(err, storage.ErrConflict):
					t.Errorf("contender %d: %v", c, err)
				}
			}(c)
		}
		wg.Wait()
		n := 0
		for _, w := range wins {
			if w {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("generation %d: %d winners, want 1", g, n)
		}
	}
}
