package dump

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
)

// maxEdgeLine bounds an edge line; longer lines are malformed.
const maxEdgeLine = 1 << 16

// ParseEdgeLine parses one line of an edge list: two endpoints separated by
// spaces or tabs or by one comma (with optional blanks around it), each an
// int64 written as a decimal integer or in float notation with an integral
// value (8.380e+02 is 838). A '#' starts a comment that runs to the end of
// the line. Leading and trailing blanks and a trailing CR (or LF) are
// ignored. A line of blanks and comment only gives blank == true. Any other
// line is an *Error of kind ErrBadEdge (without file or line; EdgeReader
// adds them) that quotes at most a bounded prefix of the line.
//
// This is the one edge-line grammar of fasd: the edge files of fasd load and
// fasd update are both read with it.
func ParseEdgeLine(line []byte) (u, v int64, blank bool, err error) {
	full := bytes.TrimRight(line, "\r\n") // echoed in errors
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	var field [2][]byte
	n, commas := 0, 0 // fields so far; commas since the last field
	i := 0
	for {
		for i < len(line) && (isBlank(line[i]) || line[i] == ',') {
			if line[i] == ',' {
				commas++
			}
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && !isBlank(line[j]) && line[j] != ',' {
			j++
		}
		if n == 2 {
			return 0, 0, false, newError(ErrBadEdge, "more than two fields: "+echo(full))
		}
		if commas > n { // before the first endpoint, or two between them
			return 0, 0, false, newError(ErrBadEdge, "stray comma: "+echo(full))
		}
		field[n] = line[i:j]
		n, commas = n+1, 0
		i = j
	}
	switch {
	case n == 0 && commas == 0:
		return 0, 0, true, nil
	case n == 1:
		return 0, 0, false, newError(ErrBadEdge, "one field, want two: "+echo(full))
	case commas > 0:
		return 0, 0, false, newError(ErrBadEdge, "stray comma: "+echo(full))
	}
	var ends [2]int64
	for k := range 2 {
		x, detail, ok := parseInteger(field[k])
		if !ok {
			return 0, 0, false, &Error{Index: k, Kind: ErrBadEdge, Detail: detail}
		}
		ends[k] = x
	}
	return ends[0], ends[1], false, nil
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// EdgeReader streams the edges of an edge list, skipping blank and comment
// lines (see ParseEdgeLine). It
// follows the Next/Edge/Err pattern and is not safe for concurrent use.
//
//	er, err := dump.OpenEdges(path)
//	...
//	defer er.Close()
//	for er.Next() {
//		u, v := er.Edge()
//		...
//	}
//	if err := er.Err(); err != nil { ... }
type EdgeReader struct {
	br    *bufio.Reader
	name  string
	file  *File
	line  int
	u, v  int64
	err   error
	lines int
	done  bool
}

// NewEdgeReader reads edges from r (decompressed, see NewReader); name is used
// in error messages.
func NewEdgeReader(r io.Reader, name string) *EdgeReader {
	return &EdgeReader{br: bufio.NewReaderSize(r, maxEdgeLine), name: name}
}

// OpenEdges opens path (plain or gzip) for reading edges. Close the reader to
// close the file.
func OpenEdges(path string) (*EdgeReader, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	er := NewEdgeReader(f, f.Name())
	er.file = f
	return er, nil
}

// Next advances to the next edge. It returns false at the end or on error.
func (er *EdgeReader) Next() bool {
	for !er.done {
		b, err := er.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			er.line++
			er.err = &Error{File: er.name, Line: er.line, Index: -1, Kind: ErrBadEdge, Detail: "line longer than " + strconv.Itoa(maxEdgeLine) + " bytes"}
			er.done = true
			return false
		}
		if err != nil && err != io.EOF {
			er.err = &Error{File: er.name, Line: er.line + 1, Index: -1, Kind: ErrRead, Err: err}
			er.done = true
			return false
		}
		if err == io.EOF {
			er.done = true
			if len(b) == 0 {
				return false
			}
		}
		er.line++
		u, v, blank, perr := ParseEdgeLine(b)
		if perr != nil {
			e := perr.(*Error)
			e.File, e.Line = er.name, er.line
			er.err = e
			er.done = true
			return false
		}
		if blank {
			continue
		}
		er.u, er.v = u, v
		er.lines++
		return true
	}
	return false
}

// Edge returns the endpoints of the current edge, as written (ids or row
// indices; see Table.Resolve).
func (er *EdgeReader) Edge() (u, v int64) { return er.u, er.v }

// Line returns the 1-based line number of the current edge.
func (er *EdgeReader) Line() int { return er.line }

// Edges returns the number of edges (lines that hold one) read so far.
func (er *EdgeReader) Edges() int { return er.lines }

// Err returns the error that stopped Next, or nil at a clean end.
func (er *EdgeReader) Err() error { return er.err }

// Progress returns the bytes consumed and the size of the file on disk when
// the reader was opened with OpenEdges, else 0, 0.
func (er *EdgeReader) Progress() (done, total int64) {
	if er.file == nil {
		return 0, 0
	}
	return er.file.Offset(), er.file.Size()
}

// Close closes the file opened by OpenEdges; otherwise it does nothing. A
// second call is harmless.
func (er *EdgeReader) Close() error {
	if er.file == nil {
		return nil
	}
	return er.file.Close()
}
