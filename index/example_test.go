package index_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/storage"
	_ "github.com/fasd-db/fasd/storage/pebble" // links the default engine
)

// Build a tiny graph, update it atomically and read it through a View.
func Example() {
	s, err := storage.Open("", &storage.Options{InMemory: true})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	g, err := index.Create(s, index.Schema{Features: []string{"age"}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	ch, err := g.Update(ctx, func(tx *index.Tx) error {
		for i := range 4 {
			if _, err := tx.AddNode(index.Node{ExternalID: int64(100 + i), Sensitive: int8(i % 2), Label: index.Unlabelled, Features: []float32{float32(i)}}); err != nil {
				return err
			}
		}
		for _, e := range [][2]uint32{{0, 1}, {0, 2}, {0, 3}, {2, 3}} {
			if _, err := tx.AddEdge(e[0], e[1]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("version", ch.Version, "changed adjacency", ch.Adjacency.ToArray())

	v, err := g.View()
	if err != nil {
		panic(err)
	}
	defer v.Close()
	nb, _ := v.Neighbors(0, nil)
	id, _ := v.InternalID(103)
	sample, _ := v.SampleNeighbors(0, 2, rand.New(rand.NewPCG(1, 2)), nil)
	ball, _ := v.Ball(1, 2)
	fmt.Println("neighbours of 0:", nb, "internal id of 103:", id)
	fmt.Println("sample size:", len(sample), "2-hop ball of 1:", ball.ToArray())
	// Output:
	// version 2 changed adjacency [0 1 2 3]
	// neighbours of 0: [1 2 3] internal id of 103: 3
	// sample size: 2 2-hop ball of 1: [0 1 2 3]
}
