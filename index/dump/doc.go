// Package dump reads and writes graph dumps in the FairGNN format: a node
// table (CSV with a header, one row per node) and an edge list (one pair of
// endpoints per line). Files may be plain or gzip; gzip is recognised by its
// magic bytes, not by the file name.
//
// The package parses and checks; it does not store anything. Package index
// uses it to load a dump into a store.
//
// # Node files: two passes
//
// Scaling features to [-1, 1] needs every column's minimum and maximum before
// the first row can be emitted, and a dump may be far larger than memory.
// Reading is therefore split in two passes over the file:
//
//  1. Analyze (or AnalyzeFile) reads the header, resolves a Spec against it
//     and checks every row: field count, numbers, node ids (no duplicates),
//     sensitive and label mappings. It returns a Table with the column
//     layout, per-feature min/max and the group and label counts. It keeps
//     one map entry per node id and no row data.
//  2. Table.OpenRows (or NewRowReader) streams the rows again, scaled, as
//     Row values that are reused from row to row. It checks that it sees the
//     same bytes as pass 1 (a hash over all rows) and fails with ErrChanged
//     otherwise, so a file swapped between passes cannot slip through.
//
// AnalyzeSpill is pass 1 that also writes each parsed row, unscaled, to a
// spill (a temporary file, say) in a compact binary form: one byte per small
// integer value, 5 or 9 bytes per other value. Table.NewSpillReader is then
// pass 2 from the spill: no second CSV parse, and the rows are by
// construction those pass 1 checked, so ErrChanged cannot arise (a spill
// that does not decode is ErrRead). Both pass-2 sources give the same rows,
// bit for bit (FuzzNodeRow checks it).
//
// # Parsing speed
//
// Rows are split by a reader with the semantics of encoding/csv (same
// records, line numbers and syntax errors; FuzzRecordReader checks it
// against encoding/csv): a line without a double quote is split in place,
// without allocation; a record with quotes is handed to encoding/csv. A
// cell that is a single digit is converted directly; other numbers go
// through strconv without allocation. Pass 1 allocates nothing per row
// except for the growth of the id map.
//
// Pass 1 runs in parallel when the node file has no double quote, the data
// exceed one block (1 MiB) and GOMAXPROCS is at least 2: a reader goroutine
// cuts the file into blocks of whole lines, up to four workers parse them,
// and the calling goroutine merges the results in file order (row indices,
// line numbers, duplicate ids, statistics, spill). The table, the spill and
// the first error are those of a sequential reading (FuzzAnalyzeParallel
// checks it); from a block with a quote on, the file is read sequentially.
// These goroutines have exited when Analyze returns.
//
// Rows are numbered 0…n-1 in file order; that index is the node's dense id.
// With no id column the row index is also the node id.
//
// # Conventions (FairGNN / DIG, see docs/method.md §1; NIFTY)
//
//   - Sensitive attribute, numeric mapping: v < 0 is Unknown (-1), v > Threshold
//     (default 0) is group 1, the rest group 0. Named mapping: listed values
//     only; a key that is a number also matches the same number written
//     otherwise ("1" matches "1.0").
//   - Label, numeric mapping: the unlabelled value (default -1) is Unlabelled,
//     0 is class 0, every v ≥ 1 is class 1 ("values > 1 become 1"). A named
//     mapping is a label value map: German credit's {"1": 1, "-1": 0}.
//   - Features: every other column in file order unless listed; the
//     sensitive column too with SensitiveFeature (as NIFTY keeps it), mapped
//     by a named mapping. Scaled as x' = 2(x-min)/(max-min) - 1, a constant
//     column becomes 0.
//
// The presets (LookupPreset, PresetNames) record the published conventions
// of each known dump (file names, columns, value maps, dropped columns,
// split); they are the one registry of dataset names.
//   - Edge endpoints are int64 ids, or row indices, in decimal or in float
//     notation with an integral value (8.380e+02 is 838; float notation is only
//     accepted up to 2^53, where it is exact).
//   - Edge lines hold two endpoints separated by spaces or tabs or by one
//     comma (blanks around it allowed). A '#' starts a comment that runs to
//     the end of the line; blank and comment-only lines are skipped. This one
//     rule (ParseEdgeLine) holds for every edge file: those of fasd load and
//     those of fasd update.
//
// # Errors
//
// Every bad-input error is an *Error carrying the file, line and column and
// one error class (ErrFieldCount, ErrNotNumber, ErrNonFinite, ErrBadID,
// ErrDuplicateID, ErrUnmappedSensitive, ErrUnmappedLabel, ErrBadEdge, …):
//
//	nba.csv:17: column "AGE": not a number: "abc"
//
// Test the class with errors.Is and get the position with errors.As.
//
// An offending value is quoted whole up to 64 bytes, else as its first 64
// bytes followed by its length ("…" (10485760 bytes)), so that a huge cell
// cannot flood a log. A quoted field that is never closed is reported at its
// opening quote, not at the end of the file. A read or decompression error
// (ErrRead) names the line where reading stopped, every earlier line having
// been read whole; gzip errors say "gzip" (a truncated file: "gzip: unexpected
// EOF (the compressed file is truncated)").
//
// # Writing
//
// NodeWriter and EdgeWriter write the same format (used by the synthetic
// generator); Create opens an output file, gzip when the name ends in ".gz".
// Written dumps parse back to the same values.
//
// # Caveats
//
// CSV quoting follows encoding/csv (RFC 4180): a quoted field may span lines,
// and Row.Line is where the row starts. Header names are matched exactly;
// a name holding a control character (C0, DEL, C1: terminal escapes, tabs)
// is refused (ErrHeader), and error messages quote offending text with its
// control characters escaped. One BOM rule holds for every file Open or
// NewReader reads (node, edge and id files, plain or gzip): a UTF-8 BOM at
// the very start is dropped, anywhere else it is content. Cells are
// trimmed of spaces before they are parsed as numbers or looked up in a
// named mapping. Numbers are CSV numbers: decimal, with an optional
// exponent; the Go spellings strconv.ParseFloat also takes (digit
// separators as in 1_000, hexadecimal floats as in 0x1p4) are refused.
package dump
