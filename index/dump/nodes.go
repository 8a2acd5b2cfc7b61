package dump

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"strconv"
	"strings"
)

// layout is a Spec resolved against a header.
type layout struct {
	spec      Spec
	header    []string
	id        int // -1: no id column
	sens      int
	label     int
	feat      []int
	unlabel   float64
	hasUnlab  bool
	endpoints Endpoints
	// sensNum and labelNum are the keys of the Named mappings that are
	// numbers, by value; nil when there are none.
	sensNum, labelNum map[float64]int8
	// sensFeat is the feature index that takes the mapped sensitive value
	// (SensitiveFeature with a Named mapping), else -1.
	sensFeat int
}

func newLayout(header []string, spec Spec) (*layout, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	l := &layout{spec: spec, header: header, id: -1, endpoints: spec.Endpoints, sensFeat: -1}
	l.sensNum, _ = numericKeys(spec.Sensitive.Named) // checked by Validate
	l.labelNum, _ = numericKeys(spec.Label.Named)
	if l.endpoints == EndpointsAuto {
		l.endpoints = EndpointsID
		if spec.IDColumn == "" {
			l.endpoints = EndpointsRow
		}
	}
	pos := make(map[string]int, len(header))
	dup := map[string]bool{}
	for i, h := range header {
		if _, ok := pos[h]; ok {
			dup[h] = true
		}
		pos[h] = i
	}
	find := func(role, name string) (int, error) {
		i, ok := pos[name]
		if !ok {
			return -1, newError(ErrHeader, fmt.Sprintf("no %s column %q", role, name))
		}
		if dup[name] {
			return -1, newError(ErrHeader, fmt.Sprintf("%s column %q appears more than once", role, name))
		}
		return i, nil
	}
	var errs []error
	var err error
	if spec.IDColumn != "" {
		if l.id, err = find("id", spec.IDColumn); err != nil {
			errs = append(errs, err)
		}
	}
	if l.sens, err = find("sensitive", spec.Sensitive.Column); err != nil {
		errs = append(errs, err)
	}
	if l.label, err = find("label", spec.Label.Column); err != nil {
		errs = append(errs, err)
	}
	if spec.Features != nil {
		for _, f := range spec.Features {
			i, err := find("feature", f)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			l.feat = append(l.feat, i)
		}
	} else {
		skip := map[string]bool{spec.IDColumn: spec.IDColumn != "", spec.Sensitive.Column: !spec.SensitiveFeature, spec.Label.Column: true}
		for _, x := range spec.Exclude {
			if _, err := find("excluded", x); err != nil {
				errs = append(errs, err)
			}
			skip[x] = true
		}
		for i, h := range header {
			if !skip[h] {
				l.feat = append(l.feat, i)
			}
		}
	}
	if spec.SensitiveFeature && spec.Sensitive.Named != nil {
		for j, i := range l.feat {
			if i == l.sens {
				l.sensFeat = j
			}
		}
	}
	if spec.Label.Named == nil && !spec.Label.AllLabelled {
		l.hasUnlab = true
		l.unlabel = -1
		if spec.Label.Unlabelled != "" {
			l.unlabel, _ = parseNumber(spec.Label.Unlabelled) // checked by Validate
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return l, nil
}

// record is one parsed, unscaled row.
type record struct {
	id    int64
	sens  int8
	label int8
	vals  []float64
}

func (l *layout) colError(i int, k error, detail string) *Error {
	return &Error{Column: l.header[i], Index: i, Kind: k, Detail: detail}
}

// parse checks and converts one CSV record. rowIndex is the 0-based data row.
// vals must have len(l.feat) entries. It does not allocate unless the record
// is bad.
func (l *layout) parse(rec [][]byte, rowIndex int, out *record) *Error {
	if len(rec) != len(l.header) {
		return newError(ErrFieldCount, fmt.Sprintf("got %d fields, want %d", len(rec), len(l.header)))
	}
	if l.id >= 0 {
		v, detail, ok := parseInteger(rec[l.id])
		if !ok {
			return l.colError(l.id, ErrBadID, detail)
		}
		out.id = v
	} else {
		out.id = int64(rowIndex)
	}
	// Sensitive attribute.
	cell := rec[l.sens]
	if m := l.spec.Sensitive.Named; m != nil {
		v, ok := lookupValue(m, l.sensNum, cell)
		if !ok {
			return l.colError(l.sens, ErrUnmappedSensitive, echo(cell))
		}
		out.sens = v
	} else {
		v, k := parseNumber(cell)
		if k != nil {
			return l.colError(l.sens, k, echo(cell))
		}
		switch {
		case v < 0:
			out.sens = Unknown
		case v > l.spec.Sensitive.Threshold:
			out.sens = 1
		default:
			out.sens = 0
		}
	}
	// Label.
	cell = rec[l.label]
	if m := l.spec.Label.Named; m != nil {
		v, ok := lookupValue(m, l.labelNum, cell)
		if !ok {
			return l.colError(l.label, ErrUnmappedLabel, echo(cell))
		}
		out.label = v
	} else {
		v, k := parseNumber(cell)
		if k != nil {
			return l.colError(l.label, k, echo(cell))
		}
		switch {
		case l.hasUnlab && v == l.unlabel:
			out.label = Unlabelled
		case v == 0:
			out.label = 0
		case v >= 1:
			out.label = 1
		default:
			return l.colError(l.label, ErrUnmappedLabel, echo(cell))
		}
	}
	// Features.
	vals := out.vals[:len(l.feat)]
	for j, i := range l.feat {
		if j == l.sensFeat { // the sensitive column kept as a feature, mapped
			vals[j] = float64(out.sens)
			continue
		}
		if c := rec[i]; len(c) == 1 && c[0]-'0' < 10 { // a digit: most cells of indicator columns
			vals[j] = float64(c[0] - '0')
			continue
		}
		v, k := parseNumber(rec[i])
		if k != nil {
			return l.colError(i, k, echo(rec[i]))
		}
		if !l.spec.Scale && math.Abs(v) > math.MaxFloat32 {
			return l.colError(i, ErrNonFinite, "out of float32 range: "+echo(rec[i]))
		}
		vals[j] = v
	}
	return nil
}

// lookupValue maps a cell through a Named mapping: by the trimmed string,
// else, if some keys are numbers, by numeric value.
func lookupValue(named map[string]int8, num map[float64]int8, cell []byte) (int8, bool) {
	c := trimSpace(cell)
	if v, ok := named[string(c)]; ok {
		return v, true
	}
	if num == nil {
		return 0, false
	}
	x, err := parseNumber(c)
	if err != nil {
		return 0, false
	}
	v, ok := num[x]
	return v, ok
}

// Table is the result of the first pass over a node file: the resolved
// columns and the statistics every row was checked against. It holds one
// map entry per node id (for the duplicate check and for Resolve) and no row
// data. A Table is safe for concurrent use once returned.
type Table struct {
	Name         string   // file name used in errors
	Columns      []string // the header, in file order
	FeatureNames []string // feature columns, in feature order
	Rows         int      // data rows (nodes)
	// Min and Max are the raw per-feature extremes over all rows.
	Min, Max []float64
	// Groups counts nodes per sensitive group; UnknownSensitive those with an
	// unknown sensitive value.
	Groups           [2]int
	UnknownSensitive int
	// Labels counts nodes per class; NumUnlabelled the others.
	Labels        [2]int
	NumUnlabelled int
	// Joint[s+1][y+1] counts nodes by (sensitive, label), -1 included.
	Joint [3][3]int

	layout *layout
	ids    map[int64]int32
	seed   maphash.Seed
	sum    uint64
}

// Features returns the number of feature columns.
func (t *Table) Features() int { return len(t.FeatureNames) }

// Spec returns the spec the table was analysed with.
func (t *Table) Spec() Spec { return t.layout.spec }

// Endpoints returns how edge endpoints name nodes (never EndpointsAuto).
func (t *Table) Endpoints() Endpoints { return t.layout.endpoints }

// Resolve maps an edge endpoint to its 0-based row index.
func (t *Table) Resolve(endpoint int64) (row int, ok bool) {
	if t.layout.endpoints == EndpointsRow || t.ids == nil {
		if endpoint >= 0 && endpoint < int64(t.Rows) {
			return int(endpoint), true
		}
		return -1, false
	}
	r, ok := t.ids[endpoint]
	if !ok {
		return -1, false
	}
	return int(r), true
}

// checkEvery is how many rows pass 1 reads between context checks.
const checkEvery = 4096

// readErr converts an error of recordReader.read into an *Error.
func readErr(name string, err error) *Error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{File: name, Line: pe.Line, Index: -1, Kind: ErrSyntax,
			Detail: "byte " + strconv.Itoa(pe.Column), Err: pe.Err}
	}
	var re *readError
	if errors.As(err, &re) {
		return &Error{File: name, Line: re.line, Index: -1, Kind: ErrRead, Err: re.err}
	}
	return &Error{File: name, Index: -1, Kind: ErrRead, Err: err}
}

func readHeader(rr *recordReader, name string) ([]string, error) {
	rec, err := rr.read()
	if err == io.EOF {
		return nil, &Error{File: name, Line: 1, Index: -1, Kind: ErrHeader, Detail: "empty file"}
	}
	if err != nil {
		return nil, readErr(name, err)
	}
	h := make([]string, len(rec))
	for i, f := range rec {
		h[i] = string(f)
	}
	if len(h) > 0 && strings.HasPrefix(h[0], string(utf8BOM)) {
		// A reader not from Open or NewReader (which drop it already).
		h[0] = h[0][len(utf8BOM):]
	}
	for i, col := range h {
		if hasControl(col) {
			return nil, &Error{File: name, Line: 1, Index: i, Kind: ErrHeader,
				Detail: "control character in a column name: " + echo(col)}
		}
	}
	return h, nil
}

// hasControl reports a C0 or C1 control character or DEL in s (a tab
// included: a tab inside a column name is no name). Such a name would
// later be printed raw (stats, errors), terminal escapes included.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return true
		}
	}
	return false
}

// Analyze is pass 1 over a node file: it reads the header, resolves spec
// against it, checks every row (field count, numbers, ids, mappings) and
// computes per-feature min and max and the group and label counts. Memory is
// bounded by one map entry per node id and a few 1 MiB blocks. r must yield
// decompressed CSV (see Open and NewReader); name is used in error messages.
// A large file without quotes is parsed by several goroutines (see the
// package doc); they have all exited when Analyze returns, and r is not read
// after that.
func Analyze(ctx context.Context, r io.Reader, name string, spec Spec) (*Table, error) {
	return analyze(ctx, r, name, spec, nil)
}

// AnalyzeSpill is Analyze that also writes every parsed row, unscaled, to
// spill in a compact binary form (see NewSpillReader), so that pass 2 can
// read the rows back instead of parsing the CSV again. The spill holds
// exactly what pass 1 checked: a node file that changes after pass 1 cannot
// affect a pass 2 that reads the spill. Nothing is written to spill when
// AnalyzeSpill fails before the first row; after a failure the spill's
// content is unspecified. spill should be buffered; about 1 byte per binary
// or small-integer value and 5 or 9 bytes per other value are written.
func AnalyzeSpill(ctx context.Context, r io.Reader, name string, spec Spec, spill io.Writer) (*Table, error) {
	if spill == nil {
		return nil, fmt.Errorf("%w: nil spill writer", ErrSpec)
	}
	return analyze(ctx, r, name, spec, spill)
}

// AnalyzeFile opens path (plain or gzip) and runs Analyze on it.
func AnalyzeFile(ctx context.Context, path string, spec Spec) (*Table, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Analyze(ctx, f, f.Name(), spec)
}

// Row is one node as streamed by pass 2.
type Row struct {
	Index     int   // 0-based data row: the node's dense index
	Line      int   // line in the file where the row starts
	ID        int64 // node id (the row index if there is no id column)
	Sensitive int8  // 0, 1 or Unknown
	Label     int8  // 0, 1 or Unlabelled
	// Features holds the feature values, scaled if the Spec says so. The
	// slice belongs to the RowReader and is overwritten by the next Next.
	Features []float32
}

// RowReader is pass 2: it streams the rows of the node file analysed into a
// Table, scaled, either by parsing the CSV again (NewRowReader, OpenRows) or
// from the binary spill written by AnalyzeSpill (NewSpillReader). It follows
// the Next/Row/Err pattern:
//
//	rr, err := table.OpenRows(path)
//	...
//	defer rr.Close()
//	for rr.Next() {
//		row := rr.Row()
//		...
//	}
//	if err := rr.Err(); err != nil { ... }
//
// A RowReader is not safe for concurrent use.
type RowReader struct {
	t     *Table
	rr    *recordReader // CSV source
	spill *spillReader  // binary source
	file  *File
	sum   uint64 // content hash so far (see recordHash)
	rec   record
	row   Row
	sc    scaler
	n     int // rows read so far
	err   error
	state int // 0 before header, 1 reading, 2 done
}

func (t *Table) newRowReader() *RowReader {
	rr := &RowReader{t: t}
	nf := len(t.FeatureNames)
	rr.rec.vals = make([]float64, nf)
	rr.row.Features = make([]float32, nf)
	rr.sc = newScaler(t)
	return rr
}

// NewRowReader starts pass 2 on r, which must yield the same content as the
// reader given to Analyze.
func (t *Table) NewRowReader(r io.Reader) *RowReader {
	rr := t.newRowReader()
	rr.rr = newRecordReader(r)
	return rr
}

// NewSpillReader starts pass 2 on r, which must yield what AnalyzeSpill
// wrote to its spill when it returned t. No CSV is parsed: the rows are
// exactly those pass 1 checked. A spill that does not decode, or holds
// another number of rows than the table, stops Next with an *Error of kind
// ErrRead. r should be buffered.
func (t *Table) NewSpillReader(r io.Reader) *RowReader {
	rr := t.newRowReader()
	rr.spill = &spillReader{r: r, nf: len(t.FeatureNames), hasID: t.layout.id >= 0}
	rr.state = 1
	return rr
}

// OpenRows opens path (plain or gzip) and starts pass 2 on it. Close the
// RowReader to close the file.
func (t *Table) OpenRows(path string) (*RowReader, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	rr := t.NewRowReader(f)
	rr.file = f
	return rr, nil
}

// Progress returns the bytes consumed and the size of the file on disk when
// the reader was opened with OpenRows, else 0, 0.
func (rr *RowReader) Progress() (done, total int64) {
	if rr.file == nil {
		return 0, 0
	}
	return rr.file.Offset(), rr.file.Size()
}

func (rr *RowReader) fail(e *Error) bool {
	if e.File == "" {
		e.File = rr.t.Name
	}
	rr.err, rr.state = e, 2
	return false
}

// Next advances to the next row. It returns false at the end or on error.
func (rr *RowReader) Next() bool {
	if rr.state == 2 {
		return false
	}
	if rr.spill != nil {
		return rr.nextSpill()
	}
	t := rr.t
	if rr.state == 0 {
		h, err := readHeader(rr.rr, t.Name)
		if err != nil {
			var e *Error
			errors.As(err, &e)
			return rr.fail(e)
		}
		if !equalStrings(h, t.Columns) {
			return rr.fail(&Error{Line: 1, Index: -1, Kind: ErrChanged, Detail: "header differs"})
		}
		rr.state = 1
	}
	fields, err := rr.rr.read()
	if err == io.EOF {
		if rr.n != t.Rows || rr.sum != t.sum {
			return rr.fail(&Error{Index: -1, Kind: ErrChanged, Detail: "rows differ from the first pass"})
		}
		rr.state = 2
		return false
	}
	if err != nil {
		return rr.fail(readErr(t.Name, err))
	}
	line := rr.rr.line()
	index := rr.n
	if e := t.layout.parse(fields, index, &rr.rec); e != nil {
		e.Line = line
		e.Kind, e.Detail = ErrChanged, e.Error()
		e.Column, e.Index = "", -1
		return rr.fail(e)
	}
	if index >= t.Rows {
		return rr.fail(&Error{Line: line, Index: -1, Kind: ErrChanged, Detail: "more rows than in the first pass"})
	}
	rr.sum = rr.sum*hashMul + recordHash(t.seed, rr.rr.record())
	rr.n++
	return rr.emit(index, line)
}

// nextSpill reads the next row from the spill.
func (rr *RowReader) nextSpill() bool {
	t := rr.t
	line, err := rr.spill.next(&rr.rec, &rr.sc, rr.row.Features, rr.n)
	if err == io.EOF {
		if rr.n != t.Rows {
			return rr.fail(&Error{Index: -1, Kind: ErrRead, Detail: fmt.Sprintf("spill ends after %d of %d rows", rr.n, t.Rows)})
		}
		rr.state = 2
		return false
	}
	if err != nil {
		return rr.fail(&Error{Index: -1, Kind: ErrRead, Detail: fmt.Sprintf("spill row %d", rr.n+1), Err: err})
	}
	index := rr.n
	if index >= t.Rows {
		return rr.fail(&Error{Index: -1, Kind: ErrRead, Detail: fmt.Sprintf("spill holds more than %d rows", t.Rows)})
	}
	rr.n++
	rr.row.Index, rr.row.Line, rr.row.ID = index, line, rr.rec.id
	rr.row.Sensitive, rr.row.Label = rr.rec.sens, rr.rec.label
	return true
}

// emit fills rr.row from rr.rec, scaling the features.
func (rr *RowReader) emit(index, line int) bool {
	t := rr.t
	rr.row.Index, rr.row.Line, rr.row.ID = index, line, rr.rec.id
	rr.row.Sensitive, rr.row.Label = rr.rec.sens, rr.rec.label
	out := rr.row.Features[:len(rr.rec.vals)]
	for j, v := range rr.rec.vals {
		x, ok := rr.sc.value(j, v)
		if !ok {
			return rr.fail(&Error{Line: line, Column: t.FeatureNames[j], Index: t.layout.feat[j], Kind: ErrChanged,
				Detail: "value outside the first pass's range: " + strconv.FormatFloat(v, 'g', -1, 64)})
		}
		out[j] = x
	}
	return true
}

// scaler maps raw feature values to the values pass 2 emits: scaled to
// [-1, 1] with the table's ranges, or converted to float32.
type scaler struct {
	scale        bool
	lo, span, hi []float64 // per feature: min, max-min (0: constant), max
	small        []float32 // per feature: the values 0 and 1 map to
	smallInRange []bool    // per feature: whether 0 and 1 lie in [min, max]
}

func newScaler(t *Table) scaler {
	nf := len(t.FeatureNames)
	sc := scaler{scale: t.layout.spec.Scale, lo: t.Min, hi: t.Max, span: make([]float64, nf),
		small: make([]float32, 2*nf), smallInRange: make([]bool, 2*nf)}
	for j := range nf {
		sc.span[j] = t.Max[j] - t.Min[j]
		for k := range 2 {
			sc.small[2*j+k], sc.smallInRange[2*j+k] = sc.value(j, float64(k))
		}
	}
	return sc
}

// value maps feature j's raw value v; ok is false when v lies outside the
// range of pass 1 (scaled features only).
func (sc *scaler) value(j int, v float64) (float32, bool) {
	if !sc.scale {
		return float32(v), true
	}
	if s := sc.span[j]; s > 0 && s <= math.MaxFloat64 && v >= sc.lo[j] && v <= sc.hi[j] {
		// The common case of scaleValue, inlined.
		x := 2*((v-sc.lo[j])/s) - 1
		if x < -1 {
			x = -1
		} else if x > 1 {
			x = 1
		}
		return float32(x), true
	}
	return scaleValue(v, sc.lo[j], sc.span[j], sc.hi[j])
}

// scaleValue maps v ∈ [lo, hi] to [-1, 1]; span is hi-lo (possibly +Inf
// when the range overflows float64). A constant column maps to 0. ok is false
// when v lies outside [lo, hi].
func scaleValue(v, lo, span, hi float64) (float32, bool) {
	if v < lo || v > hi {
		return 0, false
	}
	if span == 0 {
		return 0, true
	}
	var u float64
	if math.IsInf(span, 0) {
		u = (v/2 - lo/2) / (hi/2 - lo/2)
	} else {
		u = (v - lo) / span
	}
	x := 2*u - 1
	return float32(max(-1, min(1, x))), true
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Row returns the current row. It is valid until the next call to Next.
func (rr *RowReader) Row() *Row { return &rr.row }

// Err returns the error that stopped Next, or nil at a clean end.
func (rr *RowReader) Err() error { return rr.err }

// Close closes the file opened by OpenRows; otherwise it does nothing. A
// second call is harmless.
func (rr *RowReader) Close() error {
	if rr.file == nil {
		return nil
	}
	return rr.file.Close()
}
