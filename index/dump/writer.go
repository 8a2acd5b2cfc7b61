package dump

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Header names the columns a NodeWriter writes, in this order: ID (left out
// when ""), Sensitive, Label, then Features.
type Header struct {
	ID        string
	Sensitive string
	Label     string
	Features  []string
}

// Spec returns a Spec that reads the written file back, with scaling as
// given.
func (h Header) Spec(scale bool) Spec {
	return Spec{
		IDColumn:  h.ID,
		Sensitive: SensitiveSpec{Column: h.Sensitive},
		Label:     LabelSpec{Column: h.Label},
		Scale:     scale,
	}
}

func (h Header) columns() []string {
	var cols []string
	if h.ID != "" {
		cols = append(cols, h.ID)
	}
	cols = append(cols, h.Sensitive, h.Label)
	return append(cols, h.Features...)
}

// NodeWriter writes a node file in the format Analyze reads: a CSV header,
// then one row per node with the sensitive value and the label as integers
// (0, 1, or -1 for unknown / unlabelled) and features in the shortest
// notation that reads back to the same float32. It is not safe for
// concurrent use. Call Flush at the end.
type NodeWriter struct {
	bw  *bufio.Writer
	h   Header
	buf []byte
	err error
}

// NewNodeWriter validates h, writes the header to w and returns the writer.
func NewNodeWriter(w io.Writer, h Header) (*NodeWriter, error) {
	cols := h.columns()
	seen := map[string]bool{}
	for _, c := range cols {
		if c == "" || seen[c] || strings.ContainsAny(c, "\r\n") {
			return nil, newError(ErrSpec, fmt.Sprintf("header column %q empty, repeated or multi-line", c))
		}
		seen[c] = true
	}
	nw := &NodeWriter{bw: bufio.NewWriterSize(w, 1<<16), h: h}
	cw := csv.NewWriter(nw.bw)
	if err := cw.Write(cols); err != nil {
		return nil, fmt.Errorf("dump: write header: %w", err)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return nil, fmt.Errorf("dump: write header: %w", err)
	}
	return nw, nil
}

// WriteRow writes one node. id is ignored when the header has no id column.
// features must have one value per feature column; NaN and ±Inf are refused.
func (nw *NodeWriter) WriteRow(id int64, sensitive, label int8, features []float32) error {
	if nw.err != nil {
		return nw.err
	}
	if len(features) != len(nw.h.Features) {
		return newError(ErrSpec, fmt.Sprintf("row has %d features, header %d", len(features), len(nw.h.Features)))
	}
	b := nw.buf[:0]
	if nw.h.ID != "" {
		b = strconv.AppendInt(b, id, 10)
		b = append(b, ',')
	}
	b = strconv.AppendInt(b, int64(sensitive), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(label), 10)
	for j, f := range features {
		if f != f || f > maxFloat32 || f < -maxFloat32 {
			return newError(ErrNonFinite, fmt.Sprintf("feature %q: %v", nw.h.Features[j], f))
		}
		b = append(b, ',')
		switch f {
		case 0:
			b = append(b, '0')
		case 1:
			b = append(b, '1')
		default:
			b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
		}
	}
	b = append(b, '\n')
	nw.buf = b
	if _, err := nw.bw.Write(b); err != nil {
		nw.err = fmt.Errorf("dump: write row: %w", err)
	}
	return nw.err
}

const maxFloat32 = 3.4028234663852886e38

// Flush writes buffered rows to the underlying writer.
func (nw *NodeWriter) Flush() error {
	if nw.err != nil {
		return nw.err
	}
	if err := nw.bw.Flush(); err != nil {
		nw.err = fmt.Errorf("dump: flush: %w", err)
	}
	return nw.err
}

// EdgeWriter writes an edge list: one "u<TAB>v" line per edge. It is not safe
// for concurrent use. Call Flush at the end.
type EdgeWriter struct {
	bw  *bufio.Writer
	buf []byte
	err error
}

// NewEdgeWriter returns an EdgeWriter on w.
func NewEdgeWriter(w io.Writer) *EdgeWriter {
	return &EdgeWriter{bw: bufio.NewWriterSize(w, 1<<16)}
}

// WriteEdge writes one edge.
func (ew *EdgeWriter) WriteEdge(u, v int64) error {
	if ew.err != nil {
		return ew.err
	}
	b := strconv.AppendInt(ew.buf[:0], u, 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, v, 10)
	b = append(b, '\n')
	ew.buf = b
	if _, err := ew.bw.Write(b); err != nil {
		ew.err = fmt.Errorf("dump: write edge: %w", err)
	}
	return ew.err
}

// Flush writes buffered edges to the underlying writer.
func (ew *EdgeWriter) Flush() error {
	if ew.err != nil {
		return ew.err
	}
	if err := ew.bw.Flush(); err != nil {
		ew.err = fmt.Errorf("dump: flush: %w", err)
	}
	return ew.err
}

// Output is a file being written; it is gzip-compressed when its name ends
// in ".gz". The gzip header carries no name or time, so equal content gives
// equal bytes.
type Output struct {
	f      *os.File
	gz     *gzip.Writer
	w      io.Writer
	closed bool
}

// Create creates (or truncates) path for writing.
func Create(path string) (*Output, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("dump: create: %w", err)
	}
	o := &Output{f: f, w: f}
	if strings.HasSuffix(path, ".gz") {
		o.gz, _ = gzip.NewWriterLevel(f, gzip.BestSpeed) // the level is valid
		o.w = o.gz
	}
	return o, nil
}

// Write writes (compressing if gzip).
func (o *Output) Write(p []byte) (int, error) { return o.w.Write(p) }

// Close finishes the gzip stream, syncs and closes the file. A second call
// is harmless.
func (o *Output) Close() error {
	if o.closed {
		return nil
	}
	o.closed = true
	var errs []error
	if o.gz != nil {
		errs = append(errs, o.gz.Close())
	}
	errs = append(errs, o.f.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("dump: close %s: %w", o.f.Name(), err)
	}
	return nil
}
