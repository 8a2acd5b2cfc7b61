package command

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/storage"
)

// Ensure that ExitCode maps every documented error class, also when
// wrapped, and that fasd --help documents the exit codes.
func TestExitCode(t *testing.T) {
	cases := []struct {
		err  error
		code int
	}{
		{nil, ExitOK},
		{errors.New("disk on fire"), ExitFailure},
		{usagef("bad flag"), ExitUsage},
		{fmt.Errorf("load: %w", &dump.Error{File: "a.csv", Line: 3, Index: -1, Kind: dump.ErrNotNumber}), ExitBadInput},
		{fmt.Errorf("load: %w", index.ErrIncompleteLoad), ExitStoreState},
		{fmt.Errorf("load: %w", index.ErrGraphExists), ExitStoreState},
		{fmt.Errorf("stats: %w", index.ErrNoGraph), ExitStoreState},
		{fmt.Errorf("open: %w", storage.ErrBackendMismatch), ExitStoreState},
		{fmt.Errorf("load: %w", dump.ErrSpec), ExitUsage},
	}
	for _, c := range cases {
		if got := ExitCode(c.err); got != c.code {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.code)
		}
	}
	if _, err, code := run(t, "stats", "extra"); code != ExitUsage {
		t.Errorf("positional argument: exit %d (%v)", code, err)
	}
	out, err, _ := run(t, "--help")
	if err != nil || !strings.Contains(out, "Exit codes:") || !strings.Contains(out, "4  store state") {
		t.Errorf("help lacks exit codes: %v\n%s", err, out)
	}
}
