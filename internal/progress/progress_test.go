package progress

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a manually advanced clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Ensure that a bar on a non-terminal writer draws nothing but still counts.
func TestBar_NotTTY(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, "x", 10, nil)
	for range 10 {
		b.Add(1)
	}
	b.Finish()
	if buf.Len() != 0 || b.Enabled() || b.Count() != 10 {
		t.Errorf("wrote %q, enabled %v, count %d", buf.String(), b.Enabled(), b.Count())
	}
	// A regular file is not a terminal either.
	f, err := os.CreateTemp(t.TempDir(), "bar")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if New(f, "x", 1, nil).Enabled() {
		t.Error("enabled on a regular file")
	}
}

// Ensure that a bar on a file that is not a terminal (output redirected to
// a log) writes a plain line once per LogInterval and a last one at Finish,
// nothing for work shorter than the interval, and nothing at all with a
// negative LogInterval.
func TestBar_Logs(t *testing.T) {
	read := func(f *os.File) string {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	file := func() *os.File {
		f, err := os.CreateTemp(t.TempDir(), "log")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	clk := &fakeClock{t: time.Unix(1000, 0)}
	opts := &Options{LogInterval: 10 * time.Second, Now: clk.Now}

	f := file()
	b := New(f, "commit", 1000, opts)
	if b.Enabled() || !b.Logs() {
		t.Fatalf("enabled %v, logs %v; want a bar that logs", b.Enabled(), b.Logs())
	}
	for _, step := range []struct {
		advance time.Duration
		n       int64
	}{{5 * time.Second, 100}, {6 * time.Second, 100}, {4 * time.Second, 100}, {6 * time.Second, 200}} {
		clk.Advance(step.advance)
		b.Add(step.n)
	}
	clk.Advance(4 * time.Second)
	b.Finish()
	b.Finish()
	want := "commit  20%  200/1,000  18.2/s  ETA 0:44\n" + // at 11 s
		"commit  50%  500/1,000  23.8/s  ETA 0:21\n" + // at 21 s
		"commit  done: 500/1,000 in 0:25  20.0/s\n"
	if got := read(f); got != want {
		t.Errorf("log:\n%s\nwant:\n%s", got, want)
	}

	f = file()
	b = New(f, "short", 10, opts)
	clk.Advance(9 * time.Second)
	b.Add(10)
	b.Finish()
	if got := read(f); got != "" {
		t.Errorf("work shorter than the interval logged %q", got)
	}

	f = file()
	b = New(f, "off", 10, &Options{LogInterval: -1, Now: clk.Now})
	clk.Advance(time.Hour)
	b.Add(10)
	b.Finish()
	if got := read(f); got != "" || b.Logs() || b.Count() != 10 {
		t.Errorf("negative LogInterval: wrote %q, logs %v, count %d", got, b.Logs(), b.Count())
	}
}

// Ensure that redraws are rate-limited and that a line shows count/total,
// percentage, rate and ETA.
func TestBar_Draw(t *testing.T) {
	var buf bytes.Buffer
	clk := &fakeClock{t: time.Unix(1000, 0)}
	b := New(&buf, "edges", 1000, &Options{Force: true, Width: 100, Interval: time.Second, Now: clk.Now})
	clk.Advance(2 * time.Second)
	b.Add(100) // first draw: 100/1000 after 2 s → 50/s, ETA 18 s
	for range 50 {
		b.Add(1) // within the interval: no redraw
	}
	draws := strings.Count(buf.String(), "\r")
	if draws != 1 {
		t.Fatalf("%d draws, want 1: %q", draws, buf.String())
	}
	first := buf.String()
	for _, want := range []string{"edges", " 10%", "100/1,000", "50.0/s", "ETA 0:18", "[====>"} {
		if !strings.Contains(first, want) {
			t.Errorf("%q missing in %q", want, first)
		}
	}
	if len(first) != 100 { // "\r" + width-1 columns
		t.Errorf("line length %d", len(first))
	}
	clk.Advance(time.Second)
	b.Add(1)
	if n := strings.Count(buf.String(), "\r"); n != 2 {
		t.Errorf("%d draws after the interval, want 2", n)
	}
	b.Set(1000)
	b.Finish()
	b.Finish()
	b.Add(5)
	out := buf.String()
	if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 || !strings.Contains(out, "100%") {
		t.Errorf("final output %q", out)
	}
}

// Ensure that the line format handles an unknown total, narrow widths and
// large numbers.
func TestBar_Line(t *testing.T) {
	b := New(&bytes.Buffer{}, "gen", 0, &Options{Width: 80})
	b.Add(1234567)
	if got, want := b.Line(2*time.Second), "gen  1,234,567  617.3k/s  0:02"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	b = New(&bytes.Buffer{}, "a-very-long-label-that-fills-the-line", 10, &Options{Width: 40})
	b.Add(5)
	if got := b.Line(time.Hour + 61*time.Second); strings.Contains(got, "[") || !strings.Contains(got, "ETA 1:01:01") {
		t.Errorf("narrow line %q", got)
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %q", n, got)
		}
	}
	for x, want := range map[float64]string{0: "0.0", 2e9: "2.0G", 3.5e6: "3.5M"} {
		if got := short(x); got != want {
			t.Errorf("short(%v) = %q", x, got)
		}
	}
}

// Ensure that concurrent Adds are all counted and never draw two lines at
// once (run with -race).
func TestBar_Concurrent(t *testing.T) {
	var buf safeBuffer
	b := New(&buf, "c", 8000, &Options{Force: true, Interval: time.Nanosecond})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				b.Add(1)
			}
		}()
	}
	wg.Wait()
	b.Finish()
	if b.Count() != 8000 {
		t.Errorf("count %d", b.Count())
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\r") {
		if line != "" && !strings.HasPrefix(line, "c  ") {
			t.Fatalf("garbled line %q", line)
		}
	}
}

type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// BenchmarkBar_AddDisabled measures Add on a non-terminal writer.
func BenchmarkBar_AddDisabled(b *testing.B) {
	bar := New(&bytes.Buffer{}, "x", 0, nil)
	for b.Loop() {
		bar.Add(1)
	}
}
