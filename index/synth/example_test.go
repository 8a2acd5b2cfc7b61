package synth_test

import (
	"context"
	"fmt"
	"os"

	"github.com/fasd-db/fasd/index/synth"
)

// ExampleWrite generates a small biased graph into a directory; load it with
// the dump preset "synth".
func ExampleWrite() {
	dir, err := os.MkdirTemp("", "synth")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	cfg := synth.Small()
	cfg.Nodes = 300
	_, st, err := synth.Write(context.Background(), dir, cfg, &synth.Options{Gzip: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(synth.FileNames(true))
	fmt.Println("nodes", st.Nodes, "features", st.Features, "edges", st.Edges, "lines", st.EdgeLines)
	fmt.Println("groups", st.Groups, "labels", st.Labels, "unlabelled", st.Unlabelled)
	fmt.Printf("homophily %.2f\n", st.Homophily())
	// Output:
	// {synth.csv.gz synth_relationship.txt.gz}
	// nodes 300 features 32 edges 1505 lines 1659
	// groups [208 92] labels [97 147] unlabelled 56
	// homophily 0.85
}
