package runs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/storage"
)

// The debias memo: what fasd train keeps of the subgraphs it debiased so
// that the query engine does not debias them again (docs/method.md §22).
// For every training root, f's probabilities on the root's debiased
// subgraph (pipeline.Options.FairProbs), under the models' fair
// fingerprint (pipeline.Models.FairFingerprint) and with a digest of the
// clean subgraph they were computed from:
//
//	"T" "c" fp:16 root:u32   u8 format (1) │ 16-byte digest │ u16 n │
//	                         2n × f32 probabilities (little-endian)
//
// fp is the first 16 bytes of the fingerprint; the digest (memoDigest)
// covers the whole fingerprint, the root, the size, the clean features
// and adjacency and the probabilities. An entry is used only by models
// with that fingerprint, for a subgraph of that root whose features and
// adjacency, with the stored probabilities, hash to its digest: then
// f(Debias(X, A)) with the root's generator is the stored vector bit for
// bit, whatever graph version, run record or process the entry came
// from. Anything else (other models, a subgraph an update changed, a
// damaged entry) is computed as before. Train deletes every other fingerprint's entries
// when it saves a run, so the store keeps the memo of the newest run
// only; DeleteAll deletes them with the runs.
const (
	famMemo     = 'c'
	memoFormat  = 1
	memoFPLen   = 16
	digestLen   = 16
	memoHeadLen = 1 + digestLen + 2
)

// memoPrefix decodes the hex fair fingerprint fp and returns it with the
// key prefix of its models' entries.
func memoPrefix(fp string) (raw, prefix []byte, err error) {
	raw, err = hex.DecodeString(fp)
	if err != nil || len(raw) < memoFPLen {
		return nil, nil, fmt.Errorf("%w: fingerprint %q", ErrCorrupt, fp)
	}
	return raw, append([]byte{prefixTrain, famMemo}, raw[:memoFPLen]...), nil
}

func memoKey(prefix []byte, root uint32) []byte {
	return binary.BigEndian.AppendUint32(append(make([]byte, 0, len(prefix)+4), prefix...), root)
}

// memoDigest hashes the models' fair fingerprint fp (raw bytes), what
// the debiasing of root's subgraph reads besides the models (the root, for
// its generator; the size; the clean features x, n×d; the adjacency a,
// n×n) and the probabilities p stored for them, as float32 bits. With fp
// inside, an entry written by other models does not fit even when found
// under these models' key; with p inside, a damaged entry does not fit.
type memoDigest struct {
	h   hash.Hash
	buf []byte
}

func (g *memoDigest) sum(fp []byte, root uint32, n, d int, x, a, p []float32) [digestLen]byte {
	if g.h == nil {
		g.h = sha256.New()
	}
	g.h.Reset()
	le := binary.LittleEndian
	b := append(g.buf[:0], "fasd memo input 1\x00"...)
	b = append(b, fp...)
	b = le.AppendUint32(b, root)
	b = le.AppendUint32(b, uint32(n))
	b = le.AppendUint32(b, uint32(d))
	for _, vs := range [][]float32{x, a, p} {
		for _, v := range vs {
			b = le.AppendUint32(b, math.Float32bits(v))
		}
	}
	g.buf = b
	g.h.Write(b)
	var out [digestLen]byte
	copy(out[:], g.h.Sum(nil))
	return out
}

// memoWriter writes the memo entries of one training run as the pipeline
// hands them over (pipeline.Options.FairProbs), in batches of bounded
// size.
type memoWriter struct {
	s      storage.Store
	models *pipeline.Models // the models of the first entry
	fp     string           // hex
	fpRaw  []byte
	prefix []byte
	b      storage.Batch
	bytes  int
	n      int // entries written
	dig    memoDigest
	enc    []byte
	a      []float32 // a compact subgraph's dense adjacency
}

// put implements pipeline.Options.FairProbs.
func (w *memoWriter) put(ctx context.Context, m *pipeline.Models, sg *fasd.Subgraph, x, probs []float32) error {
	if w.models != nil && m != w.models {
		return fmt.Errorf("runs: the pipeline handed over the probabilities of two sets of models")
	}
	if w.prefix == nil {
		w.models = m
		fp, err := m.FairFingerprint()
		if err != nil {
			return err
		}
		if w.fpRaw, w.prefix, err = memoPrefix(fp); err != nil {
			return err
		}
		w.fp = fp
	}
	n := sg.N()
	if n > math.MaxUint16 || len(probs) != 2*n || len(x) != n*m.D {
		return fmt.Errorf("%w: memo of root %d: %d nodes, %d probabilities, %d features", fasd.ErrShape, sg.Root(), n, len(probs), len(x))
	}
	a, err := sg.DenseA(w.a)
	if err != nil {
		return fmt.Errorf("runs: memo of root %d: %w", sg.Root(), err)
	}
	if sg.A == nil {
		w.a = a
	}
	dig := w.dig.sum(w.fpRaw, sg.Root(), n, m.D, x, a, probs)
	e := append(w.enc[:0], memoFormat)
	e = append(e, dig[:]...)
	e = binary.LittleEndian.AppendUint16(e, uint16(n))
	for _, p := range probs {
		e = binary.LittleEndian.AppendUint32(e, math.Float32bits(p))
	}
	w.enc = e
	if w.b == nil {
		w.b = w.s.NewBatch()
	}
	if err := w.b.Set(memoKey(w.prefix, sg.Root()), e); err != nil {
		return fmt.Errorf("runs: memo of root %d: %w", sg.Root(), err)
	}
	w.n++
	w.bytes += len(e) + len(w.prefix) + 4
	if w.bytes >= storage.HintsOf(w.s).BatchBytes/2 {
		return w.flush(ctx)
	}
	return nil
}

// flush commits the pending entries.
func (w *memoWriter) flush(ctx context.Context) error {
	if w.b == nil {
		return nil
	}
	err := ctx.Err()
	if err == nil {
		err = w.b.Commit()
	}
	w.b.Close()
	w.b, w.bytes = nil, 0
	if err != nil {
		return fmt.Errorf("runs: write the debias memo: %w", err)
	}
	return nil
}

// close releases an uncommitted batch.
func (w *memoWriter) close() {
	if w.b != nil {
		w.b.Close()
		w.b = nil
	}
}

// deleteMemosExcept deletes the memo entries of every fingerprint but the
// one of prefix keep (nil: all of them), in bounded batches.
func deleteMemosExcept(s storage.Store, keep []byte) error {
	all := []byte{prefixTrain, famMemo}
	lo := all
	for {
		it, err := s.NewIter(lo, storage.PrefixEnd(all))
		if err != nil {
			return fmt.Errorf("runs: delete old memos: %w", err)
		}
		var p []byte
		if it.First() {
			k := it.Key()
			p = append([]byte(nil), k[:min(len(k), len(all)+memoFPLen)]...)
		}
		err = errors.Join(it.Err(), it.Close())
		if err != nil {
			return fmt.Errorf("runs: delete old memos: %w", err)
		}
		if p == nil {
			return nil
		}
		if !bytes.Equal(p, keep) {
			if _, err := storage.DeletePrefix(s, p); err != nil {
				return fmt.Errorf("runs: delete old memos: %w", err)
			}
		}
		lo = storage.PrefixEnd(p)
		if lo == nil {
			return nil
		}
	}
}

// memoProbs returns the probabilities of entry v if it is the memo of the
// models with raw fair fingerprint fp for the subgraph sg (n×d features
// sg.X) in the current format, else nil. It decodes into dst.
func memoProbs(v []byte, fp []byte, sg *fasd.Subgraph, d int, dig *memoDigest, dst []float32) []float32 {
	n := sg.N()
	if len(v) != memoHeadLen+8*n || v[0] != memoFormat || int(binary.LittleEndian.Uint16(v[1+digestLen:])) != n ||
		len(sg.X) != n*d || len(sg.A) != n*n {
		return nil
	}
	dst = dst[:0]
	for i := memoHeadLen; i < len(v); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(v[i:])))
	}
	if got := dig.sum(fp, sg.Root(), n, d, sg.X, sg.A, dst); !bytes.Equal(got[:], v[1:1+digestLen]) {
		return nil
	}
	return dst
}
