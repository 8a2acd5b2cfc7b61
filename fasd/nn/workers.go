package nn

import (
	"math/rand/v2"
	"sync"

	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// Shard is the part of a batch one worker handles in Workers.Step.
type Shard[T tensor.Float] struct {
	Index  int               // shard number, 0-based
	Lo, Hi int               // batch items [Lo, Hi)
	Tape   *autodiff.Tape[T] // this worker's tape, already Reset
	Drop   *rand.PCG         // this worker's dropout stream, reseeded per Step
}

// ShardFunc records the forward pass of one shard on s.Tape and returns its
// scalar loss, already normalised for the whole batch (e.g. norm = B in the
// loss ops, not Hi−Lo), or nil if the shard contributes nothing. It runs
// concurrently with the other shards' calls: it may read shared inputs and
// models but must write only to memory owned by its shard.
type ShardFunc[T tensor.Float] func(s *Shard[T]) *autodiff.Var[T]

type job[T tensor.Float] struct {
	fn ShardFunc[T]
	s  *Shard[T]
}

// Workers runs data-parallel training steps: a batch is split into
// contiguous shards, each recorded and differentiated on its own tape, then
// the shard gradients are added to Param.Grad in shard order. With n > 1,
// NewWorkers starts n−1 goroutines that live until Close; shard 0 runs on the
// caller's goroutine. Not safe for concurrent Steps.
type Workers[T tensor.Float] struct {
	shards []*Shard[T]
	losses []T
	jobs   []chan job[T]
	done   chan int
	wg     sync.WaitGroup
	closed bool
}

// NewWorkers returns a runner with n ≥ 1 workers.
func NewWorkers[T tensor.Float](n int) *Workers[T] {
	n = max(1, n)
	w := &Workers[T]{done: make(chan int, n), losses: make([]T, n)}
	for i := 0; i < n; i++ {
		w.shards = append(w.shards, &Shard[T]{Index: i, Tape: autodiff.NewTape[T](), Drop: rand.NewPCG(uint64(i), 0)})
	}
	for i := 1; i < n; i++ {
		ch := make(chan job[T])
		w.jobs = append(w.jobs, ch)
		w.wg.Add(1)
		go w.loop(ch)
	}
	return w
}

func (w *Workers[T]) loop(ch chan job[T]) {
	defer w.wg.Done()
	for j := range ch {
		w.run(j.fn, j.s)
		w.done <- j.s.Index
	}
}

func (w *Workers[T]) run(fn ShardFunc[T], s *Shard[T]) {
	w.losses[s.Index] = 0
	loss := fn(s)
	if loss != nil {
		w.losses[s.Index] = loss.Value.Data[0]
		if loss.NeedsGrad() {
			s.Tape.Backward(loss)
		}
	}
}

// N returns the number of workers.
func (w *Workers[T]) N() int { return len(w.shards) }

// Tape returns worker i's tape (e.g. for eval-mode use between steps).
func (w *Workers[T]) Tape(i int) *autodiff.Tape[T] { return w.shards[i].Tape }

// Step splits [0, batch) into N contiguous shards (shard i is
// [i·batch/N, (i+1)·batch/N)), runs fn on every non-empty shard concurrently,
// backpropagates each returned loss on its shard's tape, and then adds the
// parameter gradients of every shard to Param.Grad in shard order (callers
// zero Param.Grad first, see ZeroGrads). If seed is non-nil each worker's Drop
// is reseeded from it first, so dropout is reproducible. It returns the sum
// of the shard losses. Step allocates nothing once the tapes are warm,
// provided fn is not a fresh closure each call.
func (w *Workers[T]) Step(batch int, seed *rand.Rand, fn ShardFunc[T]) T {
	if w.closed {
		panic("nn: Workers used after Close")
	}
	n := len(w.shards)
	for i, s := range w.shards {
		s.Lo, s.Hi = i*batch/n, (i+1)*batch/n
		s.Tape.Reset()
		s.Tape.SetNoGrad(false)
		if seed != nil {
			s.Drop.Seed(seed.Uint64(), seed.Uint64())
		}
	}
	pending := 0
	for i := 1; i < n; i++ {
		if s := w.shards[i]; s.Hi > s.Lo {
			w.jobs[i-1] <- job[T]{fn: fn, s: s}
			pending++
		} else {
			w.losses[i] = 0
		}
	}
	if s := w.shards[0]; s.Hi > s.Lo {
		w.run(fn, s)
	} else {
		w.losses[0] = 0
	}
	for ; pending > 0; pending-- {
		<-w.done
	}
	var total T
	for i, s := range w.shards {
		if s.Hi > s.Lo {
			s.Tape.AccumulateGrads()
		}
		total += w.losses[i]
	}
	return total
}

// Release hands the memory of every worker's tape back to the garbage
// collector (autodiff.Tape.Release): call it when a training stage ends, so
// that the arenas sized by its largest batch do not stay live through the
// stages that follow. The workers stay usable; the next Step grows the tapes
// again.
func (w *Workers[T]) Release() {
	for _, s := range w.shards {
		s.Tape.Release()
	}
}

// ArenaBytes returns the bytes held by the workers' tapes (see
// autodiff.Tape.ArenaBytes).
func (w *Workers[T]) ArenaBytes() int64 {
	var n int64
	for _, s := range w.shards {
		n += s.Tape.ArenaBytes()
	}
	return n
}

// Close stops the worker goroutines and waits for them. A second call does
// nothing.
func (w *Workers[T]) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	for _, ch := range w.jobs {
		close(ch)
	}
	w.wg.Wait()
	return nil
}
