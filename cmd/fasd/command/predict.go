package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/fasd-db/fasd/query"
	"github.com/spf13/cobra"
)

func newPredictCommand() *cobra.Command {
	o := &EngineOptions{}
	var ids []int64
	var all, subgraph bool
	cmd := &cobra.Command{
		Use:   "predict --db DIR (--node ID ... | --all) [--subgraph] [--json]",
		Short: "Print the fair prediction of nodes (external ids)",
		Long: `Predict prints the fair prediction of each node: the class, the probabilities
averaged over the subgraphs containing it, their number, those of the
model's other variants (no_diffusion: the w/o-Diffusion classifier), the
versions and where the
answer came from (view, cold: computed now and stored, approx: the node is in
no subgraph). --all streams every stored view (JSON lines with --json).

With --subgraph it prints instead the debiased subgraph rooted at each node
(members, debiased features X̃ and weighted adjacency Ã with --json; a
summary otherwise), regenerated from its recipe exactly as the views used it.

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if len(ids) == 0 && !all {
				return usagef("predict: give --node ID (repeatable) or --all")
			}
			if subgraph && all {
				return usagef("predict: --subgraph needs --node ID, not --all")
			}
			e, _, err := o.openEngine(cmd.Context(), "predict", cmd.ErrOrStderr())
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
				if subgraph {
					d, err := e.SubgraphExternal(cmd.Context(), id)
					if err != nil {
						return fmt.Errorf("predict: %w", err)
					}
					if err := printSubgraph(w, d, o.JSON); err != nil {
						return err
					}
					continue
				}
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
	cmd.Flags().BoolVar(&subgraph, "subgraph", false, "print the debiased subgraph rooted at each node instead")
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
	for _, name := range slices.Sorted(maps.Keys(p.Variants)) {
		fmt.Fprintf(w, "  %s P(1)=%.4f", name, p.Variants[name][1])
	}
	if p.Stale {
		fmt.Fprint(w, "  STALE")
	}
	fmt.Fprintf(w, "  (view v%d, graph v%d)\n", p.ViewVersion, p.GraphVersion)
	return nil
}

func printSubgraph(w io.Writer, d *query.DebiasedSubgraph, asJSON bool) error {
	if asJSON {
		return printJSON(w, d)
	}
	n := len(d.Nodes)
	edges := 0
	lo, hi := float32(0), float32(0)
	for i := range n {
		for j := i + 1; j < n; j++ {
			if a := d.A[i*n+j]; a != 0 {
				if edges == 0 || a < lo {
					lo = a
				}
				hi = max(hi, a)
				edges++
			}
		}
	}
	fmt.Fprintf(w, "subgraph of node %d: %d nodes, %d features, %d edges", d.RootID, n, d.D, edges)
	if edges > 0 {
		fmt.Fprintf(w, " (weights %.3f–%.3f)", lo, hi)
	}
	fmt.Fprintf(w, ", graph v%d\n  members %v\n", d.GraphVersion, d.IDs)
	return nil
}

func printJSONLine(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}
