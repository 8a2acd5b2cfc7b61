package dump

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"runtime"
	"sync"
)

// Pass 1 (Analyze, AnalyzeSpill) reads a node file in one of two ways, with
// the same results: the same Table, the same spill bytes, the same first
// error.
//
// Sequentially, one record after the other (recordReader).
//
// In parallel, when the file has no double quote, there are two or more
// CPUs (GOMAXPROCS) and the data outgrows one block. Then every line is a
// record, so the file can be cut into blocks at line ends: a reader
// goroutine cuts blocks of about pass1Block bytes, worker goroutines parse
// them (fields, numbers, mappings, per-block statistics, content hashes and
// spill encodings), and the calling goroutine merges the results in file
// order: global row indices and line numbers, the duplicate-id check, the
// statistics, the content hash and the spill. Errors are reported in file
// order: a block's results count only after every earlier block merged
// cleanly, and within a block the rows before its first bad row are merged
// (and checked for duplicate ids) first. If a block holds a double quote,
// the rest of the file from that block on is read sequentially by the
// calling goroutine. Every goroutine has exited when Analyze returns.

// pass1Block is the target size of a block in parallel mode (a variable so
// that tests can force many blocks).
var pass1Block = 1 << 20

// pass1Workers is the number of parsing goroutines in parallel mode; fewer
// than 2 means sequential. A variable so that tests can choose.
var pass1Workers = func() int { return min(runtime.GOMAXPROCS(0), 4) }

// hashMul folds per-record hashes into the content hash of a node file:
// sum = sum*hashMul + recordHash(record), in file order.
const hashMul = 0x9e3779b97f4a7c15

// recordHash hashes one record as read (see recordReader.record).
func recordHash(seed maphash.Seed, rec []byte) uint64 { return maphash.Bytes(seed, rec) }

// stats are the per-feature ranges and the group and label counts of a set
// of rows.
type stats struct {
	min, max    []float64
	groups      [2]int
	unknownSens int
	labels      [2]int
	unlabelled  int
	joint       [3][3]int
}

func newStats(nf int) stats {
	s := stats{min: make([]float64, nf), max: make([]float64, nf)}
	for j := range nf {
		s.min[j], s.max[j] = math.Inf(1), math.Inf(-1)
	}
	return s
}

// reset empties s, keeping its slices.
func (s *stats) reset() {
	for j := range s.min {
		s.min[j], s.max[j] = math.Inf(1), math.Inf(-1)
	}
	*s = stats{min: s.min, max: s.max}
}

func (s *stats) add(rec *record) {
	lo, hi := s.min, s.max[:len(s.min)]
	for j, v := range rec.vals[:len(lo)] {
		lo[j] = min(lo[j], v)
		hi[j] = max(hi[j], v)
	}
	if rec.sens >= 0 {
		s.groups[rec.sens]++
	} else {
		s.unknownSens++
	}
	if rec.label >= 0 {
		s.labels[rec.label]++
	} else {
		s.unlabelled++
	}
	s.joint[rec.sens+1][rec.label+1]++
}

// merge adds o to s. min and max of Go treat -0 as below +0, so merging
// gives the ranges of a sequential pass bit for bit.
func (s *stats) merge(o *stats) {
	for j := range s.min {
		s.min[j] = min(s.min[j], o.min[j])
		s.max[j] = max(s.max[j], o.max[j])
	}
	for i := range 2 {
		s.groups[i] += o.groups[i]
		s.labels[i] += o.labels[i]
	}
	s.unknownSens += o.unknownSens
	s.unlabelled += o.unlabelled
	for i := range 3 {
		for k := range 3 {
			s.joint[i][k] += o.joint[i][k]
		}
	}
}

// pass1 is the state of the calling goroutine during pass 1.
type pass1 struct {
	ctx   context.Context
	name  string
	spec  Spec
	t     *Table
	l     *layout
	st    stats
	spill io.Writer
	buf   []byte // spill output being assembled
	body  []byte // one spill row body (sequential mode)
	line  int    // lines consumed so far (parallel mode)
}

func analyze(ctx context.Context, r io.Reader, name string, spec Spec, spill io.Writer) (*Table, error) {
	p := &pass1{ctx: ctx, name: name, spec: spec, spill: spill}
	workers := pass1Workers()
	if workers < 2 {
		return p.sequential(r, true)
	}
	// Look at the first block, grown until it holds the header line: a
	// quote in it, or a file that fits in it, means sequential.
	var first []byte
	start, hline := -1, 0
	atEOF := false
	for start < 0 && !atEOF {
		grown := make([]byte, len(first), max(pass1Block, 2*len(first)))
		copy(grown, first)
		n, err := io.ReadFull(r, grown[len(first):cap(grown)])
		first = grown[:len(first)+n]
		atEOF = err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !atEOF {
			return nil, readErr(name, atLine(bytes.Count(first, []byte{'\n'}), err))
		}
		start, hline = headerLine(first)
	}
	if atEOF || bytes.IndexByte(first, '"') >= 0 || start < 0 {
		return p.sequential(io.MultiReader(bytes.NewReader(first), r), true)
	}
	hr := newRecordReader(bytes.NewReader(first[:start]))
	header, err := readHeader(hr, name)
	if err != nil {
		return nil, err
	}
	if err := p.init(header, spec); err != nil {
		return nil, err
	}
	p.line = hline
	return p.parallel(first[start:], r, workers)
}

// headerLine finds the first non-blank line of b (the header, as
// recordReader would read it, provided b has no quote). It returns the
// offset just after that line's '\n' and the number of lines up to it, or
// -1 when the header line does not end in b.
func headerLine(b []byte) (end, lines int) {
	off := 0
	for {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			return -1, 0
		}
		lines++
		line := b[off : off+i+1]
		off += i + 1
		if len(content(line)) > 0 {
			return off, lines
		}
	}
}

// init resolves the spec against the header and sets up the table.
func (p *pass1) init(header []string, spec Spec) error {
	l, err := newLayout(header, spec)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Kind == ErrHeader {
			e.File, e.Line = p.name, 1
		}
		return err
	}
	t := &Table{Name: p.name, Columns: header, layout: l, seed: maphash.MakeSeed()}
	for _, i := range l.feat {
		t.FeatureNames = append(t.FeatureNames, header[i])
	}
	if l.id >= 0 {
		t.ids = make(map[int64]int32)
	}
	p.t, p.l, p.st = t, l, newStats(len(l.feat))
	return nil
}

// finish copies the statistics into the table.
func (p *pass1) finish() (*Table, error) {
	if err := p.flushSpill(0); err != nil {
		return nil, err
	}
	t := p.t
	t.Min, t.Max = p.st.min, p.st.max
	t.Groups, t.UnknownSensitive = p.st.groups, p.st.unknownSens
	t.Labels, t.NumUnlabelled = p.st.labels, p.st.unlabelled
	t.Joint = p.st.joint
	return t, nil
}

// flushSpill writes the assembled spill output once it exceeds limit.
func (p *pass1) flushSpill(limit int) error {
	if p.spill == nil || len(p.buf) <= limit {
		return nil
	}
	if _, err := p.spill.Write(p.buf); err != nil {
		return fmt.Errorf("dump: write spill: %w", err)
	}
	p.buf = p.buf[:0]
	return nil
}

// addID records the id of the next row (index t.Rows) and checks it.
func (p *pass1) addID(id int64, line int) error {
	t := p.t
	if t.ids != nil {
		if first, dup := t.ids[id]; dup {
			return &Error{File: p.name, Line: line, Column: t.Columns[p.l.id], Index: p.l.id, Kind: ErrDuplicateID,
				Detail: fmt.Sprintf("%d (first in data row %d)", id, first+1)}
		}
		if t.Rows >= math.MaxInt32 {
			return &Error{File: p.name, Line: line, Index: -1, Kind: ErrRead, Detail: "more than 2^31-1 rows"}
		}
		t.ids[id] = int32(t.Rows)
	}
	return nil
}

// sequential reads the records of r one by one. With header, r starts at
// the beginning of the file; otherwise the header was read and r starts at
// line p.line+1.
func (p *pass1) sequential(r io.Reader, header bool) (*Table, error) {
	rr := newRecordReader(r)
	if header {
		h, err := readHeader(rr, p.name)
		if err != nil {
			return nil, err
		}
		if err := p.init(h, p.spec); err != nil {
			return nil, err
		}
	} else {
		rr.lines = p.line
	}
	t, l := p.t, p.l
	hasID := l.id >= 0
	rec := record{vals: make([]float64, len(l.feat))}
	for {
		if t.Rows%checkEvery == 0 {
			if err := p.ctx.Err(); err != nil {
				return nil, err
			}
		}
		fields, err := rr.read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, readErr(p.name, err)
		}
		line := rr.line()
		if e := l.parse(fields, t.Rows, &rec); e != nil {
			e.File, e.Line = p.name, line
			return nil, e
		}
		if err := p.addID(rec.id, line); err != nil {
			return nil, err
		}
		p.st.add(&rec)
		t.sum = t.sum*hashMul + recordHash(t.seed, rr.record())
		if p.spill != nil {
			p.body = appendSpillBody(p.body[:0], &rec, hasID)
			p.buf = appendSpillRow(p.buf, line, p.body)
			if err := p.flushSpill(64 << 10); err != nil {
				return nil, err
			}
		}
		t.Rows++
	}
	return p.finish()
}

// block is a piece of the node file made of whole lines, or the rest of
// the file to be read sequentially (tail), or a read error (err).
type block struct {
	data []byte
	tail io.Reader
	err  error
	res  chan *blockResult
}

// blockResult is what a worker makes of a block. Lines are relative to the
// block (its first line is 1).
type blockResult struct {
	rows   int
	lines  []int32  // start line of each row
	ids    []int64  // id of each row (with an id column)
	hashes []uint64 // recordHash of each row
	ends   []int32  // end offset of each row's spill body in bodies
	bodies []byte
	st     stats
	nlines int    // lines in the block
	err    *Error // the first bad row (after the rows above), line relative
}

// pools recycles block buffers and results between the goroutines of
// parallel mode, so that pass 1 allocates (and the garbage collector runs)
// about as little as sequentially.
type pools struct {
	bufs    chan []byte
	results chan *blockResult
}

func newPools(n int) *pools {
	return &pools{bufs: make(chan []byte, n), results: make(chan *blockResult, n)}
}

// buf returns an empty buffer of capacity at least pass1Block.
func (q *pools) buf() []byte {
	select {
	case b := <-q.bufs:
		return b[:0]
	default:
		return make([]byte, 0, pass1Block)
	}
}

func (q *pools) putBuf(b []byte) {
	if cap(b) < pass1Block {
		return
	}
	select {
	case q.bufs <- b[:0]:
	default:
	}
}

// result returns an empty result for nf features.
func (q *pools) result(nf int) *blockResult {
	select {
	case r := <-q.results:
		*r = blockResult{lines: r.lines[:0], ids: r.ids[:0], hashes: r.hashes[:0], ends: r.ends[:0],
			bodies: r.bodies[:0], st: r.st}
		r.st.reset()
		return r
	default:
		return &blockResult{st: newStats(nf)}
	}
}

func (q *pools) putResult(r *blockResult) {
	select {
	case q.results <- r:
	default:
	}
}

// parallel runs pass 1 over rest (the first block after the header) and the
// remainder of r with a reader goroutine, workers and the merge here.
func (p *pass1) parallel(rest []byte, r io.Reader, workers int) (*Table, error) {
	stop := make(chan struct{})
	order := make(chan *block, 2*workers)
	jobs := make(chan *block, workers)
	q := newPools(4*workers + 4)
	var wg sync.WaitGroup
	defer func() {
		close(stop)
		wg.Wait()
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(order)
		defer close(jobs)
		cutBlocks(append(q.buf(), rest...), r, order, jobs, stop, q)
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newBlockWorker(p)
			for b := range jobs {
				select {
				case <-stop:
					return
				default:
				}
				res := w.parse(b.data, q.result(len(p.l.feat)))
				select {
				case b.res <- res:
				case <-stop:
					return
				}
			}
		}()
	}
	for b := range order {
		if err := p.ctx.Err(); err != nil {
			return nil, err
		}
		switch {
		case b.err != nil:
			return nil, readErr(p.name, atLine(p.line, b.err))
		case b.tail != nil:
			// Nothing is read from r any more but by this goroutine.
			return p.sequential(b.tail, false)
		}
		var res *blockResult
		select {
		case res = <-b.res:
		case <-p.ctx.Done():
			return nil, p.ctx.Err()
		}
		if err := p.merge(res); err != nil {
			return nil, err
		}
		q.putBuf(b.data)
		q.putResult(res)
	}
	return p.finish()
}

// cutBlocks reads r after buf (whose capacity is at least pass1Block), cuts
// it into blocks of whole lines and sends each on order and, for parsing,
// on jobs. A block with a double quote, and everything after it, is sent as
// a tail instead.
func cutBlocks(buf []byte, r io.Reader, order, jobs chan<- *block, stop <-chan struct{}, q *pools) {
	send := func(b *block) bool {
		select {
		case order <- b:
		case <-stop:
			return false
		}
		if b.res == nil {
			return true
		}
		select {
		case jobs <- b:
			return true
		case <-stop:
			return false
		}
	}
	eof := false
	fill := func() error {
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			eof = true
			return nil
		}
		return err
	}
	for {
		if !eof && len(buf) < cap(buf) {
			if err := fill(); err != nil {
				// Parse the whole lines read before the error first, so
				// that it is reported at the line where reading stopped.
				if cut := bytes.LastIndexByte(buf, '\n'); cut >= 0 && bytes.IndexByte(buf[:cut+1], '"') < 0 {
					if !send(&block{data: buf[:cut+1], res: make(chan *blockResult, 1)}) {
						return
					}
				}
				send(&block{err: err})
				return
			}
		}
		if bytes.IndexByte(buf, '"') >= 0 {
			var tail io.Reader = bytes.NewReader(buf)
			if !eof {
				tail = io.MultiReader(tail, r)
			}
			send(&block{tail: tail})
			return
		}
		if eof {
			if len(buf) > 0 {
				send(&block{data: buf, res: make(chan *blockResult, 1)})
			}
			return
		}
		cut := bytes.LastIndexByte(buf, '\n')
		if cut < 0 { // a line longer than the buffer: grow it
			grown := make([]byte, len(buf), 2*cap(buf))
			copy(grown, buf)
			buf = grown
			continue
		}
		next := append(q.buf(), buf[cut+1:]...)
		if !send(&block{data: buf[:cut+1], res: make(chan *blockResult, 1)}) {
			return
		}
		buf = next
	}
}

// blockWorker parses blocks; each worker goroutine has its own.
type blockWorker struct {
	p   *pass1
	rr  *recordReader
	rec record
}

func newBlockWorker(p *pass1) *blockWorker {
	return &blockWorker{p: p, rec: record{vals: make([]float64, len(p.l.feat))}}
}

// parse parses one block of whole, quote-free lines into res.
func (w *blockWorker) parse(data []byte, res *blockResult) *blockResult {
	l, t := w.p.l, w.p.t
	hasID := l.id >= 0
	if w.rr == nil {
		w.rr = newRecordReader(bytes.NewReader(data))
	} else {
		w.rr.reset(bytes.NewReader(data))
	}
	rr := w.rr
	for {
		fields, err := rr.read()
		if err == io.EOF {
			break
		}
		if err != nil { // cannot happen on quote-free bytes
			res.err = readErr(w.p.name, err)
			return res
		}
		line := rr.line()
		if e := l.parse(fields, 0, &w.rec); e != nil {
			e.File, e.Line = w.p.name, line
			res.err = e
			return res
		}
		res.rows++
		res.lines = append(res.lines, int32(line))
		if hasID {
			res.ids = append(res.ids, w.rec.id)
		}
		res.hashes = append(res.hashes, recordHash(t.seed, rr.record()))
		res.st.add(&w.rec)
		if w.p.spill != nil {
			res.bodies = appendSpillBody(res.bodies, &w.rec, hasID)
			res.ends = append(res.ends, int32(len(res.bodies)))
		}
	}
	res.nlines = rr.lines
	return res
}

// merge adds a block's rows to the table in file order.
func (p *pass1) merge(res *blockResult) error {
	t := p.t
	start := 0
	for i := range res.rows {
		line := p.line + int(res.lines[i])
		if p.l.id >= 0 {
			if err := p.addID(res.ids[i], line); err != nil {
				return err
			}
		}
		t.sum = t.sum*hashMul + res.hashes[i]
		if p.spill != nil {
			end := int(res.ends[i])
			p.buf = appendSpillRow(p.buf, line, res.bodies[start:end])
			start = end
		}
		t.Rows++
	}
	if res.err != nil {
		res.err.Line += p.line
		return res.err
	}
	if err := p.flushSpill(64 << 10); err != nil {
		return err
	}
	p.st.merge(&res.st)
	p.line += res.nlines
	return nil
}
