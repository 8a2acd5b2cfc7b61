package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/fasd-db/fasd/query"
	"github.com/spf13/cobra"
)

func newPredictCommand() *cobra.Command {
	o := &EngineOptions{}
	var ids []int64
	var all bool
	cmd := &cobra.Command{
		Use:   "predict --db DIR (--node ID ... | --all) [--json]",
		Short: "Print the fair prediction of nodes (external ids)",
		Long: `Predict prints the fair prediction of each node: the class, the probabilities
averaged over the subgraphs containing it, their number, the w/o-Diffusion
probabilities when the models have a baseline, the versions and where the
answer came from (view, cold: computed now and stored, approx: the node is in
no subgraph). --all streams every stored view (JSON lines with --json).

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if len(ids) == 0 && !all {
				return usagef("predict: give --node ID (repeatable) or --all")
			}
			e, _, err := o.openEngine("predict", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, e.Close()) }()
			w := cmd.OutOrStdout()
			if all {
				v, err := e.Graph().View()
				if err != nil {
					return fmt.Errorf("predict: %w", err)
				}
				defer v.Close()
				for p, err := range e.All(cmd.Context()) {
					if err != nil {
						return fmt.Errorf("predict: %w", err)
					}
					// All streams internal ids; the external one is
					// what a user can pass back to --node.
					if p.ID, err = v.ExternalID(p.Node); err != nil {
						return fmt.Errorf("predict: %w", err)
					}
					if err := printPrediction(w, p, o.JSON, true); err != nil {
						return err
					}
				}
				return nil
			}
			for _, id := range ids {
				p, err := e.PredictExternal(cmd.Context(), id)
				if err != nil {
					return fmt.Errorf("predict: %w", err)
				}
				if err := printPrediction(w, p, o.JSON, false); err != nil {
					return err
				}
			}
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().Int64SliceVar(&ids, "node", nil, "external node id (repeatable, or comma-separated)")
	cmd.Flags().BoolVar(&all, "all", false, "stream every stored view")
	return cmd
}

func printPrediction(w io.Writer, p query.Prediction, asJSON, compact bool) error {
	if asJSON {
		if compact {
			return printJSONLine(w, p)
		}
		return printJSON(w, p)
	}
	label := fmt.Sprintf("node %d", p.ID)
	if compact {
		label = fmt.Sprintf("node %d (#%d)", p.ID, p.Node)
	}
	fmt.Fprintf(w, "%s: class %d  P(1)=%.4f  subgraphs %d  source %s", label, p.Class, p.Probs[1], p.Subgraphs, p.Source)
	if p.Baseline != nil {
		fmt.Fprintf(w, "  w/o-diffusion P(1)=%.4f", p.Baseline[1])
	}
	if p.Stale {
		fmt.Fprint(w, "  STALE")
	}
	fmt.Fprintf(w, "  (view v%d, graph v%d)\n", p.ViewVersion, p.GraphVersion)
	return nil
}

func printJSONLine(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}
