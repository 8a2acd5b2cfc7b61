package command

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/index/split"
	"github.com/fasd-db/fasd/index/synth"
	"github.com/fasd-db/fasd/query"
	"github.com/fasd-db/fasd/storage"
	"github.com/spf13/cobra"
)

// Exit codes (see the package doc).
const (
	ExitOK         = 0
	ExitFailure    = 1
	ExitUsage      = 2
	ExitBadInput   = 3
	ExitStoreState = 4
)

const exitHelp = `Exit codes:
  0  success
  1  failure (I/O, engine errors)
  2  usage: unknown command or flag, missing or invalid flag value
  3  bad input: a dump file is missing or malformed (file:line in the message),
     or describes a degenerate graph (no nodes, no edge kept, one label
     class, one sensitive group; the message names the override flag), or
     an update is invalid for the graph (a feature count, a value far
     outside the loaded range, a split rule; the message names the field)
     or an update file names an unknown or deleted node (file:line)
  4  store state: incomplete load (reload with --replace), graph already
     present (use --replace), no graph, other backend, unknown format, corrupt
     or damaged (a store file missing, truncated or failing its checksum),
     --db not a store (a regular file, an empty or missing directory: only
     load creates a store), no trained models (run fasd train first), store
     open in another process, no recorded feature scaling (loaded by an older
     fasd: reload, or give update features with --units stored)
`

// UsageError marks an error in the command line itself.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s: unexpected argument %q", cmd.Name(), args[0])
	}
	return nil
}

// ErrNoStore is returned when --db names a directory that does not exist.
var ErrNoStore = errors.New("no store")

// ExitCode maps an error returned by the root command to the documented
// exit code.
func ExitCode(err error) int {
	var ue *UsageError
	var de *dump.Error
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, index.ErrOutOfRange):
		return ExitBadInput
	case errors.Is(err, index.ErrNoScaling):
		return ExitStoreState
	case errors.As(err, &ue), errors.Is(err, dump.ErrSpec), errors.Is(err, dump.ErrUnknownPreset),
		errors.Is(err, index.ErrInvalid), errors.Is(err, synth.ErrConfig), errors.Is(err, split.ErrParams):
		return ExitUsage
	case errors.Is(err, index.ErrIncompleteLoad), errors.Is(err, index.ErrGraphExists), errors.Is(err, index.ErrNoGraph), errors.Is(err, index.ErrDependents),
		errors.Is(err, index.ErrFormat), errors.Is(err, index.ErrCorrupt), errors.Is(err, ErrNoStore),
		errors.Is(err, storage.ErrBackendMismatch), errors.Is(err, storage.ErrFormat), errors.Is(err, storage.ErrNotStore), errors.Is(err, storage.ErrLocked), errors.Is(err, storage.ErrCorrupt),
		errors.Is(err, query.ErrNoModel):
		return ExitStoreState
	case errors.As(err, &de), errors.Is(err, fs.ErrNotExist), errors.Is(err, index.ErrDegenerate), errors.Is(err, query.ErrInvalid):
		return ExitBadInput
	}
	return ExitFailure
}

// NewRoot builds the fasd root command writing its output to out and
// diagnostics (progress bars) to errOut.
func NewRoot(out, errOut io.Writer) *cobra.Command {
	var cache ByteSize
	root := &cobra.Command{
		Use:   "fasd",
		Short: "Fair node predictions with FASD on an embedded graph store",
		Long: `fasd stores an attributed graph in an embedded key-value store (Pebble or
Badger) and serves fair node predictions with FASD (Fairness-Aware Subgraph
Diffusion).

` + exitHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			warnOldSpellings(cmd, args)
			if cache > 0 {
				cmd.SetContext(withCache(cmd.Context(), cache))
			}
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for fasd (see fasd --help)", args[0])
			}
			return cmd.Help()
		},
	}
	root.PersistentFlags().Var(&cache, "cache", fmt.Sprintf("block cache of the store's engine (Pebble, Badger; not PostgreSQL), e.g. 1GiB (default %s): "+
		"a graph whose node records do not fit reads from the file system on every miss", ByteSize(storage.DefaultCacheBytes)))
	root.PersistentFlags().Lookup("cache").DefValue = "0" // the default is in the usage
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	root.AddCommand(newGenCommand(), newLoadCommand(), newStatsCommand(), newCheckCommand())
	train, eval, sweep := newTrainCommand(), newEvalCommand(), newSweepCommand()
	renameProfileFlags(train, eval, sweep)
	root.AddCommand(train, eval, sweep)
	root.AddCommand(newMaterializeCommand(), newPredictCommand(), newUpdateCommand(), newRefreshCommand(),
		newAuditCommand(), newServeCommand(), newDemoCommand(), newWorkerCommand())
	return root
}
