package command

import (
	"bytes"
	"context"
	"testing"
)

// run executes the root command with args and returns stdout, the error
// and its exit code.
//
//lint:ignore ST1008 every CLI test reads (out, err, code) in the order the command reports them
func run(t testing.TB, args ...string) (string, error, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := NewRoot(&out, &errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err, ExitCode(err)
}
