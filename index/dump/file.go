package dump

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// gzipMagic are the first two bytes of every gzip member (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// File is a dump file opened for reading. Reads return the decompressed
// content: gzip is detected from the magic bytes, whatever the file is called.
//
// A File is not safe for concurrent reads; Offset and Size may be called
// from any goroutine (for a progress bar).
type File struct {
	f      *os.File
	name   string
	size   int64
	raw    countingReader
	r      io.Reader
	gz     *gzip.Reader
	closed bool
}

// Open opens path for reading, decompressing it if it is gzip.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dump: open: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("dump: open: %w", err)
	}
	d := &File{f: f, name: filepath.Base(path), size: st.Size()}
	d.raw.r = f
	r, gz, err := decompress(&d.raw)
	if err != nil {
		f.Close()
		return nil, &Error{File: d.name, Index: -1, Kind: ErrRead, Err: err}
	}
	d.r, d.gz = r, gz
	return d, nil
}

// Name returns the base name of the file, as used in error messages.
func (d *File) Name() string { return d.name }

// Size returns the size of the file on disk (compressed, if gzip).
func (d *File) Size() int64 { return d.size }

// Offset returns how many bytes of the file on disk have been consumed so
// far; with Size it gives the fraction done.
func (d *File) Offset() int64 { return d.raw.n.Load() }

// Compressed reports whether the file is gzip.
func (d *File) Compressed() bool { return d.gz != nil }

// Read reads decompressed bytes.
func (d *File) Read(p []byte) (int, error) { return d.r.Read(p) }

// Close closes the file. A second call is harmless.
func (d *File) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	var errs []error
	if d.gz != nil {
		errs = append(errs, d.gz.Close())
	}
	errs = append(errs, d.f.Close())
	return errors.Join(errs...)
}

// NewReader returns a reader of the decompressed content of r, which may be
// plain or gzip (detected by the magic bytes).
func NewReader(r io.Reader) (io.Reader, error) {
	dr, _, err := decompress(r)
	return dr, err
}

func decompress(r io.Reader) (io.Reader, *gzip.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, nil, err
	}
	if !bytes.Equal(head, gzipMagic) {
		return skipBOM(br), nil, nil
	}
	gz, err := gzip.NewReader(br)
	if err != nil {
		return nil, nil, gzipErr(err)
	}
	return &bomReader{r: gzipReader{gz}}, gz, nil
}

// utf8BOM is the UTF-8 byte order mark. One rule for every dump file
// (node, edge and id files, plain or gzip): a BOM at the very start is
// dropped, anywhere else it is content.
var utf8BOM = []byte("\xef\xbb\xbf")

// skipBOM drops a leading BOM from br.
func skipBOM(br *bufio.Reader) io.Reader {
	if b, err := br.Peek(len(utf8BOM)); err == nil && bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	return br
}

// bomReader drops a leading BOM from r's content, looking on the first
// Read (a gzip member is only decompressed when read).
type bomReader struct {
	r       io.Reader
	checked bool
	head    []byte // bytes read ahead that are content
}

func (b *bomReader) Read(p []byte) (int, error) {
	if !b.checked {
		b.checked = true
		buf := make([]byte, len(utf8BOM))
		n, err := io.ReadFull(b.r, buf)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return 0, err
		}
		if n == len(utf8BOM) && bytes.Equal(buf, utf8BOM) {
			n = 0
		}
		b.head = buf[:n]
	}
	if len(b.head) > 0 {
		n := copy(p, b.head)
		b.head = b.head[n:]
		return n, nil
	}
	return b.r.Read(p)
}

// gzipReader marks the errors of the decompressor as such: a truncated
// member otherwise reads as a bare "unexpected EOF".
type gzipReader struct{ gz *gzip.Reader }

func (g gzipReader) Read(p []byte) (int, error) {
	n, err := g.gz.Read(p)
	if err != nil && err != io.EOF {
		err = gzipErr(err)
	}
	return n, err
}

// gzipErr prefixes err with "gzip: " unless compress/gzip already did.
func gzipErr(err error) error {
	if strings.HasPrefix(err.Error(), "gzip: ") {
		return err
	}
	if err == io.ErrUnexpectedEOF {
		return fmt.Errorf("gzip: %w (the compressed file is truncated)", err)
	}
	return fmt.Errorf("gzip: %w", err)
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// FindFile returns the path of name in dir, or of name+".gz" if only the
// compressed file exists.
func FindFile(dir, name string) (string, error) {
	for _, p := range []string{filepath.Join(dir, name), filepath.Join(dir, name+".gz")} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("dump: %s(.gz) not found in %s: %w", name, dir, os.ErrNotExist)
}
