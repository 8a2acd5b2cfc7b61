package query

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/fasd-db/fasd/storage"
)

// Distributed configures the leases of distributed work (see doc.go,
// "Distributed work"). Zero fields take defaults.
type Distributed struct {
	// Owner names the holder in its leases; "" means "coordinator" for
	// Materialize and Refresh and "worker" for Work.
	Owner string
	// LeaseTTL is how long a claimed part stays its holder's without a
	// renewal; 0 means 30 s. The holder renews its lease every third of
	// it while it computes the part, so a part slower than LeaseTTL stays
	// its own; a part whose holder died is claimed again after it.
	LeaseTTL time.Duration
	// Poll is the wait between two looks at the store for a staged part
	// or a plan; 0 means 50 ms.
	Poll time.Duration
	// Now is the clock deadlines are set and compared by; nil means
	// time.Now. Admission of a stage never depends on it.
	Now func() time.Time
}

func (d *Distributed) withDefaults(owner string) Distributed {
	var c Distributed
	if d != nil {
		c = *d
	}
	if c.Owner == "" {
		c.Owner = owner
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = 30 * time.Second
	}
	if c.Poll == 0 {
		c.Poll = 50 * time.Millisecond
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// distRun is the coordinator's side of one distributed recompute.
type distRun struct {
	e *Engine
	o Distributed
	p *plan
}

// startPlan publishes the to-do roots as a new plan and drops the stages
// and leases of earlier plans.
func (e *Engine) startPlan(version uint64, roots []uint32) (*distRun, error) {
	o := e.opts.Distributed.withDefaults("coordinator")
	id := uint64(o.Now().UnixNano())
	if old, err := readPlan(e.store); err != nil {
		return nil, err
	} else if old != nil && old.ID >= id {
		id = old.ID + 1
	}
	p := &plan{ID: id, Version: version, PartRoots: uint32(e.opts.ChunkRoots), Roots: roots, Model: e.tag}
	if err := e.clearDist(false); err != nil {
		return nil, err
	}
	v, err := p.encode()
	if err != nil {
		return nil, err
	}
	b := e.store.NewBatch()
	defer b.Close()
	if err := b.Set(keyPlan, v); err != nil {
		return nil, fmt.Errorf("query: publish plan: %w", err)
	}
	if err := b.Commit(); err != nil {
		return nil, fmt.Errorf("query: publish plan: %w", err)
	}
	return &distRun{e: e, o: o, p: p}, nil
}

// clearDist deletes, with plan, the plan first, then the stages and the
// leases. A worker that claims or stages after the plan is gone finds it
// gone when it looks again and removes what it wrote (workPlan).
func (e *Engine) clearDist(plan bool) error {
	if plan {
		b := e.store.NewBatch()
		defer b.Close()
		if err := b.Delete(keyPlan); err != nil {
			return err
		}
		if err := b.Commit(); err != nil {
			return fmt.Errorf("query: clear plan: %w", err)
		}
	}
	for _, fam := range []byte{famStage, famLease} {
		if _, err := storage.DeletePrefix(e.store, famPrefix(fam)); err != nil {
			return fmt.Errorf("query: clear distributed work: %w", err)
		}
	}
	return nil
}

// finish removes the plan, its stages and leases once every part is
// folded.
func (d *distRun) finish() error { return d.e.clearDist(true) }

// await fills recs with the records of part: from the part's stage when a
// worker staged it, computed here (under a lease of its own) when the part
// is free, after waiting while another holder's lease is live. It adds the
// time it computed to t.Compute, the read of the stage it folds to t.Fold
// and the rest to t.Wait.
func (d *distRun) await(ctx context.Context, workers []*worker, rs *roaring.Bitmap, part uint32, recs []*rootRecord, t *RefreshTimes) error {
	start := time.Now()
	var busy time.Duration
	defer func() { t.Wait += time.Since(start) - busy }()
	for {
		read := time.Now()
		staged, err := readStage(d.e.store, d.p, part)
		if err != nil {
			return err
		}
		if staged != nil {
			for i, r := range staged {
				if r != nil && r.Model != d.e.tag {
					return fmt.Errorf("%w: part %d was staged with records of models %016x, the coordinator's are %016x (root %d)",
						ErrPlanModels, part, r.Model, d.e.tag, d.p.part(part)[i])
				}
			}
			copy(recs, staged)
			el := time.Since(read)
			t.Fold += el
			t.Staged++
			busy += el
			return nil
		}
		l, err := ClaimLease(d.e.store, part, d.o.Owner, d.o.Now(), d.o.LeaseTTL)
		switch {
		case err == nil:
			// The coordinator folds what it computed itself; the lease,
			// renewed while it computes, only keeps workers off the part
			// (losing it after a stall costs a worker's duplicate work,
			// never a wrong view).
			comp := time.Now()
			_, k := keepLease(ctx, d.e.store, l, &d.o)
			err := d.e.computePart(ctx, workers, rs, d.p.part(part), recs)
			k.stop()
			el := time.Since(comp)
			t.Compute += el
			busy += el
			return err
		case errors.Is(err, ErrLeaseHeld), errors.Is(err, ErrLeaseLost):
			// A worker holds the part: work ahead on a free later part
			// (staged like a worker's) instead of idling.
			rep := &WorkReport{}
			comp := time.Now()
			did, err := d.e.workParts(ctx, d.p, &d.o, rep, part+1, true)
			if did {
				el := time.Since(comp)
				t.Compute += el
				busy += el
			}
			if err != nil {
				return err
			}
			if did {
				continue
			}
		default:
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d.o.Poll):
		}
	}
}
