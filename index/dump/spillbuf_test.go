package dump

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// Ensure that a SpillBuffer reads back what was written, in memory, in a
// file from the start, or moved to a file midway, and leaves no file.
func TestSpillBuffer(t *testing.T) {
	data := make([]byte, 3*spillBlock+12345)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, tc := range []struct {
		name   string
		budget int
		inFile bool
	}{
		{"memory", len(data), false},
		{"file", 0, true},
		{"negative budget", -1, true},
		{"moved midway", spillBlock + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := NewSpillBuffer(dir, tc.budget)
			for rest := data; len(rest) > 0; {
				n := min(len(rest), 100_000)
				if k, err := s.Write(rest[:n]); err != nil || k != n {
					t.Fatalf("Write: %d, %v", k, err)
				}
				rest = rest[n:]
			}
			if s.InFile() != tc.inFile {
				t.Errorf("InFile = %v, want %v", s.InFile(), tc.inFile)
			}
			r, err := s.Reader()
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Errorf("read back %d bytes, not the %d written", len(got), len(data))
			}
			s.Close()
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("left %d files in the spill directory", len(ents))
			}
		})
	}
}
