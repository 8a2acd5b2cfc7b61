package command

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/index/synth"
	"github.com/fasd-db/fasd/query"
	"github.com/spf13/cobra"
)

func newDemoCommand() *cobra.Command {
	var dir string
	var fast bool
	var nodes int
	var sets []string
	var seeds int
	cmd := &cobra.Command{
		Use:   "demo [--dir DIR] [--nodes N] [--seeds S] [--set key=val ...]",
		Short: "Run the whole chain on a generated biased graph",
		Long: `Demo runs the main job end to end in DIR (deleted first): generate a graph
whose bias is removable (gen --size removable: labels almost independent of
the sensitive group, which leaks into features and group-homophilous edges),
load it into an embedded Pebble store, compare FASD (f on the debiased
subgraphs, and fasd_gcn: a GCN on the node-mean debiased features) with the
w/o-Diffusion baseline, the plain full-graph GCN and the majority-class
constant over a few seeds (paired differences with confidence intervals,
fresh-probe AUC and verdicts in words), train and store one model,
materialize the views, query some nodes, apply an update (new edges and a new
labelled node), refresh, and print the fairness audit (w/o Diffusion before,
FASD after) of the views before and after the update. With --fast (the
default) every stage is shortened; --nodes changes the size of the generated
graph, --seeds the number of compared runs and --set adds training overrides
(as in fasd train).

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return usagef("demo: --dir must not be empty")
			}
			if seeds < 2 {
				return usagef("demo: --seeds %d: at least 2 (paired confidence intervals need two)", seeds)
			}
			if nodes != 0 && nodes < demoMinNodes {
				return usagef("demo: --nodes %d: at least %d (0: the removable size's)", nodes, demoMinNodes)
			}
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if err := os.RemoveAll(dir); err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			db, dump := filepath.Join(dir, "store"), filepath.Join(dir, "dump")
			start := time.Now()
			step := func(title string, args ...string) error {
				fmt.Fprintf(out, "\n== %s  (fasd %s)  [%s]\n", title, args[0], time.Since(start).Round(time.Second))
				root := NewRoot(out, errOut)
				root.SetArgs(args)
				return root.ExecuteContext(cmd.Context())
			}
			var overrides []string
			if fast {
				// A few minutes on 2 cores: smaller subgraphs (k = 5) and
				// short schedules for the subgraph networks; the default
				// debiasing. The full-graph GCN (gcn, fasd_gcn) keeps its
				// own schedule: it costs seconds, and a shortened plain GCN
				// would be a straw man for the comparison.
				overrides = append(overrides, "--set", "sample.fanout=5",
					"--set", "sens.epochs=40", "--set", "score.budget=2000",
					"--set", "classifier.epochs=60")
			}
			for _, kv := range sets {
				overrides = append(overrides, "--set", kv)
			}
			train := append([]string{"train", "--db", db, "--diagnostics=false"}, overrides...)
			eval := append([]string{"eval", "--db", db, "--seeds", strconv.Itoa(seeds), "--variants", "fasd,fasd_gcn,no_diffusion,gcn,majority"}, overrides...)
			gen := []string{"generate a graph with removable bias", "gen", "--out", dump, "--size", "removable"}
			if nodes > 0 {
				gen = append(gen, "--nodes", strconv.Itoa(nodes))
			}
			ids := []string{}
			for _, i := range []int{0, 1, 2, 3, 4} {
				ids = append(ids, "--node", strconv.FormatInt(synth.NodeID(i), 10))
			}
			steps := [][]string{
				gen,
				{"load it into an embedded Pebble store", "load", "--db", db, "--dataset", "synth", "--dir", dump},
				{"graph statistics", "stats", "--db", db},
				append([]string{"compare FASD with the w/o-Diffusion baseline and the plain GCN (paired over seeds)"}, eval...),
				append([]string{"train and store FASD and the w/o-Diffusion baseline"}, train...),
				{"materialize the fair-prediction views", "materialize", "--db", db},
				{"fairness audit of the views (before = w/o Diffusion, after = FASD debiasing)", "audit", "--db", db},
				append([]string{"query some nodes", "predict", "--db", db}, ids...),
			}
			for _, s := range steps {
				if err := step(s[0], s[1:]...); err != nil {
					return err
				}
			}
			// An update: edges across the graph and a new labelled node.
			edges, nodes, err := demoUpdateFiles(dir)
			if err != nil {
				return err
			}
			steps = [][]string{
				{"apply an update (edges and a new labelled node)", "update", "--db", db, "--add-edges", edges, "--nodes", nodes},
				append([]string{"query the same nodes (stale ones are recomputed on the spot)", "predict", "--db", db}, ids...),
				{"refresh the remaining dirty subgraphs", "refresh", "--db", db},
				{"query the new node", "predict", "--db", db, "--node", "999000001"},
				{"fairness audit after the update", "audit", "--db", db},
			}
			for _, s := range steps {
				if err := step(s[0], s[1:]...); err != nil {
					return err
				}
			}
			fmt.Fprintf(out, "\ndemo finished in %s; the store is in %s (try: fasd serve --db %s)\n",
				time.Since(start).Round(time.Second), db, db)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "demo-db", "working directory (deleted first)")
	cmd.Flags().BoolVar(&fast, "fast", true, "train with shortened schedules")
	cmd.Flags().IntVar(&seeds, "seeds", 5, "seeds of the FASD vs w/o-Diffusion comparison (at least 2)")
	cmd.Flags().IntVar(&nodes, "nodes", 0, fmt.Sprintf("nodes of the generated graph (0: the removable preset's; at least %d)", demoMinNodes))
	cmd.Flags().StringArrayVar(&sets, "set", nil, "extra training override key=value (repeatable), applied last")
	return cmd
}

// demoMinNodes is the smallest graph the demo's update fits: its edges
// join the first 200 generated nodes.
const demoMinNodes = 200

// demoUpdateFiles writes the demo's update: 20 random edges among the first
// 200 generated nodes, and one new labelled test node linked to five.
func demoUpdateFiles(dir string) (edges, nodes string, err error) {
	rng := rand.New(rand.NewPCG(1, 2))
	edges = filepath.Join(dir, "update-edges.txt")
	f, err := os.Create(edges)
	if err != nil {
		return "", "", fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintln(f, "# external ids: u v")
	for range 20 {
		u, v := rng.IntN(200), rng.IntN(200)
		if u != v {
			fmt.Fprintf(f, "%d %d\n", synth.NodeID(u), synth.NodeID(v))
		}
	}
	if err := f.Close(); err != nil {
		return "", "", fmt.Errorf("demo: %w", err)
	}
	cfg := synth.Removable()
	// Features in the dump's units, inside the generated columns' range.
	feat := make([]float64, cfg.Features)
	for i := range feat {
		feat[i] = rng.Float64()*2 - 1
	}
	req := map[string][]query.NewNode{"nodes": {{
		ID: 999000001, Features: feat, Sensitive: 1, Label: 0, Split: index.SplitTest,
		Edges: []int64{synth.NodeID(0), synth.NodeID(1), synth.NodeID(2), synth.NodeID(3), synth.NodeID(4)},
	}}}
	nodes = filepath.Join(dir, "update-nodes.json")
	b, err := json.MarshalIndent(req, "", "  ")
	if err != nil {
		return "", "", fmt.Errorf("demo: %w", err)
	}
	if err := os.WriteFile(nodes, b, 0o644); err != nil {
		return "", "", fmt.Errorf("demo: %w", err)
	}
	return edges, nodes, nil
}
