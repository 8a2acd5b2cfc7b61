package split_test

import (
	"fmt"

	"github.com/fasd-db/fasd/index/split"
)

// ExampleDIG splits 313 labelled nodes with the NBA parameters.
func ExampleDIG() {
	labelled := make([]uint32, 313)
	for i := range labelled {
		labelled[i] = uint32(i)
	}
	s, err := split.DIG(labelled, nil, split.NBA, split.DefaultSeed)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(s.Train), len(s.Val), len(s.Test), s.Train[:5])
	// Output: 62 110 141 [33 272 311 14 266]
}
