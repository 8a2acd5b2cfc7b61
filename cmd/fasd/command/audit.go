package command

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	"github.com/fasd-db/fasd/query"
	"github.com/fasd-db/fasd/query/model"
	"github.com/spf13/cobra"
)

func newAuditCommand() *cobra.Command {
	o := &EngineOptions{}
	var set string
	cmd := &cobra.Command{
		Use:   "audit --db DIR [--set test|labelled] [--json]",
		Short: "Fairness audit (Acc, ΔDP, ΔEO, AUC, F1 per group) of the current views",
		Long: `Audit computes accuracy, ΔDP, ΔEO, the ROC AUC of P(1), F1 of class 1 and
macro-F1 (AUC ½ and macro-F1 ≤ ½ mark a constant predictor), and per
sensitive group the accuracy,
positive rate and true-positive rate, of the current views over the test
nodes (or all labelled nodes), next to the same metrics for the w/o-Diffusion
predictions (the classifier trained on the original subgraphs) when the
models have one. It reads views only; stale views are counted.

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			e, _, err := o.openEngine(cmd.Context(), "audit", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, e.Close()) }()
			rep, err := e.Audit(cmd.Context(), set)
			if errors.Is(err, query.ErrInvalid) {
				return usagef("audit: %v", err)
			}
			if err != nil {
				return fmt.Errorf("audit: %w", err)
			}
			if o.JSON {
				return printJSON(cmd.OutOrStdout(), jsonSafeAudit(rep))
			}
			printAudit(cmd.OutOrStdout(), rep)
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&set, "set", "test", "nodes to evaluate: test or labelled")
	return cmd
}

// jsonSafeAudit replaces NaN (empty groups) by -1, which JSON can carry.
func jsonSafeAudit(r *query.AuditReport) *query.AuditReport {
	c := *r
	fix := func(m *query.Metrics) {
		for _, p := range []*float64{&m.Acc, &m.AUC, &m.F1, &m.MacroF1, &m.DP, &m.EO, &m.Groups[0].Acc, &m.Groups[0].PosRate, &m.Groups[0].TPR,
			&m.Groups[1].Acc, &m.Groups[1].PosRate, &m.Groups[1].TPR} {
			if math.IsNaN(*p) {
				*p = -1
			}
		}
	}
	fix(&c.Fair)
	if r.Variants != nil {
		c.Variants = make(map[string]*query.Metrics, len(r.Variants))
		for name, m := range r.Variants {
			b := *m
			fix(&b)
			c.Variants[name] = &b
		}
	}
	return &c
}

// variantLabel is the row label of a model variant.
func variantLabel(name string) string {
	if name == model.NoDiffusionVariant {
		return "w/o Diffusion (before)"
	}
	return name
}

func printAudit(w io.Writer, r *query.AuditReport) {
	fmt.Fprintf(w, "fairness audit of the views: %d %s nodes (graph v%d, %d without a view, %d stale)\n",
		r.Nodes, r.Set, r.GraphVersion, r.Missing, r.Stale)
	fmt.Fprintf(w, "  %-22s %7s %7s %7s %7s %7s %8s   %-26s %-26s\n", "predictions", "Acc", "ΔDP", "ΔEO", "AUC", "F1", "macro-F1",
		"s=0 n/acc/pos/tpr", "s=1 n/acc/pos/tpr")
	row := func(name string, m *query.Metrics) {
		g := func(i int) string {
			x := m.Groups[i]
			return fmt.Sprintf("%d/%.1f/%.1f/%.1f", x.N, 100*x.Acc, 100*x.PosRate, 100*x.TPR)
		}
		fmt.Fprintf(w, "  %-22s %7.2f %7.2f %7.2f %7.2f %7.2f %8.2f   %-26s %-26s\n", name, 100*m.Acc, 100*m.DP, 100*m.EO,
			100*m.AUC, 100*m.F1, 100*m.MacroF1, g(0), g(1))
	}
	for _, name := range slices.Sorted(maps.Keys(r.Variants)) {
		row(variantLabel(name), r.Variants[name])
	}
	row("FASD (after)", &r.Fair)
}
