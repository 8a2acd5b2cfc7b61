package dump

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// The spill is pass 1's copy of the parsed rows, read back by pass 2 instead
// of the CSV (AnalyzeSpill, Table.NewSpillReader). It is a private,
// short-lived format: written and read by the same process, never stored.
//
// Each row is
//
//	uvarint  length of the rest of the row in bytes
//	uvarint  line where the row starts in the node file
//	varint   node id (left out without an id column: the row index)
//	int8     sensitive value (0, 1, Unknown)
//	int8     label (0, 1, Unlabelled)
//	…        one code per feature, unscaled:
//	         0…spillSmallMax  the integer value itself (+0 included, -0 not)
//	         spillF32 + 4 bytes  a float32 (little endian) equal to the value
//	         spillF64 + 8 bytes  the float64 (little endian)
//
// so a 0/1 indicator takes one byte, and every value reads back as exactly
// the float64 pass 1 parsed.
const (
	spillSmallMax = 250
	spillF32      = 0xfe
	spillF64      = 0xff
)

// errSpillCorrupt reports a spill that does not decode.
var errSpillCorrupt = errors.New("dump: spill corrupt")

// appendSpillBody appends the spill encoding of one parsed row, without
// its length and line, to dst. The id is left out when the table has no id
// column (it is then the row index).
func appendSpillBody(dst []byte, rec *record, hasID bool) []byte {
	if hasID {
		dst = binary.AppendVarint(dst, rec.id)
	}
	dst = append(dst, byte(rec.sens), byte(rec.label))
	dst = slices.Grow(dst, 9*len(rec.vals))
	out := dst[len(dst) : len(dst)+9*len(rec.vals)]
	p := 0
	for _, v := range rec.vals {
		if v >= 0 && v <= spillSmallMax {
			// Bit equality also tells -0 from +0, without a branch on the
			// (unpredictable) value.
			if u := uint8(v); math.Float64bits(float64(u)) == math.Float64bits(v) {
				out[p] = u
				p++
				continue
			}
		}
		if f := float32(v); float64(f) == v {
			out[p] = spillF32
			binary.LittleEndian.PutUint32(out[p+1:p+5], math.Float32bits(f))
			p += 5
			continue
		}
		out[p] = spillF64
		binary.LittleEndian.PutUint64(out[p+1:p+9], math.Float64bits(v))
		p += 9
	}
	return dst[:len(dst)+p]
}

// appendSpillRow appends a whole spill row to dst: length, line and the
// body made by appendSpillBody.
func appendSpillRow(dst []byte, line int, body []byte) []byte {
	var l [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(l[:], uint64(line))
	dst = binary.AppendUvarint(dst, uint64(n+len(body)))
	dst = append(dst, l[:n]...)
	return append(dst, body...)
}

// spillReader decodes the rows of a spill.
type spillReader struct {
	r     io.Reader
	br    *bufio.Reader
	nf    int
	hasID bool
	buf   []byte
}

// next decodes the next row: the id and attributes into rec and the
// features, mapped by sc, into out (nf entries). It returns the row's line;
// io.EOF at a clean end. The values 0 and 1, most of a typical dump, are
// looked up in sc instead of being scaled one by one.
func (s *spillReader) next(rec *record, sc *scaler, out []float32, index int) (int, error) {
	if s.br == nil {
		if br, ok := s.r.(*bufio.Reader); ok {
			s.br = br
		} else {
			s.br = bufio.NewReaderSize(s.r, 1<<16)
		}
	}
	n, err := binary.ReadUvarint(s.br)
	if err == io.EOF {
		return 0, io.EOF
	}
	if err != nil {
		return 0, errors.Join(errSpillCorrupt, err)
	}
	if n > uint64(2+2*binary.MaxVarintLen64+9*s.nf) {
		return 0, errSpillCorrupt
	}
	if uint64(cap(s.buf)) < n {
		s.buf = make([]byte, n)
	}
	b := s.buf[:n]
	if _, err := io.ReadFull(s.br, b); err != nil {
		return 0, errors.Join(errSpillCorrupt, err)
	}
	line, k := binary.Uvarint(b)
	if k <= 0 || line > math.MaxInt {
		return 0, errSpillCorrupt
	}
	b = b[k:]
	rec.id = int64(index)
	if s.hasID {
		rec.id, k = binary.Varint(b)
		if k <= 0 {
			return 0, errSpillCorrupt
		}
		b = b[k:]
	}
	if len(b) < 2 {
		return 0, errSpillCorrupt
	}
	rec.sens, rec.label = int8(b[0]), int8(b[1])
	b = b[2:]
	out = out[:s.nf]
	small, inRange := sc.small[:2*s.nf], sc.smallInRange[:2*s.nf]
	for j := range out {
		if len(b) == 0 {
			return 0, errSpillCorrupt
		}
		t := b[0]
		if t <= 1 && inRange[2*j+int(t)] {
			out[j] = small[2*j+int(t)]
			b = b[1:]
			continue
		}
		var v float64
		switch {
		case t <= spillSmallMax:
			v = float64(t)
			b = b[1:]
		case t == spillF32 && len(b) >= 5:
			v = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[1:5])))
			b = b[5:]
		case t == spillF64 && len(b) >= 9:
			v = math.Float64frombits(binary.LittleEndian.Uint64(b[1:9]))
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, errSpillCorrupt
			}
			b = b[9:]
		default:
			return 0, errSpillCorrupt
		}
		x, ok := sc.value(j, v)
		if !ok {
			return 0, fmt.Errorf("%w: feature %d: %v outside the range of pass 1", errSpillCorrupt, j+1, v)
		}
		out[j] = x
	}
	if len(b) != 0 {
		return 0, errSpillCorrupt
	}
	return int(line), nil
}
