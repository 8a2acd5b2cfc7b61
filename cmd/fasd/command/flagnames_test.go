package command

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Ensure that every renamed flag answers to both spellings with the same
// effect, that only the new one shows in --help, and that the old one is
// noted on stderr, never on stdout.
func TestRenamedFlags(t *testing.T) {
	for _, tc := range []struct {
		cmd, old, name string
	}{
		{"load", "preset", "dataset"},
		{"load", "list-presets", "list-datasets"},
		{"gen", "preset", "size"},
		{"train", "preset", "profile"},
		{"eval", "preset", "profile"},
		{"sweep", "preset", "profile"},
	} {
		root := NewRoot(&bytes.Buffer{}, &bytes.Buffer{})
		c, _, err := root.Find([]string{tc.cmd})
		if err != nil {
			t.Fatal(err)
		}
		oldF, newF := c.Flags().Lookup(tc.old), c.Flags().Lookup(tc.name)
		if oldF == nil || newF == nil || oldF.Value != newF.Value || !oldF.Hidden || newF.Hidden {
			t.Errorf("fasd %s: --%s and --%s are not one value with the old spelling hidden", tc.cmd, tc.old, tc.name)
		}
		// The flag list of --help.
		help := c.Flags().FlagUsages()
		if strings.Contains(help, "--"+tc.old+" ") || !strings.Contains(help, "--"+tc.name+" ") {
			t.Errorf("fasd %s --help lists --%s or not --%s", tc.cmd, tc.old, tc.name)
		}
	}
	// Both spellings do the same; the old one says so on stderr only.
	for _, flag := range []string{"--size", "--preset"} {
		dir := filepath.Join(t.TempDir(), "g")
		var out, errOut bytes.Buffer
		root := NewRoot(&out, &errOut)
		root.SetArgs([]string{"gen", "--out", dir, flag, "removable", "--nodes", "200"})
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("gen %s: %v", flag, err)
		}
		if !strings.Contains(out.String(), "nodes     200") || strings.Contains(out.String(), "old spelling") {
			t.Errorf("gen %s removable: stdout %q", flag, out.String())
		}
		if noted := strings.Contains(errOut.String(), "--preset is the old spelling of --size"); noted != (flag == "--preset") {
			t.Errorf("gen %s: stderr %q", flag, errOut.String())
		}
	}
}
