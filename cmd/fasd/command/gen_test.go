package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Ensure that fasd gen writes both files with the knobs applied and that
// invalid knobs are usage errors.
func TestGen(t *testing.T) {
	dir := t.TempDir()
	out, err, code := run(t, "gen", "--out", dir, "--nodes", "300", "--features", "6", "--seed", "3")
	if err != nil || code != ExitOK {
		t.Fatalf("gen: %v (exit %d)", err, code)
	}
	if !strings.Contains(out, "nodes     300 (features 6") {
		t.Errorf("output:\n%s", out)
	}
	for _, f := range []string{"synth.csv", "synth_relationship.txt"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	out, err, code = run(t, "gen", "--out", t.TempDir(), "--preset", "removable", "--nodes", "300", "--features", "4")
	if err != nil || code != ExitOK {
		t.Fatalf("gen removable: %v (exit %d)", err, code)
	}
	for _, want := range []string{"label-only columns  x1,b1\n", "leak-only columns   x0,b0\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("removable output lacks %q:\n%s", want, out)
		}
	}
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"no out", []string{"gen"}, ExitUsage},
		{"bad preset", []string{"gen", "--out", dir, "--preset", "huge"}, ExitUsage},
		{"bad knob", []string{"gen", "--out", dir, "--homophily", "1.5"}, ExitUsage},
		{"bad leak share", []string{"gen", "--out", dir, "--separate", "--leak-share", "2"}, ExitUsage},
		{"bad flag", []string{"gen", "--out", dir, "--nodes", "many"}, ExitUsage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err, code := run(t, c.args...); code != c.code {
				t.Errorf("exit %d (%v), want %d", code, err, c.code)
			}
		})
	}
}
