package progress

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// DefaultInterval is the minimum time between two redraws.
const DefaultInterval = 200 * time.Millisecond

// DefaultLogInterval is the minimum time between two lines of a bar that
// logs (a file or pipe that is not a terminal).
const DefaultLogInterval = 30 * time.Second

// Options configure a Bar. The zero value (or nil) means defaults.
type Options struct {
	// Interval is the minimum time between redraws; 0 means DefaultInterval.
	Interval time.Duration
	// Force draws even when the writer is not a terminal (tests, logs).
	Force bool
	// LogInterval is, for a writer that is a file or pipe but not a
	// terminal (output redirected to a log), the minimum time between two
	// plain progress lines; 0 means DefaultLogInterval, negative means no
	// lines at all. Ignored with Force and on terminals.
	LogInterval time.Duration
	// Width is the line width in columns; 0 means the terminal's width, or
	// 80 when it cannot be read.
	Width int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Bar is a progress bar for long work. It draws on one line of a terminal:
//
//	loading edges  42% [========>            ] 252,312/600,000  512.4k/s  ETA 0:01
//
// and only when its writer is a terminal (or Options.Force is set);
// otherwise every method is a cheap no-op apart from counting. Add, Set and
// Count are safe to call from several goroutines; redraws are rate-limited
// and never block a caller that finds another goroutine drawing.
type Bar struct {
	w       io.Writer
	label   string
	enabled bool // draws in place (a terminal, or Force)
	logs    bool // writes plain lines (a non-terminal file)
	logged  atomic.Bool
	width   int
	every   int64 // interval in ns
	now     func() time.Time
	start   time.Time

	n, total atomic.Int64
	next     atomic.Int64 // earliest time (ns since start) of the next redraw
	finished atomic.Bool
	mu       sync.Mutex // held while drawing
}

// New returns a bar labelled label counting up to total (0 or less: unknown).
func New(w io.Writer, label string, total int64, opts *Options) *Bar {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	b := &Bar{w: w, label: label, every: int64(o.Interval), now: o.Now, width: o.Width}
	b.total.Store(max(total, 0))
	fd, isFile := fdOf(w)
	b.enabled = o.Force || (isFile && term.IsTerminal(fd))
	if !b.enabled && isFile && o.LogInterval >= 0 {
		b.logs = true
		b.every = int64(o.LogInterval)
		if o.LogInterval == 0 {
			b.every = int64(DefaultLogInterval)
		}
	}
	if b.width <= 0 {
		b.width = 80
		if isFile {
			if cols, _, err := term.GetSize(fd); err == nil && cols > 0 {
				b.width = cols
			}
		}
	}
	if b.enabled || b.logs {
		b.start = b.now()
		if b.logs {
			// The first line after a full interval, not at once.
			b.next.Store(b.every)
		}
	}
	return b
}

func fdOf(w io.Writer) (int, bool) {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return 0, false
	}
	return int(f.Fd()), true
}

// Enabled reports whether the bar draws in place (a terminal, or Force).
func (b *Bar) Enabled() bool { return b.enabled }

// Logs reports whether the bar writes plain progress lines instead: its
// writer is a file or pipe that is not a terminal. It writes one after
// every LogInterval of work and, if it wrote any, a last one at Finish;
// work shorter than LogInterval writes nothing.
func (b *Bar) Logs() bool { return b.logs }

// Add adds n to the count and redraws if the interval has passed.
func (b *Bar) Add(n int64) {
	b.n.Add(n)
	if b.enabled || b.logs {
		b.maybeDraw()
	}
}

// Set sets the count (for progress read from elsewhere, such as a file
// offset) and redraws if the interval has passed.
func (b *Bar) Set(n int64) {
	b.n.Store(n)
	if b.enabled || b.logs {
		b.maybeDraw()
	}
}

// SetTotal changes the total (0 or less: unknown).
func (b *Bar) SetTotal(total int64) { b.total.Store(max(total, 0)) }

// Count returns the current count.
func (b *Bar) Count() int64 { return b.n.Load() }

func (b *Bar) maybeDraw() {
	if b.finished.Load() {
		return
	}
	elapsed := int64(b.now().Sub(b.start))
	next := b.next.Load()
	if elapsed < next || !b.next.CompareAndSwap(next, elapsed+b.every) {
		return
	}
	if !b.mu.TryLock() {
		return
	}
	defer b.mu.Unlock()
	b.draw(time.Duration(elapsed), false)
}

// Finish draws the final state followed by a newline. Later calls, and Adds
// after it, draw nothing.
func (b *Bar) Finish() {
	if !(b.enabled || b.logs) || b.finished.Swap(true) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.logs && !b.logged.Load() {
		return
	}
	b.draw(b.now().Sub(b.start), true)
}

func (b *Bar) draw(elapsed time.Duration, final bool) {
	if b.logs {
		b.logged.Store(true)
		_, _ = io.WriteString(b.w, b.logLine(elapsed, final)+"\n")
		return
	}
	line := b.Line(elapsed)
	if len(line) < b.width-1 {
		line += strings.Repeat(" ", b.width-1-len(line))
	}
	end := ""
	if final {
		end = "\n"
	}
	// A failed write to the terminal is not worth stopping the work for.
	_, _ = io.WriteString(b.w, "\r"+line+end)
}

// Line formats the bar as it would be drawn after elapsed time, without the
// leading carriage return or padding.
func (b *Bar) Line(elapsed time.Duration) string {
	frac, pct, tail := b.parts(elapsed)
	if pct == "" {
		return b.label + "  " + tail
	}
	// label + "  " + pct + " [" + bar + "] " + tail must fit in width-1.
	barw := b.width - 1 - len(b.label) - 2 - len(pct) - 3 - len(tail) - 1
	if barw < 5 {
		return b.label + "  " + pct + "  " + tail
	}
	barw = min(barw, 40)
	fill := int(frac * float64(barw))
	bar := strings.Repeat("=", fill)
	if fill < barw {
		bar += ">" + strings.Repeat(" ", barw-fill-1)
	}
	return b.label + "  " + pct + " [" + bar + "] " + tail
}

// parts are the pieces of a line: the fraction done and its percentage
// ("" when the total is unknown), and count/total, rate and ETA (or count,
// rate and elapsed time).
func (b *Bar) parts(elapsed time.Duration) (frac float64, pct, tail string) {
	n, total := b.n.Load(), b.total.Load()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(n) / elapsed.Seconds()
	}
	if total > 0 {
		eta := "?"
		if rate > 0 && n <= total {
			eta = clock(time.Duration(float64(total-n) / rate * float64(time.Second)))
		}
		tail = fmt.Sprintf("%s/%s  %s/s  ETA %s", group(n), group(total), short(rate), eta)
	} else {
		tail = fmt.Sprintf("%s  %s/s  %s", group(n), short(rate), clock(elapsed))
	}
	if total <= 0 {
		return 0, "", tail
	}
	frac = min(1, float64(n)/float64(total))
	return frac, fmt.Sprintf("%3d%%", int(frac*100)), tail
}

// logLine is a line of a bar that logs: the drawn line without its bar
// while the work runs, then the count, elapsed time and mean rate.
func (b *Bar) logLine(elapsed time.Duration, final bool) string {
	if !final {
		_, pct, tail := b.parts(elapsed)
		if pct == "" {
			return b.label + "  " + tail
		}
		return b.label + "  " + strings.TrimSpace(pct) + "  " + tail
	}
	n, total := b.n.Load(), b.total.Load()
	count := group(n)
	if total > 0 {
		count += "/" + group(total)
	}
	rate := 0.0
	if elapsed > 0 {
		rate = float64(n) / elapsed.Seconds()
	}
	return fmt.Sprintf("%s  done: %s in %s  %s/s", b.label, count, clock(elapsed), short(rate))
}

// group writes n with thousands separators: 1234567 → "1,234,567".
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// short writes a rate with a k/M/G suffix: 512412 → "512.4k".
func short(x float64) string {
	switch {
	case x >= 1e9:
		return strconv.FormatFloat(x/1e9, 'f', 1, 64) + "G"
	case x >= 1e6:
		return strconv.FormatFloat(x/1e6, 'f', 1, 64) + "M"
	case x >= 1e3:
		return strconv.FormatFloat(x/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

// clock writes a duration as m:ss or h:mm:ss, rounded to seconds.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s < 0 {
		s = 0
	}
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
