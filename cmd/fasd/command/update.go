package command

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

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
"edges"}]} as in POST /v1/nodes), added edges and removed edges (edge files:
one "u v" pair of external ids per line; blank lines and # comments are
skipped). The subgraphs the update can change are marked dirty; --refresh
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

// readEdgeFile reads "u v" pairs of external ids, one per line.
func readEdgeFile(path string) ([][2]int64, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	defer f.Close()
	return parseEdges(path, f)
}

func parseEdges(name string, r io.Reader) ([][2]int64, error) {
	var out [][2]int64
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(t, '#'); i >= 0 {
			t = strings.TrimSpace(t[:i])
		}
		if t == "" {
			continue
		}
		f := strings.FieldsFunc(t, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
		if len(f) != 2 {
			return nil, usagef("update: %s:%d: want two node ids, got %q", name, line, t)
		}
		var e [2]int64
		for i := range 2 {
			v, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				return nil, usagef("update: %s:%d: %q is not an integer id", name, line, f[i])
			}
			e[i] = v
		}
		if e[0] == e[1] {
			return nil, usagef("update: %s:%d: self-loop on %d", name, line, e[0])
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("update: %s: %w", name, err)
	}
	return out, nil
}
