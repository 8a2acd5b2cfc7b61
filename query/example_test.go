package query_test

import (
	"context"
	"fmt"
	"log"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query"
	"github.com/fasd-db/fasd/query/querytest"
	"github.com/fasd-db/fasd/storage"
	_ "github.com/fasd-db/fasd/storage/pebble" // links the default engine
)

// Open the engine over a graph, materialize the views and predict a node.
// The model here is querytest's deterministic stand-in; on a store that
// fasd train filled, pass &query.Options{LoadModel: runs.LoadLatest} (and
// the store's directory) instead.
func ExampleOpen() {
	ctx := context.Background()
	s, err := storage.Open("", &storage.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	// A path of four labelled nodes, external ids 10 to 13.
	g, err := index.Create(s, index.Schema{Features: []string{"x"}})
	if err != nil {
		log.Fatal(err)
	}
	_, err = g.Update(ctx, func(tx *index.Tx) error {
		for i := range 4 {
			n := index.Node{ExternalID: int64(10 + i), Sensitive: int8(i % 2), Label: int8(i / 2),
				Split: index.Splits[i%3], Features: []float32{float32(i)}}
			if _, err := tx.AddNode(n); err != nil {
				return err
			}
		}
		for u := range uint32(3) {
			if _, err := tx.AddEdge(u, u+1); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	e, err := query.Open("", &query.Options{Store: s, Model: querytest.NewModel([]string{"x"}, 1, true)})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	rep, err := e.Materialize(ctx)
	if err != nil {
		log.Fatal(err)
	}
	p, err := e.PredictExternal(ctx, 11)
	if err != nil {
		log.Fatal(err)
	}
	_, hasBaseline := p.Variants["no_diffusion"]
	fmt.Printf("%d subgraphs materialized; node %d: source %s, averaged over %d subgraphs, baseline %v\n",
		rep.Subgraphs, p.ID, p.Source, p.Subgraphs, hasBaseline)
	// Output: 4 subgraphs materialized; node 11: source view, averaged over 4 subgraphs, baseline true
}
