package dump

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// spillBlock is the size of the memory blocks of a SpillBuffer.
const spillBlock = 1 << 20

// SpillBuffer holds a spill between AnalyzeSpill, which writes it, and
// Table.NewSpillReader, which reads it back (see spill.go for the format).
// It keeps what is written in memory, in blocks of 1 MiB, up to a budget of
// bytes, and moves all of it to a temporary file beyond that; a budget of
// 0 means a file from the first byte. The file is unlinked as soon as it
// is created where the system allows it (the open descriptor keeps it), so
// that not even a killed process leaves it behind. Close releases both.
//
// A SpillBuffer is not safe for concurrent use.
type SpillBuffer struct {
	dir      string
	budget   int
	blocks   [][]byte
	size     int
	f        *os.File
	bw       *bufio.Writer
	unlinked bool // the file was removed from dir while open
}

// NewSpillBuffer returns an empty spill that stays in memory up to budget
// bytes and otherwise goes to a temporary file in dir ("" means
// os.TempDir()). A negative budget counts as 0.
func NewSpillBuffer(dir string, budget int) *SpillBuffer {
	return &SpillBuffer{dir: dir, budget: max(budget, 0)}
}

// Write appends p to the spill.
func (s *SpillBuffer) Write(p []byte) (int, error) {
	if s.f == nil && s.size+len(p) > s.budget {
		if err := s.toFile(); err != nil {
			return 0, err
		}
	}
	if s.f != nil {
		return s.bw.Write(p)
	}
	n := len(p)
	for len(p) > 0 {
		if len(s.blocks) == 0 || len(s.blocks[len(s.blocks)-1]) == spillBlock {
			s.blocks = append(s.blocks, make([]byte, 0, spillBlock))
		}
		last := &s.blocks[len(s.blocks)-1]
		k := copy((*last)[len(*last):spillBlock], p)
		*last = (*last)[:len(*last)+k]
		p = p[k:]
	}
	s.size += n
	return n, nil
}

// InFile reports whether the spill has moved to its temporary file.
func (s *SpillBuffer) InFile() bool { return s.f != nil }

// toFile moves the spill to a temporary file.
func (s *SpillBuffer) toFile() error {
	f, err := os.CreateTemp(s.dir, "fasd-load-*.spill")
	if err != nil {
		return fmt.Errorf("index: load: create spill file: %w", err)
	}
	s.f = f
	s.unlinked = os.Remove(f.Name()) == nil
	s.bw = bufio.NewWriterSize(f, 1<<20)
	for _, b := range s.blocks {
		if _, err := s.bw.Write(b); err != nil {
			return fmt.Errorf("index: load: write spill file: %w", err)
		}
	}
	s.blocks = nil
	return nil
}

// Reader returns a buffered reader of everything written so far, for
// Table.NewSpillReader. Nothing may be written after it.
func (s *SpillBuffer) Reader() (io.Reader, error) {
	if s.f == nil {
		rs := make([]io.Reader, len(s.blocks))
		for i, b := range s.blocks {
			rs[i] = bytes.NewReader(b)
		}
		return bufio.NewReaderSize(io.MultiReader(rs...), 64<<10), nil
	}
	if err := s.bw.Flush(); err != nil {
		return nil, fmt.Errorf("index: load: write spill file: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("index: load: rewind spill file: %w", err)
	}
	return bufio.NewReaderSize(s.f, 1<<20), nil
}

// Close releases the memory and closes and removes the file.
func (s *SpillBuffer) Close() {
	s.blocks = nil
	if s.f == nil {
		return
	}
	s.f.Close()
	if !s.unlinked {
		os.Remove(s.f.Name())
	}
	s.f = nil
}
