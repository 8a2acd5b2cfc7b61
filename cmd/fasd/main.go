// Command fasd is the command-line front end of the fasd graph-database
// extension. Its subcommands live in package command; run `fasd --help`
// for the list and the exit codes.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/fasd-db/fasd/cmd/fasd/command"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	root := command.NewRoot(os.Stdout, os.Stderr)
	err := root.ExecuteContext(ctx)
	stop()
	command.FaultHookReport(os.Stderr)
	if err != nil {
		// One line: errors joined with errors.Join (a failed command and
		// the store's Close) print on one line, separated by "; ".
		fmt.Fprintln(os.Stderr, "fasd:", strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; "))
	}
	os.Exit(command.ExitCode(err))
}
