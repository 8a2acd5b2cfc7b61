package command

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/query"
	"github.com/spf13/cobra"
)

func newUpdateCommand() *cobra.Command {
	o := &EngineOptions{}
	var addEdges, removeEdges, nodes, edits, deletes, units string
	var refresh, clip bool
	cmd := &cobra.Command{
		Use: "update --db DIR [--nodes F.json] [--edit F.json] [--delete F] [--add-edges F] [--remove-edges F]\n" +
			"  [--clip] [--units dump|stored] [--refresh]",
		Short: "Apply one atomic graph update and mark the affected views dirty",
		Long: `Update applies one atomic update that bumps the graph version: deleted
nodes, new nodes, node edits, added edges and removed edges, in this order.
The subgraphs the update can change are marked dirty; --refresh
re-debiases them right away (otherwise run fasd refresh).

  --nodes F.json    new nodes, as in POST /v1/nodes:
                    {"nodes":[{"id":7, "features":[…], "sensitive":1,
                    "label":0, "split":"test", "edges":[3, 4]}]}
                    (sensitive and label omitted or -1 when unknown, split
                    omitted when none; edges name existing nodes or nodes
                    of the same file)
  --edit F.json     edits of existing nodes, as in PATCH /v1/nodes:
                    {"edits":[{"id":7, "features":[…], "sensitive":-1,
                    "label":1, "split":"none"}]}; an omitted field is left
                    as it is
  --delete F        external ids of nodes to delete, one per line; their
                    edges go with them and their ids become free
  --add-edges F, --remove-edges F
                    edge files in the format of fasd load's: one pair of
                    external ids per line separated by spaces, tabs or one
                    comma

The id and edge files may be gzip; in them '#' starts a comment that runs
to the end of the line and blank lines are skipped.

Features are given in the dump's units (the numbers of the node file) and
are scaled as fasd load scaled that column. A value that is not finite or
lies more than one range width beyond the column's loaded min or max is
refused with the node id and the column named (exit 3), unless --clip
clips it to that window. --units stored gives features as stored (already
scaled) values instead: the way to add features to a store loaded by an
older fasd, which recorded no scaling.

A node in the split must be labelled, and a test node must have a known
sensitive value: an edit that makes a split node unlabelled (or a test
node's group unknown) takes it out of the split. A deleted node leaves the
split and every node set; its internal id is never reused. Label and split
changes affect the next fasd train, not the current models.

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if addEdges == "" && removeEdges == "" && nodes == "" && edits == "" && deletes == "" {
				return usagef("update: give --nodes, --edit, --delete, --add-edges or --remove-edges")
			}
			stored, err := query.ParseUnits(units)
			if err != nil {
				return usagef("update: --units: %v", err)
			}
			u := query.ExternalUpdate{Clip: clip, StoredUnits: stored}
			var addLines, removeLines, deleteLines []int
			if u.AddEdges, addLines, err = readEdgeFile(addEdges); err != nil {
				return err
			}
			if u.RemoveEdges, removeLines, err = readEdgeFile(removeEdges); err != nil {
				return err
			}
			if u.Delete, deleteLines, err = readIDFile(deletes); err != nil {
				return err
			}
			if u.Nodes, _, err = readUpdateFile(nodes, "nodes"); err != nil {
				return err
			}
			if _, u.Edits, err = readUpdateFile(edits, "edits"); err != nil {
				return err
			}
			e, _, err := o.openEngine(cmd.Context(), "update", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, e.Close()) }()
			// Endpoints and deleted ids the graph does not hold: exit 3
			// with the file and line.
			if err := checkUpdateIDs(e.Graph(), &u, []idFile{
				{addEdges, addLines}, {removeEdges, removeLines}, {deletes, deleteLines}}); err != nil {
				return fmt.Errorf("update: %w", err)
			}
			// ApplyExternal validates the rest of the update (errors
			// wrapping query.ErrInvalid: exit 3, bad input) before it
			// writes.
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
			fmt.Fprintf(w, "graph version %d: +%d/−%d nodes, +%d/−%d edges, %d nodes touched; %d subgraphs newly dirty (%d in all), %d stale nodes\n",
				rep.GraphVersion, len(rep.NodesAdded), rep.NodesDeleted, rep.EdgesAdded, rep.EdgesRemoved, rep.Touched, rep.Dirty, rep.DirtyTotal, rep.Stale)
			if rrep != nil {
				printRefresh(w, "refreshed", rrep)
			}
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&nodes, "nodes", "", "JSON file of nodes to add")
	cmd.Flags().StringVar(&edits, "edit", "", "JSON file of node edits")
	cmd.Flags().StringVar(&deletes, "delete", "", "file of external ids of nodes to delete, one per line")
	cmd.Flags().StringVar(&addEdges, "add-edges", "", "file of edges to add")
	cmd.Flags().StringVar(&removeEdges, "remove-edges", "", "file of edges to remove")
	cmd.Flags().BoolVar(&clip, "clip", false, "clip feature values far outside the loaded range instead of refusing them")
	cmd.Flags().StringVar(&units, "units", "dump", "units of feature values: dump (the node file's) or stored (already scaled)")
	cmd.Flags().BoolVar(&refresh, "refresh", false, "refresh the dirty views afterwards")
	return cmd
}

// readUpdateFile reads the JSON update document at path (query
// .DecodeUpdate) that must hold only the list named field ("nodes" or
// "edits"). An empty path reads nothing.
func readUpdateFile(path, field string) ([]query.NewNode, []query.NodeEdit, error) {
	if path == "" {
		return nil, nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("update: %w", err)
	}
	defer f.Close()
	u, err := query.DecodeUpdate(f)
	if err != nil {
		return nil, nil, usagef("update: %s: %v", path, err)
	}
	n := len(u.Nodes)
	if field == "edits" {
		n = len(u.Edits)
	}
	if n == 0 || n != len(u.Nodes)+len(u.Edits)+len(u.Delete)+len(u.AddEdges)+len(u.RemoveEdges) || u.Clip || u.StoredUnits {
		return nil, nil, usagef("update: %s: want {%q: [...]} and nothing else (use --clip, --units)", path, field)
	}
	return u.Nodes, u.Edits, nil
}

// readIDFile reads external node ids, one per line, with '#' comments and
// blank lines skipped, plain or gzip (dump.Open), and the line of each.
func readIDFile(path string) ([]int64, []int, error) {
	if path == "" {
		return nil, nil, nil
	}
	r, err := dump.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("update: %w", err)
	}
	defer r.Close()
	var out []int64
	var lines []int
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		s := sc.Text()
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("update: %w", &dump.Error{File: filepath.Base(path), Line: line, Index: -1,
				Kind: dump.ErrBadID, Detail: fmt.Sprintf("not a node id: %q", s)})
		}
		out = append(out, id)
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("update: %s: %w", path, err)
	}
	return out, lines, nil
}

// readEdgeFile reads the edge pairs (external ids) of an update with the
// edge-line rule of fasd load (dump.ParseEdgeLine): two ids separated by
// blanks or one comma, '#' comments, blank lines skipped, plain or gzip;
// and the line of each.
func readEdgeFile(path string) ([][2]int64, []int, error) {
	if path == "" {
		return nil, nil, nil
	}
	er, err := dump.OpenEdges(path)
	if err != nil {
		return nil, nil, fmt.Errorf("update: %w", err)
	}
	defer er.Close()
	var out [][2]int64
	var lines []int
	for er.Next() {
		u, v := er.Edge()
		if u == v {
			return nil, nil, fmt.Errorf("update: %w", &dump.Error{File: filepath.Base(path), Line: er.Line(), Index: -1,
				Kind: dump.ErrBadEdge, Detail: fmt.Sprintf("self-loop on %d", u)})
		}
		out = append(out, [2]int64{u, v})
		lines = append(lines, er.Line())
	}
	if err := er.Err(); err != nil {
		return nil, nil, fmt.Errorf("update: %w", err)
	}
	return out, lines, nil
}

// idFile is a file of an update and the line of each of its items.
type idFile struct {
	path  string
	lines []int
}

// checkUpdateIDs refuses, with the file and line (a *dump.Error, exit 3),
// an edge of --add-edges or --remove-edges with an endpoint the graph does
// not hold (neither stored nor added by the update) or that is deleted
// (before or by this update), and an id of --delete that is unknown or
// deleted already. files are the add-edges, remove-edges and delete files.
func checkUpdateIDs(g *index.Graph, u *query.ExternalUpdate, files []idFile) error {
	v, err := g.View()
	if err != nil {
		return err
	}
	defer v.Close()
	added := map[int64]bool{}
	for _, n := range u.Nodes {
		added[n.ID] = true
	}
	deleting := map[int64]bool{}
	for _, id := range u.Delete {
		deleting[id] = true
	}
	// problem says what is wrong with id, "" if nothing.
	problem := func(id int64) (string, error) {
		if added[id] {
			return "", nil
		}
		n, err := v.InternalID(id)
		if errors.Is(err, index.ErrUnknownID) {
			return fmt.Sprintf("node %d is not in the graph (never loaded, or deleted)", id), nil
		}
		if err != nil {
			return "", err
		}
		del, err := v.IsDeleted(n)
		if err != nil {
			return "", err
		}
		if del {
			return fmt.Sprintf("node %d was deleted", id), nil
		}
		return "", nil
	}
	for fi, edges := range [][][2]int64{u.AddEdges, u.RemoveEdges} {
		for i, e := range edges {
			for field, id := range e {
				msg, err := problem(id)
				if err != nil {
					return err
				}
				if msg == "" && deleting[id] {
					msg = fmt.Sprintf("node %d is deleted by this update (--delete)", id)
				}
				if msg != "" {
					return &dump.Error{File: filepath.Base(files[fi].path), Line: files[fi].lines[i], Index: field,
						Kind: index.ErrUnknownEndpoint, Detail: msg}
				}
			}
		}
	}
	for i, id := range u.Delete {
		msg, err := problem(id)
		if err != nil {
			return err
		}
		if msg != "" {
			return &dump.Error{File: filepath.Base(files[2].path), Line: files[2].lines[i], Index: -1,
				Kind: dump.ErrBadID, Detail: msg}
		}
	}
	return nil
}
