package command

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// CheckOptions are the flags of fasd check.
type CheckOptions struct {
	DB string
}

// AddFlags registers the flags of fasd check.
func (o *CheckOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DB, "db", "", "store directory, or postgres:// DSN of a store on PostgreSQL (required)")
}

func newCheckCommand() *cobra.Command {
	o := &CheckOptions{}
	cmd := &cobra.Command{
		Use:   "check --db DIR",
		Short: "Verify every invariant of the stored graph (symmetric adjacency, counts, id map, node sets)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if o.DB == "" {
				return usagef("check: --db DIR is required")
			}
			s, g, err := openGraphReadOnly(cmd.Context(), o.DB)
			if err != nil {
				return fmt.Errorf("check: %w", err)
			}
			defer func() { err = errors.Join(err, s.Close()) }()
			v, err := g.View()
			if err != nil {
				return fmt.Errorf("check: %w", err)
			}
			defer v.Close()
			if err := v.Check(cmd.Context()); err != nil {
				return fmt.Errorf("check: %w", err)
			}
			del, err := v.Deleted()
			if err != nil {
				return fmt.Errorf("check: %w", err)
			}
			nodes := fmt.Sprintf("%d nodes", v.NumNodes())
			if !del.IsEmpty() {
				nodes = fmt.Sprintf("%d nodes (%d of them deleted)", v.NumNodes(), del.GetCardinality())
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "ok: version %d, %s, %d edges, all invariants hold\n", v.Version(), nodes, v.NumEdges())
			return err
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
