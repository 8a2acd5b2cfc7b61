package command

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// One noun per concept. Three registries used to share the flag --preset;
// each now has its own name, and the old spelling keeps working for a
// release as a hidden alias of the same value (a use of it prints a note
// to stderr):
//
//	fasd load --dataset NAME       a published dataset's file names and conventions (was --preset)
//	fasd load --list-datasets      (was --list-presets)
//	fasd gen --size NAME           a generator setting: small, removable, pokec (was --preset)
//	fasd train/eval/sweep --profile NAME   a hyper-parameter profile (was --preset)
//
// The registries themselves (dump.Preset, pipeline presets, synth
// presets) keep their Go names.

// oldSpelling is the annotation that marks a flag as the old spelling of
// another; its value is the new name.
const oldSpelling = "fasd-old-spelling"

// renameFlag gives the flag old of fs the new name name, with usage, and
// keeps old working as a hidden alias that sets the same value (see
// warnOldSpellings).
func renameFlag(fs *pflag.FlagSet, old, name, usage string) {
	f := fs.Lookup(old)
	if f == nil {
		panic("command: renameFlag: no flag --" + old)
	}
	fs.AddFlag(&pflag.Flag{Name: name, Usage: usage, Value: f.Value, DefValue: f.DefValue, NoOptDefVal: f.NoOptDefVal})
	f.Hidden = true
	if err := fs.SetAnnotation(old, oldSpelling, []string{name}); err != nil {
		panic(err)
	}
}

// warnOldSpellings notes on the command's stderr every old spelling the
// command line used. (pflag's own deprecation notes go to stdout, where
// they would break the --json output of the same command.)
func warnOldSpellings(cmd *cobra.Command, _ []string) {
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if names := f.Annotations[oldSpelling]; len(names) == 1 {
			fmt.Fprintf(cmd.ErrOrStderr(), "fasd: --%s is the old spelling of --%s; it will go in a later release\n", f.Name, names[0])
		}
	})
}

// renameProfileFlags names the hyper-parameter preset of the training
// commands --profile (their --preset comes from ConfigOptions.AddFlags).
func renameProfileFlags(cmds ...*cobra.Command) {
	for _, c := range cmds {
		f := c.Flags().Lookup("preset")
		usage := strings.Replace(f.Usage, "hyper-parameter preset", "hyper-parameter profile", 1)
		renameFlag(c.Flags(), "preset", "profile", usage)
	}
}
