package query

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// WorkReport says what one Work call did.
type WorkReport struct {
	// Parts is the number of parts this worker staged.
	Parts int
	// Lost is the number of parts whose lease was lost before the stage
	// (the stage was refused; another holder redoes the part).
	Lost int
	// Roots is the number of roots in the staged parts, and Compute the
	// time spent computing and staging them (from the claim of each part
	// to its stage), so Compute/Roots is this worker's time per root.
	Roots   int
	Compute time.Duration
}

// Work computes parts of the current plan of distributed work (published
// by a Materialize or Refresh with Options.Distributed) until no part is
// left to claim, then returns; with wait, it keeps polling for new plans
// until ctx ends. For each part it claims a lease, computes the part's
// records against the plan's graph version and stages them in one batch
// guarded by the lease (CommitUnderLease): a worker whose lease expired
// and was claimed again stages nothing. Work takes no writer lock and
// writes only leases and stages, so it runs beside the coordinator on the
// same engine, or in another engine on a shared server store. A plan
// published by a coordinator with other models than e's is not touched:
// Work returns ErrPlanModels (an engine opened anew loads the newest
// models; fasd worker does that).
func (e *Engine) Work(ctx context.Context, o *Distributed, wait bool) (*WorkReport, error) {
	if err := e.checkWrite(); err != nil {
		return nil, err
	}
	d := o.withDefaults("worker")
	rep := &WorkReport{}
	for {
		did, err := e.workPlan(ctx, &d, rep)
		if err != nil {
			return rep, err
		}
		if !did && !wait {
			return rep, nil
		}
		if !did {
			select {
			case <-ctx.Done():
				return rep, ctx.Err()
			case <-time.After(d.Poll):
			}
		}
	}
}

// workPlan claims and stages parts of the current plan; did reports
// whether it staged (or tried to stage) any.
func (e *Engine) workPlan(ctx context.Context, d *Distributed, rep *WorkReport) (did bool, err error) {
	p, err := readPlan(e.store)
	if err != nil || p == nil {
		return false, err
	}
	return e.workParts(ctx, p, d, rep, 0, false)
}

// workParts claims and stages the free parts of p from part first on;
// with one, it returns after the first part it claims.
func (e *Engine) workParts(ctx context.Context, p *plan, d *Distributed, rep *WorkReport, first uint32, one bool) (did bool, err error) {
	if p.Model != e.tag {
		return false, fmt.Errorf("%w: the plan's models are %016x, this engine's %016x", ErrPlanModels, p.Model, e.tag)
	}
	for part := first; part < p.parts(); part++ {
		if err := ctx.Err(); err != nil {
			return did, err
		}
		if staged, err := readStage(e.store, p, part); err != nil || staged != nil {
			if err != nil {
				return did, err
			}
			continue
		}
		l, err := ClaimLease(e.store, part, d.Owner, d.Now(), d.LeaseTTL)
		switch {
		case errors.Is(err, ErrLeaseHeld), errors.Is(err, ErrLeaseLost):
			continue
		case err != nil:
			return did, err
		}
		did = true
		start := time.Now()
		if cur, err := e.planCurrent(p, l); err != nil || !cur {
			return did, err
		}
		if l, err = e.workPart(ctx, p, l, d); err != nil {
			if errors.Is(err, ErrLeaseLost) {
				rep.Lost++
				continue
			}
			return did, err
		}
		if cur, err := e.planCurrent(p, l, stageKey(l.Part)); err != nil || !cur {
			return did, err
		}
		rep.Parts++
		rep.Roots += len(p.part(l.Part))
		rep.Compute += time.Since(start)
		if one {
			return did, nil
		}
	}
	return did, nil
}

// planCurrent reports whether p is still the store's plan; when it is not
// (the coordinator finished or replaced it), it deletes l and the keys del
// the worker wrote under l, so nothing of an old plan stays behind.
func (e *Engine) planCurrent(p *plan, l Lease, del ...[]byte) (bool, error) {
	cur, err := readPlan(e.store)
	if err != nil {
		return false, err
	}
	if cur != nil && cur.ID == p.ID {
		return true, nil
	}
	if err := ReleaseLease(e.store, l, del...); err != nil && !errors.Is(err, ErrLeaseLost) {
		return false, err
	}
	return false, nil
}

// workPart computes the part of lease l against the plan's graph version
// and stages it under l, renewing l meanwhile (keepLease) so that a part
// slower than the lease's lifetime stays this worker's; it returns the
// lease as last renewed.
func (e *Engine) workPart(ctx context.Context, p *plan, l Lease, d *Distributed) (Lease, error) {
	kctx, k := keepLease(ctx, e.store, l, d)
	defer k.stop()
	chunk := p.part(l.Part)
	workers, release, err := e.newWorkers()
	if err != nil {
		return l, err
	}
	defer release()
	if v := workers[0].view.Version(); v != p.Version {
		return l, fmt.Errorf("query: plan %d is for graph version %d, the store is at %d (updates must go through the coordinator)", p.ID, p.Version, v)
	}
	rs, err := rootSet(workers[0].view)
	if err != nil {
		return l, err
	}
	recs := make([]*rootRecord, len(chunk))
	err = e.computePart(kctx, workers, rs, chunk, recs)
	if err == nil && e.testHookBeforeStage != nil {
		e.testHookBeforeStage(l)
	}
	l, lerr := k.stop()
	switch {
	case lerr != nil:
		return l, lerr
	case err != nil:
		return l, err
	}
	b := e.store.NewBatch()
	defer b.Close()
	if err := b.Set(stageKey(l.Part), encodeStage(p.ID, chunk, recs)); err != nil {
		return l, fmt.Errorf("query: stage part %d: %w", l.Part, err)
	}
	return l, CommitUnderLease(e.store, b, l)
}
