// The validation phase of a load: pass 1 over the node file (into a
// dump.SpillBuffer) and the edge file, parsed and resolved.

package index

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/storage"
)

// progressReader reports the progress of a dump.File while it is read.
type progressReader struct {
	f     *dump.File
	stage string
	fn    func(string, int64, int64)
	last  int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.f.Read(b)
	if off := p.f.Offset(); off-p.last >= 1<<20 || err == io.EOF {
		p.last = off
		p.fn(p.stage, off, p.f.Size())
	}
	return n, err
}

// scanNodes is pass 1 over the node file; the parsed rows go to a spill
// file that the write phase reads instead of parsing the CSV again.
func (l *loader) scanNodes() error {
	f, err := dump.Open(l.opts.Nodes)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if l.opts.Progress != nil {
		r = &progressReader{f: f, stage: "scan nodes", fn: l.opts.Progress}
	}
	budget := l.opts.SpillMemory
	if budget == 0 {
		budget = storage.HintsOf(l.store).SpillBytes
	}
	l.spill = dump.NewSpillBuffer(l.opts.TempDir, budget)
	t, err := dump.AnalyzeSpill(l.ctx, r, f.Name(), l.opts.Spec, l.spill)
	if err != nil {
		return err
	}
	if t.Rows > int(^uint32(0)) {
		return fmt.Errorf("%w: %d nodes exceed the uint32 id space", ErrInvalid, t.Rows)
	}
	l.table = t
	return nil
}

// removeSpill releases the spill.
func (l *loader) removeSpill() {
	if l.spill != nil {
		l.spill.Close()
		l.spill = nil
	}
}

// rawEdges is the edge file as parsed, before its endpoints are resolved.
type rawEdges struct {
	// ends holds the two endpoints of every edge line, as written.
	ends []int64
	// size is the size of the file on disk.
	size int64
	// err is what stopped reading: bad input after the last edge in ends,
	// a read error or a cancelled context.
	err error
}

// readEdges parses the edge file at path. It runs on its own goroutine and
// calls no callback.
func readEdges(ctx context.Context, path string) rawEdges {
	er, err := dump.OpenEdges(path)
	if err != nil {
		return rawEdges{err: err}
	}
	defer er.Close()
	_, size := er.Progress()
	// Each line takes at least 4 bytes ("1 2\n"); typical ids are longer.
	raw := rawEdges{ends: make([]int64, 0, min(size/8, 1<<24)), size: size}
	for er.Next() {
		if er.Edges()%65536 == 0 {
			if err := ctx.Err(); err != nil {
				raw.err = err
				return raw
			}
		}
		a, b := er.Edge()
		raw.ends = append(raw.ends, a, b)
	}
	raw.err = er.Err()
	return raw
}

// resolveEdges maps the endpoints of raw to rows and keeps the pairs that
// are edges, counting the lines, self-loops and unknown endpoints. A
// parse error of the edge file is returned after the edges before it were
// resolved, so errors come in file order.
func (l *loader) resolveEdges(raw *rawEdges) error {
	rep := &l.report.Edges
	l.pairs = make([]uint32, 0, len(raw.ends))
	for i := 0; i < len(raw.ends); i += 2 {
		rep.Lines++
		if rep.Lines%65536 == 0 {
			if err := l.ctx.Err(); err != nil {
				return err
			}
		}
		a, b := raw.ends[i], raw.ends[i+1]
		ra, okA := l.table.Resolve(a)
		rb, okB := l.table.Resolve(b)
		if !okA || !okB {
			if l.opts.Strict {
				field, val := 0, a
				if okA {
					field, val = 1, b
				}
				return &dump.Error{File: filepath.Base(l.opts.Edges), Line: edgeLine(l.opts.Edges, rep.Lines), Index: field, Kind: ErrUnknownEndpoint,
					Detail: fmt.Sprintf("%d is not a node of %s (by %s)", val, l.table.Name, l.table.Endpoints())}
			}
			rep.UnknownEndpoints++
			continue
		}
		if ra == rb {
			rep.SelfLoops++
			continue
		}
		l.pairs = append(l.pairs, uint32(ra), uint32(rb))
	}
	raw.ends = nil
	if raw.err != nil {
		return raw.err
	}
	if l.opts.Progress != nil {
		l.opts.Progress("scan edges", raw.size, raw.size)
	}
	return nil
}

// edgeLine returns the line of the n-th edge (1-based) of the edge file,
// or 0 if it cannot be read again; it serves error messages only.
func edgeLine(path string, n int) int {
	er, err := dump.OpenEdges(path)
	if err != nil {
		return 0
	}
	defer er.Close()
	for er.Next() {
		if er.Edges() == n {
			return er.Line()
		}
	}
	return 0
}
