package dump

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"io"
	"math/bits"
	"strconv"
)

// recordReader splits a node file into CSV records with the semantics of
// encoding/csv.Reader in its default configuration (comma ',', no comment
// character, strict quotes, any number of fields per record): the same
// records, the same line numbers and the same syntax errors, which
// FuzzRecordReader checks against encoding/csv itself. One error differs on
// purpose: a quoted field still open at the end of the input is reported at
// its opening quote (errUnclosedQuote), not at the last line of the file.
//
// A line without a double quote, which is every line of a typical dump, is
// split in place on commas: no copy and no allocation. A record whose first
// line holds a quote is gathered, line by line, until its quotes balance (an
// even count, the only place where a well-formed record can end), and that
// chunk is handed to encoding/csv. Blank lines are skipped, a "\r\n" line
// end counts as "\n", and a trailing "\r" before the end of the input is
// dropped, all as encoding/csv does.
//
// The fields returned by read alias internal buffers and are valid until the
// next call. A recordReader is not safe for concurrent use.
type recordReader struct {
	br     *bufio.Reader
	lines  int    // lines consumed so far
	start  int    // line where the current record starts
	long   []byte // a line longer than br's buffer
	chunk  []byte // the raw lines of a quoted record
	store  []byte // backing bytes of the fields of a quoted record
	raw    []byte // the current record as read (for hashing)
	fields [][]byte
}

// recordBuffer is the size of the reader's line buffer; longer lines are
// gathered in a separate slice.
const recordBuffer = 1 << 16

func newRecordReader(r io.Reader) *recordReader {
	return &recordReader{br: bufio.NewReaderSize(r, recordBuffer)}
}

// reset makes r read from src, with line numbers from 1 again.
func (r *recordReader) reset(src io.Reader) {
	r.br.Reset(src)
	r.lines, r.start = 0, 0
}

// readLine returns the next line as read, terminator included, and io.EOF
// when there is no more input. The slice is valid until the next call.
func (r *recordReader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = r.br.ReadSlice('\n')
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	if err == io.EOF {
		if len(line) == 0 {
			return nil, io.EOF
		}
		err = nil
	}
	if err != nil {
		return nil, &readError{line: r.lines + 1, err: err}
	}
	r.lines++
	return line, nil
}

// readError is a failure of the underlying reader (an I/O or decompression
// error) while reading line: every line before it was read whole.
type readError struct {
	line int
	err  error
}

func (e *readError) Error() string { return "line " + strconv.Itoa(e.line) + ": " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// atLine marks a read error met after lines whole lines, unless it already
// carries its line.
func atLine(lines int, err error) error {
	var re *readError
	if errors.As(err, &re) {
		return err
	}
	return &readError{line: lines + 1, err: err}
}

// errUnclosedQuote is the cause of the syntax error for a quoted field that
// is still open at the end of the input. encoding/csv reports it at the last
// line of the file, which can be millions of lines after the stray quote;
// recordReader reports it at the quote itself.
var errUnclosedQuote = errors.New("quote opened here is never closed (the field runs to the end of the file)")

// content strips the line end the way encoding/csv does: "\n" or "\r\n",
// or, at the end of the input (no "\n"), one trailing "\r".
func content(line []byte) []byte {
	n := len(line)
	switch {
	case n > 0 && line[n-1] == '\n':
		n--
		if n > 0 && line[n-1] == '\r' {
			n--
		}
	case n > 0 && line[n-1] == '\r':
		n--
	}
	return line[:n]
}

// read returns the fields of the next record, io.EOF at the end of the
// input, a *csv.ParseError (with lines counted from the start of the input)
// for bad CSV syntax, or the read error.
func (r *recordReader) read() ([][]byte, error) {
	var line []byte
	for {
		l, err := r.readLine()
		if err != nil {
			return nil, err
		}
		if len(content(l)) > 0 {
			line = l
			break
		}
		// A blank line: encoding/csv skips it.
	}
	r.start = r.lines
	if bytes.IndexByte(line, '"') >= 0 {
		return r.readQuoted(line)
	}
	c := content(line)
	r.raw = c
	r.fields = splitCommas(r.fields[:0], c)
	return r.fields, nil
}

// Byte masks for splitCommas.
const (
	ones8   = 0x0101010101010101
	high8   = 0x8080808080808080
	low7    = 0x7f7f7f7f7f7f7f7f
	commas8 = ',' * ones8
)

// splitCommas appends the comma-separated fields of c to fields. It looks
// at eight bytes at a time: the high bit of each byte of
// ^(((x & low7) + low7) | x) is set exactly where x has a zero byte, that
// is where the word has a comma once XORed with commas8 (exact, unlike the
// shorter (x-ones8) &^ x trick, which can also flag a byte after a zero).
func splitCommas(fields [][]byte, c []byte) [][]byte {
	begin, i := 0, 0
	for ; i+8 <= len(c); i += 8 {
		x := binary.LittleEndian.Uint64(c[i:]) ^ commas8
		m := ^(((x & low7) + low7) | x) & high8
		for m != 0 {
			k := i + bits.TrailingZeros64(m)>>3
			fields = append(fields, c[begin:k:k])
			begin = k + 1
			m &= m - 1
		}
	}
	for ; i < len(c); i++ {
		if c[i] == ',' {
			fields = append(fields, c[begin:i:i])
			begin = i + 1
		}
	}
	return append(fields, c[begin:len(c):len(c)])
}

// Quote states of a record being scanned, following the grammar of
// encoding/csv with strict quotes.
const (
	qFieldStart = iota // at the start of a field
	qUnquoted          // inside an unquoted field
	qQuoted            // inside a quoted field
	qAfterQuote        // just after a quote inside a quoted field
	qBad               // a syntax error: encoding/csv stops on this line
)

// scanQuotes advances the quote state over the raw line b.
func scanQuotes(state int, b []byte) int {
	for i, c := range b {
		switch state {
		case qFieldStart:
			switch c {
			case '"':
				state = qQuoted
			case ',':
			default:
				state = qUnquoted
			}
		case qUnquoted:
			switch c {
			case ',':
				state = qFieldStart
			case '"':
				return qBad
			}
		case qQuoted:
			if c == '"' {
				state = qAfterQuote
			}
		case qAfterQuote:
			switch {
			case c == '"':
				state = qQuoted
			case c == ',':
				state = qFieldStart
			case c == '\n', c == '\r' && (i+1 == len(b) || i+2 == len(b) && b[i+1] == '\n'):
				return qFieldStart // the line, and the record, end here
			default:
				return qBad
			}
		}
	}
	return state
}

// readQuoted gathers the lines of a record with quotes for as long as a
// quoted field is open at the end of a line (as encoding/csv does), then
// parses them with encoding/csv.
func (r *recordReader) readQuoted(first []byte) ([][]byte, error) {
	r.chunk = append(r.chunk[:0], first...)
	state := scanQuotes(qFieldStart, first)
	for state == qQuoted {
		l, err := r.readLine()
		if err == io.EOF {
			r.raw = r.chunk
			line, col := openingQuote(r.chunk)
			return nil, &csv.ParseError{StartLine: r.start, Line: r.start + line, Column: col, Err: errUnclosedQuote}
		}
		if err != nil {
			return nil, err
		}
		r.chunk = append(r.chunk, l...)
		state = scanQuotes(state, l)
	}
	r.raw = r.chunk
	cr := csv.NewReader(bytes.NewReader(r.chunk))
	cr.FieldsPerRecord = -1
	rec, err := cr.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			shifted := *pe
			shifted.StartLine += r.start - 1
			shifted.Line += r.start - 1
			return nil, &shifted
		}
		return nil, err
	}
	if _, err := cr.Read(); err != io.EOF {
		// Cannot happen: a well-formed record ends where its quotes
		// balance. Kept as a guard rather than a silent misparse.
		return nil, &csv.ParseError{StartLine: r.start, Line: r.start, Column: 1,
			Err: errors.New("quoted record does not end where its quotes balance (line " + strconv.Itoa(r.lines) + ")")}
	}
	r.store = r.store[:0]
	for _, f := range rec {
		r.store = append(r.store, f...)
	}
	r.fields = r.fields[:0]
	off := 0
	for _, f := range rec {
		r.fields = append(r.fields, r.store[off:off+len(f):off+len(f)])
		off += len(f)
	}
	return r.fields, nil
}

// openingQuote returns where, in a record whose quoted field is still open
// at its end, that field's opening quote is: the line (0 for the record's
// first line) and the 1-based byte column. It replays scanQuotes one byte
// at a time; that agrees with the line-at-a-time scan of readQuoted because
// the scan never met a syntax error (the one place where scanQuotes looks
// ahead, a '\r' after a closing quote, is then always a line end).
func openingQuote(chunk []byte) (line, col int) {
	state, lines, lineStart := qFieldStart, 0, 0
	for i := range chunk {
		next := scanQuotes(state, chunk[i:i+1])
		if state == qFieldStart && next == qQuoted {
			line, col = lines, i-lineStart+1
		}
		state = next
		if chunk[i] == '\n' {
			lines, lineStart = lines+1, i+1
		}
	}
	return line, col
}

// line returns the line where the last record returned by read starts.
func (r *recordReader) line() int { return r.start }

// record returns the bytes of the last record as read (line end stripped
// for an unquoted record). Valid until the next call of read.
func (r *recordReader) record() []byte { return r.raw }
