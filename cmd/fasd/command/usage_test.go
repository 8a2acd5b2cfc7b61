package command

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	usageFlag     = regexp.MustCompile(`--[a-z][a-z0-9-]*`)
	usageOptional = regexp.MustCompile(`\[[^\]]*\]|\([^)]*\)`)
)

// Every usage line tells the truth: each flag it names is a flag of the
// command, and each flag it shows as mandatory (outside [optional] and
// (alternative) groups) is one the command refuses to run without: run
// with the usage line's other mandatory flags and without this one, it
// fails with an error that names the flag.
func TestUsageLines(t *testing.T) {
	// What a command checks before its mandatory flags: one choice of a
	// group the usage line requires one of.
	edges := filepath.Join(t.TempDir(), "edges.txt")
	if err := os.WriteFile(edges, []byte("1 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	alternatives := map[string][]string{
		"predict": {"--all"},
		"update":  {"--add-edges", edges},
	}
	root := NewRoot(io.Discard, io.Discard)
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		for _, f := range usageFlag.FindAllString(c.Use, -1) {
			if c.Flags().Lookup(f[2:]) == nil {
				t.Errorf("fasd %s: usage line names %s, which is no flag of the command", c.Name(), f)
			}
		}
		mandatory := usageFlag.FindAllString(usageOptional.ReplaceAllString(c.Use, ""), -1)
		for _, omit := range mandatory {
			args := append([]string{c.Name()}, alternatives[c.Name()]...)
			for _, f := range mandatory {
				if f != omit {
					// A value that passes the flag check: a fresh directory.
					args = append(args, f, filepath.Join(t.TempDir(), "x"))
				}
			}
			_, err, _ := run(t, args...)
			if err == nil || !strings.Contains(err.Error(), omit) {
				t.Errorf("fasd %s: usage line shows %s as required, but %q gives %v", c.Name(), omit, strings.Join(args, " "), err)
			}
		}
	}
}
