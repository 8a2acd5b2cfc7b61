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
	"time"

	"github.com/fasd-db/fasd/cmd/fasd/command"
)

// interruptGrace is how long a command may take to stop after SIGINT or
// SIGTERM.
const interruptGrace = 10 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		// The first signal cancels the command; a second one ends the
		// process at once, and so does the grace period running out (a
		// command blocked in the storage engine). The stores are
		// crash-safe: what was committed stays.
		stop()
		time.Sleep(interruptGrace)
		fmt.Fprintf(os.Stderr, "fasd: interrupted, and the command did not stop within %v: exiting\n", interruptGrace)
		os.Exit(command.ExitFailure)
	}()
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
