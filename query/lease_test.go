package query

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fasd-db/fasd/storage"
)

// TestLease walks one part through claims, renewals, expiry and fenced
// writes on every backend: a holder whose lease expired and was claimed
// again cannot commit, whatever its clock says.
func TestLease(t *testing.T) {
	onEveryBackend(t, func(t *testing.T) {
		s := openMem(t)
		t0 := time.Unix(1_000, 0)
		const ttl = 10 * time.Second
		a, err := ClaimLease(s, 7, "a", t0, ttl)
		if err != nil || a.Generation != 1 {
			t.Fatalf("first claim: %+v, %v", a, err)
		}
		steps := []struct {
			name string
			do   func() error
			want error
		}{
			{"live lease held", func() error { _, err := ClaimLease(s, 7, "b", t0.Add(ttl), ttl); return err }, ErrLeaseHeld},
			{"holder writes", func() error { return fencedWrite(s, a, "a1") }, nil},
			{"holder renews", func() (err error) { a, err = RenewLease(s, a, t0.Add(5*time.Second), ttl); return err }, nil},
			{"renewed lease held", func() error { _, err := ClaimLease(s, 7, "b", t0.Add(12*time.Second), ttl); return err }, ErrLeaseHeld},
			{"expired lease taken", func() error { _, err := ClaimLease(s, 7, "b", t0.Add(16*time.Second), ttl); return err }, nil},
			{"old holder cannot write", func() error { return fencedWrite(s, a, "a2") }, ErrLeaseLost},
			{"old holder cannot renew", func() error { _, err := RenewLease(s, a, t0.Add(17*time.Second), ttl); return err }, ErrLeaseLost},
			{"other part is free", func() error { _, err := ClaimLease(s, 8, "a", t0, ttl); return err }, nil},
		}
		for _, st := range steps {
			if err := st.do(); !errors.Is(err, st.want) || (st.want == nil && err != nil) {
				t.Fatalf("%s: err = %v, want %v", st.name, err, st.want)
			}
		}
		l, ok, err := ReadLease(s, 7)
		if err != nil || !ok || l.Owner != "b" || l.Generation != 2 {
			t.Fatalf("lease of part 7: %+v %v %v, want owner b generation 2", l, ok, err)
		}
		if v, err := s.Get([]byte("stage-7")); err != nil || string(v) != "a1" {
			t.Fatalf("stage-7 = %q, %v; want the live holder's write a1 only", v, err)
		}
	})
}

// TestLease_Race lets several workers claim one expired part at once:
// exactly one wins, the others see ErrLeaseLost or ErrLeaseHeld.
func TestLease_Race(t *testing.T) {
	onEveryBackend(t, func(t *testing.T) {
		s := openMem(t)
		now := time.Unix(1_000, 0)
		if _, err := ClaimLease(s, 1, "dead", now, time.Second); err != nil {
			t.Fatal(err)
		}
		later := now.Add(time.Minute)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				_, errs[i] = ClaimLease(s, 1, string(rune('a'+i)), later, time.Minute)
			}(i)
		}
		wg.Wait()
		wins := 0
		for i, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, ErrLeaseLost) && !errors.Is(err, ErrLeaseHeld):
				t.Errorf("worker %d: %v", i, err)
			}
		}
		if wins != 1 {
			t.Fatalf("%d workers won the expired lease, want 1", wins)
		}
	})
}

// fencedWrite writes stage-<part> = v under l's fence.
func fencedWrite(s storage.Store, l Lease, v string) error {
	b := s.NewBatch()
	defer b.Close()
	if err := b.Set([]byte(fmt.Sprintf("stage-%d", l.Part)), []byte(v)); err != nil {
		return err
	}
	return CommitUnderLease(s, b, l)
}
