// Command fasd is the command-line front end of the fasd graph-database
// extension. Its subcommands live in package command; run `fasd --help`
// for the list and the exit codes.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fasd-db/fasd/cmd/fasd/command"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	root := command.NewRoot(os.Stdout, os.Stderr)
	err := root.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fasd:", err)
	}
	os.Exit(command.ExitCode(err))
}
