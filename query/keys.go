package query

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/fasd-db/fasd/storage"
)

// prefixViews is the first byte of every key of the views (see doc.go).
const prefixViews = 'V'

// Sub-families of the view keys.
const (
	famMeta     = 'm' // JSON meta
	famState    = 's' // JSON state
	famRoots    = 'R' // bitmap: roots with a record
	famDirty    = 'D' // bitmap: roots to recompute
	famStale    = 'S' // bitmap: nodes whose view may be out of date
	famAffected = 'F' // bitmap: nodes whose average must be recomputed
	famRoot     = 'r' // root:u32 → root record
	famNode     = 'n' // node:u32 → node view
	famContain  = 'c' // node:u32 → bitmap of roots whose subgraph contains it
	famExpand   = 'e' // node:u32 → bitmap of roots that expanded it
)

var (
	keyMeta     = []byte{prefixViews, famMeta}
	keyState    = []byte{prefixViews, famState}
	keyRoots    = []byte{prefixViews, famRoots}
	keyDirty    = []byte{prefixViews, famDirty}
	keyStale    = []byte{prefixViews, famStale}
	keyAffected = []byte{prefixViews, famAffected}
)

func idKey(fam byte, id uint32) []byte {
	k := make([]byte, 6)
	k[0], k[1] = prefixViews, fam
	binary.BigEndian.PutUint32(k[2:], id)
	return k
}

func rootKey(r uint32) []byte    { return idKey(famRoot, r) }
func nodeKey(v uint32) []byte    { return idKey(famNode, v) }
func containKey(v uint32) []byte { return idKey(famContain, v) }
func expandKey(v uint32) []byte  { return idKey(famExpand, v) }

func famPrefix(fam byte) []byte { return []byte{prefixViews, fam} }

// idOf returns the id of a 6-byte family key.
func idOf(k []byte) (uint32, error) {
	if len(k) != 6 {
		return 0, fmt.Errorf("%w: key %x", ErrCorrupt, k)
	}
	return binary.BigEndian.Uint32(k[2:]), nil
}

// Record formats.
const (
	recordFormat = 1
	flagBaseline = 1 // the record carries baseline (w/o Diffusion) probabilities
)

// rootRecord is the stored recipe and contributions of one root's subgraph.
// The subgraph itself is not stored: (run seed, root, model) regenerate it.
type rootRecord struct {
	Version  uint64    // graph version the subgraph was sampled at
	Model    uint64    // model tag
	Members  []uint32  // local → global; Members[0] is the root
	Expanded []uint16  // local indices whose neighbour lists were read
	Fair     []float32 // len(Members)×2 class probabilities after debiasing
	Base     []float32 // len(Members)×2 w/o Diffusion, or nil
}

// encode: u8 format │ u8 flags │ u16 n │ u16 e │ u64 version │ u64 model │
// n×u32 members │ e×u16 expanded │ 2n×f32 fair │ [2n×f32 base]
// (little-endian).
func (r *rootRecord) encode(dst []byte) []byte {
	flags := byte(0)
	if r.Base != nil {
		flags |= flagBaseline
	}
	le := binary.LittleEndian
	dst = append(dst, recordFormat, flags)
	dst = le.AppendUint16(dst, uint16(len(r.Members)))
	dst = le.AppendUint16(dst, uint16(len(r.Expanded)))
	dst = le.AppendUint64(dst, r.Version)
	dst = le.AppendUint64(dst, r.Model)
	for _, m := range r.Members {
		dst = le.AppendUint32(dst, m)
	}
	for _, e := range r.Expanded {
		dst = le.AppendUint16(dst, e)
	}
	for _, p := range r.Fair {
		dst = le.AppendUint32(dst, math.Float32bits(p))
	}
	for _, p := range r.Base {
		dst = le.AppendUint32(dst, math.Float32bits(p))
	}
	return dst
}

func decodeRootRecord(b []byte) (*rootRecord, error) {
	le := binary.LittleEndian
	if len(b) < 22 || b[0] != recordFormat {
		return nil, fmt.Errorf("%w: root record of %d bytes", ErrCorrupt, len(b))
	}
	n, e := int(le.Uint16(b[2:])), int(le.Uint16(b[4:]))
	base := b[1]&flagBaseline != 0
	want := 22 + 4*n + 2*e + 8*n
	if base {
		want += 8 * n
	}
	if len(b) != want || n == 0 {
		return nil, fmt.Errorf("%w: root record of %d bytes, want %d", ErrCorrupt, len(b), want)
	}
	r := &rootRecord{Version: le.Uint64(b[6:]), Model: le.Uint64(b[14:])}
	off := 22
	r.Members = make([]uint32, n)
	for i := range r.Members {
		r.Members[i] = le.Uint32(b[off:])
		off += 4
	}
	r.Expanded = make([]uint16, e)
	for i := range r.Expanded {
		r.Expanded[i] = le.Uint16(b[off:])
		if int(r.Expanded[i]) >= n {
			return nil, fmt.Errorf("%w: root record expands local %d of %d", ErrCorrupt, r.Expanded[i], n)
		}
		off += 2
	}
	floats := func() []float32 {
		p := make([]float32, 2*n)
		for i := range p {
			p[i] = math.Float32frombits(le.Uint32(b[off:]))
			off += 4
		}
		return p
	}
	r.Fair = floats()
	if base {
		r.Base = floats()
	}
	return r, nil
}

// local returns the local index of global node v in the record, or −1.
func (r *rootRecord) local(v uint32) int {
	for i, m := range r.Members {
		if m == v {
			return i
		}
	}
	return -1
}

// nodeView is the stored prediction of one node: the mean class
// probabilities over the subgraphs that contain it.
type nodeView struct {
	Count   uint32     // contributing subgraphs
	Version uint64     // graph version the view was computed at
	Model   uint64     // model tag
	Fair    [2]float64 // mean debiased probabilities
	HasBase bool
	Base    [2]float64 // mean w/o Diffusion probabilities (if HasBase)
}

// nodeViewSize is the encoded size without and with the baseline.
const (
	nodeViewSize     = 2 + 4 + 8 + 8 + 16
	nodeViewSizeBase = nodeViewSize + 16
)

// encode: u8 format │ u8 flags │ u32 count │ u64 version │ u64 model │
// 2×f64 fair │ [2×f64 base] (little-endian).
func (v *nodeView) encode(dst []byte) []byte {
	le := binary.LittleEndian
	flags := byte(0)
	if v.HasBase {
		flags = flagBaseline
	}
	dst = append(dst, recordFormat, flags)
	dst = le.AppendUint32(dst, v.Count)
	dst = le.AppendUint64(dst, v.Version)
	dst = le.AppendUint64(dst, v.Model)
	dst = le.AppendUint64(dst, math.Float64bits(v.Fair[0]))
	dst = le.AppendUint64(dst, math.Float64bits(v.Fair[1]))
	if v.HasBase {
		dst = le.AppendUint64(dst, math.Float64bits(v.Base[0]))
		dst = le.AppendUint64(dst, math.Float64bits(v.Base[1]))
	}
	return dst
}

func (v *nodeView) decode(b []byte) error {
	le := binary.LittleEndian
	if len(b) < nodeViewSize || b[0] != recordFormat {
		return fmt.Errorf("%w: node view of %d bytes", ErrCorrupt, len(b))
	}
	v.HasBase = b[1]&flagBaseline != 0
	want := nodeViewSize
	if v.HasBase {
		want = nodeViewSizeBase
	}
	if len(b) != want {
		return fmt.Errorf("%w: node view of %d bytes, want %d", ErrCorrupt, len(b), want)
	}
	v.Count = le.Uint32(b[2:])
	v.Version = le.Uint64(b[6:])
	v.Model = le.Uint64(b[14:])
	v.Fair[0] = math.Float64frombits(le.Uint64(b[22:]))
	v.Fair[1] = math.Float64frombits(le.Uint64(b[30:]))
	if v.HasBase {
		v.Base[0] = math.Float64frombits(le.Uint64(b[38:]))
		v.Base[1] = math.Float64frombits(le.Uint64(b[46:]))
	} else {
		v.Base = [2]float64{}
	}
	return nil
}

// getBitmap reads the bitmap under key from r (empty when absent).
func getBitmap(r storage.Reader, key []byte) (*roaring.Bitmap, error) {
	b, err := r.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return roaring.New(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("query: read %x: %w", key, err)
	}
	bm := roaring.New()
	if _, err := bm.FromBuffer(b); err != nil {
		return nil, fmt.Errorf("%w: bitmap %x: %w", ErrCorrupt, key, err)
	}
	return bm, nil
}

// encodeBitmap serialises a canonical form of bm: rebuilt from its values
// and run-optimised, so that equal sets give equal bytes whatever edits
// led to them (incremental maintenance must equal a rebuild bit for bit).
func encodeBitmap(bm *roaring.Bitmap) ([]byte, error) {
	c := roaring.BitmapOf(bm.ToArray()...)
	c.RunOptimize()
	return c.ToBytes()
}

// setBitmap writes bm under key, or deletes the key when bm is empty.
func setBitmap(b storage.Batch, key []byte, bm *roaring.Bitmap) error {
	if bm.IsEmpty() {
		return b.Delete(key)
	}
	enc, err := encodeBitmap(bm)
	if err != nil {
		return fmt.Errorf("query: encode bitmap: %w", err)
	}
	return b.Set(key, enc)
}

func getRootRecord(r storage.Reader, root uint32) (*rootRecord, error) {
	b, err := r.Get(rootKey(root))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("query: read root %d: %w", root, err)
	}
	rec, err := decodeRootRecord(b)
	if err != nil {
		return nil, fmt.Errorf("root %d: %w", root, err)
	}
	return rec, nil
}
