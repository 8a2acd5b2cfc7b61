package dump

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// kind is the class of a bad-input error. Its Error text carries the package
// prefix; inside an *Error only the bare message is printed.
type kind struct{ msg string }

func (k *kind) Error() string { return "dump: " + k.msg }

// Error classes. Every error returned for bad input is an *Error whose Kind is
// one of these; test with errors.Is.
var (
	// ErrFieldCount: a CSV row has a different number of fields than the header.
	ErrFieldCount error = &kind{"wrong field count"}
	// ErrNotNumber: a numeric cell (feature, numeric sensitive or label value)
	// does not parse as a number.
	ErrNotNumber error = &kind{"not a number"}
	// ErrNonFinite: a numeric cell is NaN or ±Inf, or does not fit in float32
	// when features are not scaled.
	ErrNonFinite error = &kind{"not finite"}
	// ErrBadID: a node id cell is not an integer that fits in int64.
	ErrBadID error = &kind{"bad node id"}
	// ErrDuplicateID: two rows carry the same node id.
	ErrDuplicateID error = &kind{"duplicate node id"}
	// ErrUnmappedSensitive: a sensitive cell has no entry in a named mapping.
	ErrUnmappedSensitive error = &kind{"unmapped sensitive value"}
	// ErrUnmappedLabel: a label cell has no entry in a named mapping, or a
	// numeric label is negative (other than the unlabelled value) or lies
	// strictly between 0 and 1.
	ErrUnmappedLabel error = &kind{"unmapped label value"}
	// ErrBadEdge: an edge line is not two integer endpoints.
	ErrBadEdge error = &kind{"malformed edge line"}
	// ErrHeader: the header is missing, or a column named by the Spec is
	// absent, ambiguous or used twice.
	ErrHeader error = &kind{"bad header"}
	// ErrSyntax: the CSV itself is malformed (for example a stray quote).
	ErrSyntax error = &kind{"csv syntax"}
	// ErrRead: reading or decompressing the file failed; Err holds the cause.
	// Line, when set, is the line where reading stopped: every line before
	// it was read whole.
	ErrRead error = &kind{"read"}
	// ErrChanged: the second pass over a node file did not see the same rows
	// as the first (the file changed in between).
	ErrChanged error = &kind{"file changed between passes"}
	// ErrSpec: the Spec itself is invalid (not bad input data).
	ErrSpec error = &kind{"invalid spec"}
)

// Error describes bad input at a place in a file.
//
// Its message has the form
//
//	nba.csv:17: column "AGE": not a number: "abc"
//
// Parts that do not apply are left out. Unwrap returns Kind and, when set,
// Err, so errors.Is(err, ErrNotNumber) and errors.As for a cause both work.
type Error struct {
	File   string // base name of the file, "" if unknown
	Line   int    // 1-based line number (the header is line 1), 0 if none
	Column string // column name, "" if none
	Index  int    // 0-based field index, -1 if none (only printed without Column)
	Kind   error  // one of the Err… classes above
	Detail string // what exactly was wrong, e.g. the offending value quoted
	Err    error  // underlying cause, may be nil
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(": ")
	}
	if e.Column != "" {
		b.WriteString("column ")
		b.WriteString(strconv.Quote(e.Column))
		b.WriteString(": ")
	} else if e.Index >= 0 {
		b.WriteString("field ")
		b.WriteString(strconv.Itoa(e.Index + 1))
		b.WriteString(": ")
	}
	if k, ok := e.Kind.(*kind); ok {
		b.WriteString(k.msg)
	} else if e.Kind != nil {
		b.WriteString(e.Kind.Error())
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the error class and the cause, if any.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// newError returns an *Error with no column.
func newError(k error, detail string) *Error {
	return &Error{Index: -1, Kind: k, Detail: detail}
}

// maxEcho bounds how many bytes of an offending value an error message
// repeats: a 10 MB cell must not become a 10 MB error message.
const maxEcho = 64

// echo quotes an offending value for an error message: whole when it has
// at most maxEcho bytes, else its first maxEcho bytes (cut back to a UTF-8
// boundary) followed by "… (N bytes)".
func echo[T ~string | ~[]byte](v T) string {
	if len(v) <= maxEcho {
		return strconv.Quote(string(v))
	}
	n := maxEcho
	for n > maxEcho-utf8.UTFMax && !utf8.RuneStart(v[n]) {
		n--
	}
	return strconv.Quote(string(v[:n])) + "… (" + strconv.Itoa(len(v)) + " bytes)"
}
