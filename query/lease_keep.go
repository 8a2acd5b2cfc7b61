package query

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fasd-db/fasd/storage"
)

// leaseKeeper renews a lease while its holder computes the part, so that
// a part that takes longer than the lease's lifetime is not claimed again
// by another worker. It renews every third of the lifetime (RenewLease,
// guarded by the current value), and when a renewal finds the lease lost
// it cancels the holder's context: the part is someone else's now.
type leaseKeeper struct {
	s      storage.Store
	d      *Distributed
	cancel context.CancelFunc
	stopc  chan struct{}
	done   chan struct{}
	once   sync.Once

	mu   sync.Mutex
	l    Lease
	lost bool
}

// keepLease starts renewing l; ctx is the holder's context, cancelled when
// the lease is found lost. Call stop when the computation ends (a deferred
// stop also covers a goroutine that exits early).
func keepLease(ctx context.Context, s storage.Store, l Lease, d *Distributed) (context.Context, *leaseKeeper) {
	ctx, cancel := context.WithCancel(ctx)
	k := &leaseKeeper{s: s, d: d, l: l, cancel: cancel, stopc: make(chan struct{}), done: make(chan struct{})}
	go k.run()
	return ctx, k
}

func (k *leaseKeeper) run() {
	defer close(k.done)
	t := time.NewTicker(max(k.d.LeaseTTL/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-k.stopc:
			return
		case <-t.C:
		}
		k.mu.Lock()
		l := k.l
		k.mu.Unlock()
		n, err := RenewLease(k.s, l, k.d.Now(), k.d.LeaseTTL)
		switch {
		case errors.Is(err, ErrLeaseLost):
			k.mu.Lock()
			k.lost = true
			k.mu.Unlock()
			k.cancel()
			return
		case err != nil:
			// A failed renewal is retried at the next tick; the stage is
			// guarded by the lease value either way.
			continue
		}
		k.mu.Lock()
		k.l = n
		k.mu.Unlock()
	}
}

// stop ends the renewals and returns the lease as last renewed, or an
// error wrapping ErrLeaseLost when a renewal found it lost. A second call
// returns the same.
func (k *leaseKeeper) stop() (Lease, error) {
	k.once.Do(func() {
		close(k.stopc)
		<-k.done
		k.cancel()
	})
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lost {
		return k.l, fmt.Errorf("part %d: renewal: %w", k.l.Part, ErrLeaseLost)
	}
	return k.l, nil
}
