package command

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/query"
	"github.com/spf13/cobra"
)

func newUpdateCommand() *cobra.Command {
	o := &EngineOptions{}
	var addEdges, removeEdges, nodes string
	var refresh bool
	cmd := &cobra.Command{
		Use:   "update --db DIR [--nodes F.json] [--add-edges F] [--remove-edges F] [--refresh]",
		Short: "Apply one atomic graph update and mark the affected views dirty",
		Long: `Update applies, as one atomic update that bumps the graph version, new nodes
(--nodes: JSON {"nodes":[{"id", "features", "sensitive", "label", "split",
"edges"}]} as in POST /v1/nodes), added edges and removed edges (edge files,
plain or gzip, in the format of fasd load's: one pair of external ids per
line separated by spaces, tabs or one comma; '#' starts a comment that runs
to the end of the line; blank lines are skipped). The subgraphs the update can change are marked dirty; --refresh
re-debiases them right away (otherwise run fasd refresh).

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if addEdges == "" && removeEdges == "" && nodes == "" {
				return usagef("update: give --nodes, --add-edges or --remove-edges")
			}
			add, err := readEdgeFile(addEdges)
			if err != nil {
				return err
			}
			remove, err := readEdgeFile(removeEdges)
			if err != nil {
				return err
			}
			e, _, err := o.openEngine("update", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, e.Close()) }()
			u := query.ExternalUpdate{AddEdges: add, RemoveEdges: remove}
			if nodes != "" {
				f, err := os.Open(nodes)
				if err != nil {
					return fmt.Errorf("update: %w", err)
				}
				u.Nodes, err = query.DecodeNodes(f)
				f.Close()
				if err != nil {
					return usagef("update: %s: %v", nodes, err)
				}
				if err := u.Validate(len(e.Graph().Schema().Features)); err != nil {
					return usagef("update: %s: %v", nodes, err)
				}
			}
			rep, err := e.ApplyExternal(cmd.Context(), u)
			if err != nil {
				return fmt.Errorf("update: %w", err)
			}
			var rrep *query.RefreshReport
			if refresh {
				if rrep, err = e.Refresh(cmd.Context()); err != nil {
					return fmt.Errorf("update: refresh: %w", err)
				}
			}
			w := cmd.OutOrStdout()
			if o.JSON {
				return printJSON(w, map[string]any{"update": rep, "refresh": rrep})
			}
			fmt.Fprintf(w, "graph version %d: +%d nodes, +%d/−%d edges, %d nodes touched; %d subgraphs newly dirty (%d in all), %d stale nodes\n",
				rep.GraphVersion, len(rep.NodesAdded), rep.EdgesAdded, rep.EdgesRemoved, rep.Touched, rep.Dirty, rep.DirtyTotal, rep.Stale)
			if rrep != nil {
				printRefresh(w, "refreshed", rrep)
			}
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&nodes, "nodes", "", "JSON file of nodes to add")
	cmd.Flags().StringVar(&addEdges, "add-edges", "", "file of edges to add")
	cmd.Flags().StringVar(&removeEdges, "remove-edges", "", "file of edges to remove")
	cmd.Flags().BoolVar(&refresh, "refresh", false, "refresh the dirty views afterwards")
	return cmd
}

// readEdgeFile reads the edge pairs (external ids) of an update with the
// edge-line rule of fasd load (dump.ParseEdgeLine): two ids separated by
// blanks or one comma, '#' comments, blank lines skipped, plain or gzip.
func readEdgeFile(path string) ([][2]int64, error) {
	if path == "" {
		return nil, nil
	}
	er, err := dump.OpenEdges(path)
	if err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	defer er.Close()
	var out [][2]int64
	for er.Next() {
		u, v := er.Edge()
		if u == v {
			return nil, fmt.Errorf("update: %w", &dump.Error{File: filepath.Base(path), Line: er.Line(), Index: -1,
				Kind: dump.ErrBadEdge, Detail: fmt.Sprintf("self-loop on %d", u)})
		}
		out = append(out, [2]int64{u, v})
	}
	if err := er.Err(); err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	return out, nil
}
