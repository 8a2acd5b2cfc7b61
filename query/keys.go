package query

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/storage"
)

// prefixViews is the first byte of every key of the views (see doc.go),
// registered in index.KeyPrefixes.
const prefixViews = index.PrefixViews

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

// Record formats. Format 1 stored at most two probability vectors (the
// fair one and, flagged, the w/o-Diffusion baseline); format 2 stores any
// number of named variants (their names are in the meta record). Both are
// read; format 2 is written.
const (
	recordFormatV1 = 1
	recordFormat   = 2
	flagBaselineV1 = 1 // format 1: the record carries baseline probabilities
	maxVariants    = 255
)

// variantCount returns the number of variants of a record or view in
// format f whose second byte is b1.
func variantCount(f, b1 byte) (int, bool) {
	switch f {
	case recordFormatV1:
		return 1 + int(b1&flagBaselineV1), true
	case recordFormat:
		return int(b1), b1 >= 1
	}
	return 0, false
}

// rootRecord is the stored recipe and contributions of one root's subgraph.
// The subgraph itself is not stored: (run seed, root, model) regenerate it.
type rootRecord struct {
	Version  uint64   // graph version the subgraph was sampled at
	Model    uint64   // model tag
	Members  []uint32 // local → global; Members[0] is the root
	Expanded []uint16 // local indices whose neighbour lists were read
	// Probs are, per variant of the model, len(Members)×2 class
	// probabilities; Probs[0] is the served (fair) variant.
	Probs [][]float32
}

// encode: u8 format │ u8 variants k │ u16 n │ u16 e │ u64 version │ u64
// model │ n×u32 members │ e×u16 expanded │ k × 2n×f32 probabilities
// (little-endian).
func (r *rootRecord) encode(dst []byte) []byte {
	le := binary.LittleEndian
	dst = append(dst, recordFormat, byte(len(r.Probs)))
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
	for _, ps := range r.Probs {
		for _, p := range ps {
			dst = le.AppendUint32(dst, math.Float32bits(p))
		}
	}
	return dst
}

func decodeRootRecord(b []byte) (*rootRecord, error) {
	le := binary.LittleEndian
	if len(b) < 22 {
		return nil, fmt.Errorf("%w: root record of %d bytes", ErrCorrupt, len(b))
	}
	k, ok := variantCount(b[0], b[1])
	if !ok {
		return nil, fmt.Errorf("%w: root record format %d with %d variants", ErrCorrupt, b[0], b[1])
	}
	n, e := int(le.Uint16(b[2:])), int(le.Uint16(b[4:]))
	want := 22 + 4*n + 2*e + k*8*n
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
	r.Probs = make([][]float32, k)
	for v := range r.Probs {
		p := make([]float32, 2*n)
		for i := range p {
			p[i] = math.Float32frombits(le.Uint32(b[off:]))
			off += 4
		}
		r.Probs[v] = p
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

// nodeView is the stored prediction of one node: per variant, the mean
// class probabilities over the subgraphs that contain it.
type nodeView struct {
	Count   uint32       // contributing subgraphs
	Version uint64       // graph version the view was computed at
	Model   uint64       // model tag
	Probs   [][2]float64 // per variant; Probs[0] is the served (fair) one
}

// nodeViewHeader is the encoded size before the probabilities.
const nodeViewHeader = 2 + 4 + 8 + 8

// encode: u8 format │ u8 variants k │ u32 count │ u64 version │ u64 model │
// k × 2×f64 mean probabilities (little-endian).
func (v *nodeView) encode(dst []byte) []byte {
	le := binary.LittleEndian
	dst = append(dst, recordFormat, byte(len(v.Probs)))
	dst = le.AppendUint32(dst, v.Count)
	dst = le.AppendUint64(dst, v.Version)
	dst = le.AppendUint64(dst, v.Model)
	for _, p := range v.Probs {
		dst = le.AppendUint64(dst, math.Float64bits(p[0]))
		dst = le.AppendUint64(dst, math.Float64bits(p[1]))
	}
	return dst
}

// decode fills v from b, reusing v.Probs.
func (v *nodeView) decode(b []byte) error {
	le := binary.LittleEndian
	if len(b) < nodeViewHeader {
		return fmt.Errorf("%w: node view of %d bytes", ErrCorrupt, len(b))
	}
	k, ok := variantCount(b[0], b[1])
	if !ok {
		return fmt.Errorf("%w: node view format %d with %d variants", ErrCorrupt, b[0], b[1])
	}
	if want := nodeViewHeader + 16*k; len(b) != want {
		return fmt.Errorf("%w: node view of %d bytes, want %d", ErrCorrupt, len(b), want)
	}
	v.Count = le.Uint32(b[2:])
	v.Version = le.Uint64(b[6:])
	v.Model = le.Uint64(b[14:])
	if cap(v.Probs) < k {
		v.Probs = make([][2]float64, k)
	}
	v.Probs = v.Probs[:k]
	off := nodeViewHeader
	for i := range v.Probs {
		v.Probs[i][0] = math.Float64frombits(le.Uint64(b[off:]))
		v.Probs[i][1] = math.Float64frombits(le.Uint64(b[off+8:]))
		off += 16
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
	bm, err := index.DecodeBitmap(b)
	if err != nil {
		return nil, fmt.Errorf("%w: bitmap %x: %w", ErrCorrupt, key, err)
	}
	return bm, nil
}

// getBitmaps reads the bitmaps under keys (the view-state sets keyRoots,
// keyDirty, keyAffected, keyStale, say), in the order of keys; a missing
// key reads as an empty set.
func getBitmaps(r storage.Reader, keys ...[]byte) ([]*roaring.Bitmap, error) {
	out := make([]*roaring.Bitmap, len(keys))
	for i, k := range keys {
		bm, err := getBitmap(r, k)
		if err != nil {
			return nil, err
		}
		out[i] = bm
	}
	return out, nil
}

// encodeBitmap serialises a canonical form of bm, so that equal sets give
// equal bytes whatever edits led to them (incremental maintenance must
// equal a rebuild bit for bit). RunOptimize gives every container the type
// fixed by its cardinality and number of runs alone (run if smallest, else
// array up to 4,096 values, else bitmap), whatever type it had, so a copy
// run-optimised is that form without rebuilding the set value by value:
// TestEncodeBitmapCanonical checks it against the rebuild.
func encodeBitmap(bm *roaring.Bitmap) ([]byte, error) {
	c := bm.Clone()
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
