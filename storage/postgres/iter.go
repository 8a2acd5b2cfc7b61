package postgres

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	"github.com/fasd-db/fasd/storage"
)

// Page sizes, in rows: an iterator's first query reads firstPage rows,
// each following one twice as many, up to maxPage.
const (
	firstPage = 128
	maxPage   = 8192
)

// iter pages through [lower, upper) by key: each page is one query,
// k ≥ from (or > the last key seen) ORDER BY k LIMIT n, so a scan costs
// one round trip per page and the server never holds a cursor.
//
// An iterator on a snapshot reads in the snapshot's transaction. An
// iterator on the store reads one consistent state too: its first query
// runs on its own (one statement sees one state); when that query fills a
// page, so that more queries will follow, the iterator starts a snapshot
// of its own and reads the first page again in it, before its caller has
// seen any key.
type iter struct {
	s            *store
	snap         *snapshot // nil: the store, until a second page is needed
	own          bool      // snap was started by this iterator
	lower, upper []byte
	// The current page: the rows of a query that started at from (≥),
	// with more rows after the last when full.
	from       []byte
	fromSet    bool // from is set: the page is a ≥ query
	keys, vals [][]byte
	full       bool
	pageRows   int
	pos        int // index into keys; len(keys) = exhausted
	queried    bool
	err        error
	closed     bool
}

func newIter(s *store, snap *snapshot, lower, upper []byte) *iter {
	it := &iter{s: s, snap: snap, pageRows: firstPage}
	it.lower = append([]byte{}, lower...)
	if upper != nil {
		it.upper = append([]byte{}, upper...)
	}
	return it
}

// load reads the page starting at key (after key when exclusive).
func (it *iter) load(key []byte, exclusive bool) bool {
	if it.closed {
		it.err = storage.ErrClosed
	}
	if it.err != nil {
		it.keys, it.pos = nil, 0
		return false
	}
	it.queried = true
	keys, vals, err := it.query(key, exclusive)
	if err == nil && it.snap == nil && len(keys) == it.pageRows {
		// More pages will follow: read them all in one snapshot, from
		// this first page on.
		if it.snap, err = it.s.snapshot(); err == nil {
			it.own = true
			keys, vals, err = it.query(key, exclusive)
		}
	}
	if err != nil {
		it.err = err
		it.keys, it.pos = nil, 0
		return false
	}
	it.full = len(keys) == it.pageRows
	it.pageRows = min(2*it.pageRows, maxPage)
	it.fromSet = !exclusive
	if !exclusive {
		it.from = append(it.from[:0], key...)
	}
	it.keys, it.vals, it.pos = keys, vals, 0
	return len(keys) > 0
}

func (it *iter) query(key []byte, exclusive bool) (keys, vals [][]byte, err error) {
	b, x := 0, 0
	args := []any{nonNil(key), it.pageRows}
	if it.upper != nil {
		b = 1
		args = append(args, it.upper)
	}
	if exclusive {
		x = 1
	}
	sql := it.s.sql.page[b][x]
	if it.snap != nil {
		return it.snap.page(sql, args)
	}
	if it.s.closed.Load() {
		return nil, nil, storage.ErrClosed
	}
	return readPage(context.Background(), it.s.pool, sql, args)
}

func readPage(ctx context.Context, q querier, sql string, args []any) (keys, vals [][]byte, err error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: scan: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, nil, fmt.Errorf("postgres: scan: %w", err)
		}
		keys, vals = append(keys, nonNil(k)), append(vals, nonNil(v))
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("postgres: scan: %w", err)
	}
	return keys, vals, nil
}

func (it *iter) First() bool { return it.load(it.lower, false) }

func (it *iter) SeekGE(key []byte) bool {
	if bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	if it.upper != nil && bytes.Compare(key, it.upper) >= 0 {
		it.keys, it.pos = nil, 0
		return false
	}
	// Within the current page: no query. The page covers [from, last
	// key], and up to upper when it was not full.
	if it.queried && it.err == nil && !it.closed && it.fromSet && bytes.Compare(it.from, key) <= 0 &&
		(!it.full || (len(it.keys) > 0 && bytes.Compare(key, it.keys[len(it.keys)-1]) <= 0)) {
		it.pos = sort.Search(len(it.keys), func(i int) bool { return bytes.Compare(it.keys[i], key) >= 0 })
		return it.pos < len(it.keys)
	}
	return it.load(key, false)
}

func (it *iter) Next() bool {
	if it.pos >= len(it.keys) {
		return false
	}
	it.pos++
	if it.pos < len(it.keys) {
		return true
	}
	if !it.full {
		return false
	}
	last := it.keys[len(it.keys)-1]
	return it.load(last, true)
}

func (it *iter) Valid() bool { return it.err == nil && it.pos < len(it.keys) }

func (it *iter) Key() []byte {
	if !it.Valid() {
		return nil
	}
	return it.keys[it.pos]
}

func (it *iter) Value() ([]byte, error) {
	if !it.Valid() {
		return nil, fmt.Errorf("postgres: Value on an unpositioned iterator")
	}
	return it.vals[it.pos], nil
}

func (it *iter) Err() error { return it.err }

func (it *iter) Close() error {
	if it.closed {
		return nil
	}
	it.closed = true
	it.keys, it.vals = nil, nil
	if it.own {
		return it.snap.Close()
	}
	return nil
}
