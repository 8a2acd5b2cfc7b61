package index

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Key prefixes (first byte of every key of the graph). None is 0x00, which
// the storage layer reserves. See the package doc for the full layout.
const (
	prefixMeta  = 'M' // graph metadata
	prefixNode  = 'N' // node record by internal id
	prefixExt   = 'X' // external id → internal id
	prefixAdj   = 'A' // adjacency bitmap by internal id
	prefixGroup = 'G' // named node sets (sensitive groups, labels, splits)
)

// Metadata keys.
var (
	keySchema  = []byte("Mschema")
	keyState   = []byte("Mstate")
	keyLoading = []byte("Mloading")
	keyLoad    = []byte("Mload")
	keyVersion = []byte("Mversion")
	keyScaling = []byte("Mscaling")
)

// Set kinds, the second byte of a prefixGroup key.
const (
	setSens     = 's' // + int8 sensitive value as a byte (0xff = unknown)
	setLabel    = 'y' // + int8 label as a byte (0xff = unlabelled)
	setLabelled = 'L' // labelled nodes (label 0 or 1)
	setSplit    = 'p' // + Split byte
	setDeleted  = 'd' // deleted nodes (tombstones)
)

func nodeKey(v uint32) []byte {
	var k [5]byte
	k[0] = prefixNode
	binary.BigEndian.PutUint32(k[1:], v)
	return k[:]
}

func adjKey(v uint32) []byte {
	var k [5]byte
	k[0] = prefixAdj
	binary.BigEndian.PutUint32(k[1:], v)
	return k[:]
}

// extKey encodes an external id so that keys sort by numeric value: the
// sign bit is flipped, then big-endian.
func extKey(ext int64) []byte {
	var k [9]byte
	k[0] = prefixExt
	binary.BigEndian.PutUint64(k[1:], uint64(ext)^(1<<63))
	return k[:]
}

func sensKey(s int8) []byte  { return []byte{prefixGroup, setSens, byte(s)} }
func labelKey(y int8) []byte { return []byte{prefixGroup, setLabel, byte(y)} }
func labelledKey() []byte    { return []byte{prefixGroup, setLabelled} }
func deletedKey() []byte     { return []byte{prefixGroup, setDeleted} }
func splitKey(s Split) []byte {
	return []byte{prefixGroup, setSplit, byte(s)}
}

// idFromKey returns the internal id of a nodeKey or adjKey.
func idFromKey(k []byte) (uint32, error) {
	if len(k) != 5 {
		return 0, fmt.Errorf("%w: key %x has length %d, want 5", ErrCorrupt, k, len(k))
	}
	return binary.BigEndian.Uint32(k[1:]), nil
}

// state is the small record rewritten by every update: the graph version,
// the node count and the undirected edge count.
type state struct {
	Version uint64
	Nodes   uint32
	Edges   uint64
}

const stateLen = 8 + 4 + 8

func (s state) encode() []byte {
	b := make([]byte, stateLen)
	binary.BigEndian.PutUint64(b[0:], s.Version)
	binary.BigEndian.PutUint32(b[8:], s.Nodes)
	binary.BigEndian.PutUint64(b[12:], s.Edges)
	return b
}

func decodeState(b []byte) (state, error) {
	if len(b) != stateLen {
		return state{}, fmt.Errorf("%w: state record has %d bytes, want %d", ErrCorrupt, len(b), stateLen)
	}
	return state{
		Version: binary.BigEndian.Uint64(b[0:]),
		Nodes:   binary.BigEndian.Uint32(b[8:]),
		Edges:   binary.BigEndian.Uint64(b[12:]),
	}, nil
}

func encodeU64(x uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, x)
}

func decodeU64(b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("%w: counter has %d bytes, want 8", ErrCorrupt, len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// Node record layout: ext int64 BE | sens int8 | label int8 |
// dim × float32 little-endian. The split is kept only in the split bitmaps
// (the loader computes it after the records are written).
const nodeHeaderLen = 8 + 2

// appendNodeRecord appends the encoding of n to dst.
func appendNodeRecord(dst []byte, n *Node) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(n.ExternalID))
	dst = append(dst, byte(n.Sensitive), byte(n.Label))
	for _, f := range n.Features {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(f))
	}
	return dst
}

// decodeNodeHeader decodes the fixed part of a node record and checks its
// length against dim.
func decodeNodeHeader(b []byte, dim int) (ext int64, sens, label int8, err error) {
	if len(b) != nodeHeaderLen+4*dim {
		return 0, 0, 0, fmt.Errorf("%w: node record has %d bytes, want %d", ErrCorrupt, len(b), nodeHeaderLen+4*dim)
	}
	return int64(binary.BigEndian.Uint64(b)), int8(b[8]), int8(b[9]), nil
}

// appendFeatures decodes the features of a node record into dst.
func appendFeatures(dst []float32, b []byte) []float32 {
	for i := nodeHeaderLen; i+4 <= len(b); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst
}
