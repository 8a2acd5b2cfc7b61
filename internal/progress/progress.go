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

// Options configure a Bar. The zero value (or nil) means defaults.
type Options struct {
	// Interval is the minimum time between redraws; 0 means DefaultInterval.
	Interval time.Duration
	// Force draws even when the writer is not a terminal (tests, logs).
	Force bool
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
	enabled bool
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
	if b.width <= 0 {
		b.width = 80
		if isFile {
			if cols, _, err := term.GetSize(fd); err == nil && cols > 0 {
				b.width = cols
			}
		}
	}
	if b.enabled {
		b.start = b.now()
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

// Enabled reports whether the bar draws anything.
func (b *Bar) Enabled() bool { return b.enabled }

// Add adds n to the count and redraws if the interval has passed.
func (b *Bar) Add(n int64) {
	b.n.Add(n)
	if b.enabled {
		b.maybeDraw()
	}
}

// Set sets the count (for progress read from elsewhere, such as a file
// offset) and redraws if the interval has passed.
func (b *Bar) Set(n int64) {
	b.n.Store(n)
	if b.enabled {
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
	if !b.enabled || b.finished.Swap(true) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.draw(b.now().Sub(b.start), true)
}

func (b *Bar) draw(elapsed time.Duration, final bool) {
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
	n, total := b.n.Load(), b.total.Load()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(n) / elapsed.Seconds()
	}
	var tail string
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
		return b.label + "  " + tail
	}
	frac := min(1, float64(n)/float64(total))
	pct := fmt.Sprintf("%3d%%", int(frac*100))
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
