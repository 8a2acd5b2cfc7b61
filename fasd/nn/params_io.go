package nn

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/fasd-db/fasd/fasd/tensor"
)

// Parameter file format, version 1 (all integers little-endian):
//
//	magic    [8]byte  "FASDPRM\x00"
//	version  uint32   1
//	dtype    uint8    4 = float32, 8 = float64
//	count    uint32   number of tensors
//	count × {
//	  nameLen uint16, name [nameLen]byte,
//	  rank uint8, dims [rank]uint32,
//	  data [Π dims] float of dtype
//	}
//	crc      uint32   CRC-32C (Castagnoli) of every byte above
//
// Loading checks magic, version, checksum, names and shapes against the
// receiving parameters; values may be converted between float32 and float64.

// Sentinel errors of LoadParams.
var (
	ErrBadMagic       = errors.New("nn: not a parameter file (bad magic)")
	ErrVersion        = errors.New("nn: unsupported parameter file version")
	ErrChecksum       = errors.New("nn: parameter file checksum mismatch")
	ErrShapeMismatch  = errors.New("nn: parameter name or shape mismatch")
	ErrCorrupt        = errors.New("nn: corrupt parameter file")
	paramMagic        = [8]byte{'F', 'A', 'S', 'D', 'P', 'R', 'M', 0}
	castagnoli        = crc32.MakeTable(crc32.Castagnoli)
	paramVersion      = uint32(1)
	maxParamNameBytes = 1 << 12
)

// SaveParams writes params to w in the format above.
func SaveParams[T tensor.Float](w io.Writer, params []*Param[T]) error {
	bw := bufio.NewWriter(w)
	h := crc32.New(castagnoli)
	out := io.MultiWriter(bw, h)
	var dtype uint8 = 8
	if _, ok := any(T(0)).(float32); ok {
		dtype = 4
	}
	le := binary.LittleEndian
	var hdr []byte
	hdr = append(hdr, paramMagic[:]...)
	hdr = le.AppendUint32(hdr, paramVersion)
	hdr = append(hdr, dtype)
	hdr = le.AppendUint32(hdr, uint32(len(params)))
	if _, err := out.Write(hdr); err != nil {
		return fmt.Errorf("nn: save params: %w", err)
	}
	for _, p := range params {
		if len(p.Name) > maxParamNameBytes {
			return fmt.Errorf("nn: save params: name of %d bytes", len(p.Name))
		}
		var b []byte
		b = le.AppendUint16(b, uint16(len(p.Name)))
		b = append(b, p.Name...)
		s := p.Value.Shape
		b = append(b, uint8(s.Rank()))
		for i := 0; i < s.Rank(); i++ {
			b = le.AppendUint32(b, uint32(s.Dim(i)))
		}
		for _, v := range p.Value.Data {
			if dtype == 4 {
				b = le.AppendUint32(b, math.Float32bits(float32(v)))
			} else {
				b = le.AppendUint64(b, math.Float64bits(float64(v)))
			}
		}
		if _, err := out.Write(b); err != nil {
			return fmt.Errorf("nn: save params %q: %w", p.Name, err)
		}
	}
	if err := binary.Write(bw, le, h.Sum32()); err != nil {
		return fmt.Errorf("nn: save params: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("nn: save params: %w", err)
	}
	return nil
}

// LoadParams reads a parameter file from r into params, which must match the
// stored names and shapes in order. Nothing is modified unless the whole file
// is valid. Errors wrap ErrBadMagic, ErrVersion, ErrChecksum,
// ErrShapeMismatch or ErrCorrupt (or the reader's error).
func LoadParams[T tensor.Float](r io.Reader, params []*Param[T]) error {
	h := crc32.New(castagnoli)
	rd := &crcReader{r: bufio.NewReader(r), h: h}
	le := binary.LittleEndian
	var hdr [17]byte
	if err := rd.full(hdr[:]); err != nil {
		return fmt.Errorf("nn: load params: header: %w", err)
	}
	if [8]byte(hdr[:8]) != paramMagic {
		return ErrBadMagic
	}
	if v := le.Uint32(hdr[8:]); v != paramVersion {
		return fmt.Errorf("%w: %d (want %d)", ErrVersion, v, paramVersion)
	}
	dtype := hdr[12]
	if dtype != 4 && dtype != 8 {
		return fmt.Errorf("%w: dtype %d", ErrCorrupt, dtype)
	}
	if n := le.Uint32(hdr[13:]); int64(n) != int64(len(params)) {
		return fmt.Errorf("%w: file has %d tensors, model has %d", ErrShapeMismatch, n, len(params))
	}
	vals := make([][]T, len(params))
	var buf [8]byte
	for i, p := range params {
		if err := rd.full(buf[:2]); err != nil {
			return fmt.Errorf("nn: load params: tensor %d: %w", i, err)
		}
		name := make([]byte, le.Uint16(buf[:2]))
		if err := rd.full(name); err != nil {
			return fmt.Errorf("nn: load params: tensor %d: %w", i, err)
		}
		if string(name) != p.Name {
			return fmt.Errorf("%w: tensor %d is %q, model has %q", ErrShapeMismatch, i, name, p.Name)
		}
		if err := rd.full(buf[:1]); err != nil {
			return fmt.Errorf("nn: load params: %q: %w", p.Name, err)
		}
		s := p.Value.Shape
		if int(buf[0]) != s.Rank() {
			return fmt.Errorf("%w: %q has rank %d, model has %v", ErrShapeMismatch, p.Name, buf[0], s)
		}
		for d := 0; d < s.Rank(); d++ {
			if err := rd.full(buf[:4]); err != nil {
				return fmt.Errorf("nn: load params: %q: %w", p.Name, err)
			}
			if int64(le.Uint32(buf[:4])) != int64(s.Dim(d)) {
				return fmt.Errorf("%w: %q dim %d is %d, model has %v", ErrShapeMismatch, p.Name, d, le.Uint32(buf[:4]), s)
			}
		}
		v := make([]T, s.Len())
		raw := make([]byte, len(v)*int(dtype))
		if err := rd.full(raw); err != nil {
			return fmt.Errorf("nn: load params: %q: %w", p.Name, err)
		}
		for j := range v {
			if dtype == 4 {
				v[j] = T(math.Float32frombits(le.Uint32(raw[4*j:])))
			} else {
				v[j] = T(math.Float64frombits(le.Uint64(raw[8*j:])))
			}
		}
		vals[i] = v
	}
	want := h.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(rd.r, tail[:]); err != nil {
		return fmt.Errorf("nn: load params: checksum: %w", noEOF(err))
	}
	if le.Uint32(tail[:]) != want {
		return ErrChecksum
	}
	for i, p := range params {
		copy(p.Value.Data, vals[i])
	}
	return nil
}

type crcReader struct {
	r *bufio.Reader
	h hashWriter
}

type hashWriter interface{ Write([]byte) (int, error) }

func (c *crcReader) full(b []byte) error {
	if _, err := io.ReadFull(c.r, b); err != nil {
		return noEOF(err)
	}
	c.h.Write(b)
	return nil
}

// noEOF turns a clean EOF inside the file into ErrCorrupt (truncation).
func noEOF(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: truncated", ErrCorrupt)
	}
	return err
}
