package storage

import "fmt"

// Hints are a store's preferred sizes for the writers above the storage
// seam, so that they need not know which backend they write to.
type Hints struct {
	// BatchBytes is the size of a write batch that commits efficiently
	// (and safely under the backend's atomic-batch bound).
	BatchBytes int
	// BatchOps bounds the operations of one batch.
	BatchOps int
	// SpillBytes is the memory a writer may hold for a bulk load's
	// intermediate data before spilling to a file; 0 means spill to a file
	// at once (the backend's own tables already take a few hundred MiB).
	SpillBytes int
}

// HintsOf returns s's hints: with Pebble, batches just under 1 MiB (the
// largest buffer Pebble recycles; it has no count bound) and 64 MiB of
// spill memory; with Postgres, 4 MiB and 65,536 operations (each batch is
// one transaction and one round trip, so fewer, larger ones are cheaper)
// and 64 MiB of spill memory (the engine keeps nothing in the process);
// with Badger (and unknown backends), 2 MiB and 32,768 operations per
// batch (Badger refuses batches over a few MiB) and no spill memory.
func HintsOf(s Store) Hints {
	switch s.Backend() {
	case Pebble:
		return Hints{BatchBytes: 1<<20 - 64<<10, BatchOps: 1 << 20, SpillBytes: 64 << 20}
	case Postgres:
		return Hints{BatchBytes: 4 << 20, BatchOps: 64 << 10, SpillBytes: 64 << 20}
	}
	return Hints{BatchBytes: 2 << 20, BatchOps: 32 << 10}
}

// DeletePrefix deletes every key that starts with prefix, in batches of
// at most HintsOf(s).BatchOps keys each, and returns how many it deleted.
// It is not atomic: interrupted, it leaves a subset of the keys.
//
// Each batch's iterator starts just after the last key the batch before
// deleted, not at the prefix: an LSM engine keeps the deleted keys as
// tombstones until a compaction, and an iterator from the prefix would
// step over all of them again, which made deleting n keys cost
// n²/(2·batch) steps (BenchmarkDeletePrefix).
func DeletePrefix(s Store, prefix []byte) (int, error) {
	limit := min(HintsOf(s).BatchOps, 4096)
	total := 0
	from, end := prefix, PrefixEnd(prefix)
	for {
		it, err := s.NewIter(from, end)
		if err != nil {
			return total, fmt.Errorf("storage: delete prefix %x: %w", prefix, err)
		}
		b := s.NewBatch()
		n := 0
		var last []byte
		for ok := it.First(); ok && n < limit; ok = it.Next() {
			last = append(last[:0], it.Key()...)
			if err = b.Delete(append([]byte(nil), last...)); err != nil {
				break
			}
			n++
		}
		if ierr := it.Err(); err == nil {
			err = ierr
		}
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		if err == nil && n > 0 {
			err = b.Commit()
		}
		b.Close()
		if err != nil {
			return total, fmt.Errorf("storage: delete prefix %x: %w", prefix, err)
		}
		total += n
		if n < limit {
			return total, nil
		}
		// The least key after last: last followed by a zero byte.
		from = append(last, 0)
	}
}
