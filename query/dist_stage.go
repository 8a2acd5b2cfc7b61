package query

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/fasd-db/fasd/storage"
)

// Keys of distributed work (see doc.go, "Distributed work"):
//
//	"V" "P"             plan: u64 id │ u64 graph version │ u32 roots per
//	                    part │ roaring bitmap of the to-do roots │ u64
//	                    model tag (absent in plans of earlier builds:
//	                    tag 0, which no models have)
//	"V" "T" part:u32    stage: u64 plan id │ u32 n │ n × (u32 root │ u32
//	                    length │ record, length 0: not a root)
const (
	famPlan  = 'P'
	famStage = 'T'
)

var keyPlan = []byte{prefixViews, famPlan}

func stageKey(part uint32) []byte { return idKey(famStage, part) }

// plan is the to-do list of one distributed materialize or refresh.
type plan struct {
	ID, Version uint64
	PartRoots   uint32
	Roots       []uint32
	// Model is the tag of the coordinator's models: only a worker with
	// the same models computes the plan's parts (ErrPlanModels).
	Model uint64
}

// ErrPlanModels is returned by Work when the current plan of distributed
// work was published by a coordinator with other models than the
// worker's (a worker started before a fasd train, say): the worker
// stages nothing of it; reopened on the store, it loads the newest
// models. A coordinator also refuses to fold a stage whose records are
// of other models.
var ErrPlanModels = errors.New("query: the distributed work is for other models than this engine's")

// part returns the roots of part p.
func (p *plan) part(i uint32) []uint32 {
	lo := int(i) * int(p.PartRoots)
	return p.Roots[lo:min(lo+int(p.PartRoots), len(p.Roots))]
}

// parts is the number of parts.
func (p *plan) parts() uint32 {
	return uint32((len(p.Roots) + int(p.PartRoots) - 1) / int(p.PartRoots))
}

func (p *plan) encode() ([]byte, error) {
	bm := roaring.BitmapOf(p.Roots...)
	bm.RunOptimize()
	bb, err := bm.ToBytes()
	if err != nil {
		return nil, fmt.Errorf("query: encode plan: %w", err)
	}
	v := make([]byte, 20, 28+len(bb))
	binary.BigEndian.PutUint64(v, p.ID)
	binary.BigEndian.PutUint64(v[8:], p.Version)
	binary.BigEndian.PutUint32(v[16:], p.PartRoots)
	return binary.BigEndian.AppendUint64(append(v, bb...), p.Model), nil
}

// readPlan returns the current plan, or nil when there is none.
func readPlan(r storage.Reader) (*plan, error) {
	v, err := r.Get(keyPlan)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("query: read plan: %w", err)
	case len(v) < 20:
		return nil, fmt.Errorf("query: plan of %d bytes", len(v))
	}
	bm := roaring.New()
	n, err := bm.FromUnsafeBytes(v[20:])
	if err != nil {
		return nil, fmt.Errorf("query: decode plan: %w", err)
	}
	p := &plan{
		ID: binary.BigEndian.Uint64(v), Version: binary.BigEndian.Uint64(v[8:]),
		PartRoots: binary.BigEndian.Uint32(v[16:]), Roots: bm.ToArray(),
	}
	switch rest := v[20+n:]; len(rest) {
	case 0: // an earlier build's plan: no models match it
	case 8:
		p.Model = binary.BigEndian.Uint64(rest)
	default:
		return nil, fmt.Errorf("query: plan with %d bytes after its roots", len(rest))
	}
	if p.PartRoots == 0 {
		return nil, fmt.Errorf("query: plan with 0 roots per part")
	}
	return p, nil
}

// encodeStage encodes the records of a part's roots (nil: not a root).
func encodeStage(planID uint64, roots []uint32, recs []*rootRecord) []byte {
	v := make([]byte, 12)
	binary.BigEndian.PutUint64(v, planID)
	binary.BigEndian.PutUint32(v[8:], uint32(len(roots)))
	var rec []byte
	for i, r := range roots {
		rec = rec[:0]
		if recs[i] != nil {
			rec = recs[i].encode(rec)
		}
		v = binary.BigEndian.AppendUint32(v, r)
		v = binary.BigEndian.AppendUint32(v, uint32(len(rec)))
		v = append(v, rec...)
	}
	return v
}

// readStage returns the staged records of part for plan p, or nil when
// the part has no stage of this plan yet.
func readStage(r storage.Reader, p *plan, part uint32) ([]*rootRecord, error) {
	v, err := r.Get(stageKey(part))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("query: read stage of part %d: %w", part, err)
	case len(v) < 12:
		return nil, fmt.Errorf("query: stage of part %d: %d bytes", part, len(v))
	}
	if binary.BigEndian.Uint64(v) != p.ID {
		return nil, nil // a stage of an earlier plan
	}
	roots := p.part(part)
	if n := binary.BigEndian.Uint32(v[8:]); int(n) != len(roots) {
		return nil, fmt.Errorf("query: stage of part %d holds %d roots, the plan %d", part, n, len(roots))
	}
	recs := make([]*rootRecord, len(roots))
	v = v[12:]
	for i, want := range roots {
		if len(v) < 8 {
			return nil, fmt.Errorf("query: stage of part %d truncated", part)
		}
		r, n := binary.BigEndian.Uint32(v), binary.BigEndian.Uint32(v[4:])
		v = v[8:]
		if r != want || int(n) > len(v) {
			return nil, fmt.Errorf("query: stage of part %d: root %d (want %d), %d bytes", part, r, want, n)
		}
		if n > 0 {
			if recs[i], err = decodeRootRecord(v[:n]); err != nil {
				return nil, fmt.Errorf("query: stage of part %d, root %d: %w", part, r, err)
			}
		}
		v = v[n:]
	}
	return recs, nil
}
