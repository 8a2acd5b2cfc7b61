package dump_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fasd-db/fasd/index/dump"
)

// Example reads a node table in two passes and resolves an edge list
// against it.
func Example() {
	const nodes = "user_id,AGE,country,SALARY\n" +
		"1001,20,0,1\n" +
		"1002,30,1,-1\n" +
		"1003,25,1,3\n"
	const edges = "1001\t1002\n\n1003 1.001e3\n"
	spec := dump.Spec{
		IDColumn:  "user_id",
		Sensitive: dump.SensitiveSpec{Column: "country"},
		Label:     dump.LabelSpec{Column: "SALARY"},
		Scale:     true,
	}
	ctx := context.Background()
	tab, err := dump.Analyze(ctx, strings.NewReader(nodes), "nodes.csv", spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("features:", tab.FeatureNames, "groups:", tab.Groups, "labels:", tab.Labels, "unlabelled:", tab.NumUnlabelled)
	rr := tab.NewRowReader(strings.NewReader(nodes))
	for rr.Next() {
		r := rr.Row()
		fmt.Println(r.Index, r.ID, r.Sensitive, r.Label, r.Features)
	}
	if err := rr.Err(); err != nil {
		fmt.Println(err)
	}
	er := dump.NewEdgeReader(strings.NewReader(edges), "edges.txt")
	for er.Next() {
		a, b := er.Edge()
		u, _ := tab.Resolve(a)
		v, _ := tab.Resolve(b)
		fmt.Printf("line %d: rows %d-%d\n", er.Line(), u, v)
	}
	// Output:
	// features: [AGE] groups: [1 2] labels: [0 2] unlabelled: 1
	// 0 1001 0 1 [-1]
	// 1 1002 1 -1 [1]
	// 2 1003 1 1 [0]
	// line 1: rows 0-1
	// line 3: rows 2-0
}

// ExampleError shows how to inspect a bad-input error.
func ExampleError() {
	_, err := dump.Analyze(context.Background(),
		strings.NewReader("user_id,AGE,country,SALARY\n1,abc,0,1\n"), "nba.csv",
		dump.Spec{IDColumn: "user_id", Sensitive: dump.SensitiveSpec{Column: "country"},
			Label: dump.LabelSpec{Column: "SALARY"}})
	fmt.Println(err)
	var e *dump.Error
	if errors.As(err, &e) && errors.Is(err, dump.ErrNotNumber) {
		fmt.Println(e.File, e.Line, e.Column)
	}
	// Output:
	// nba.csv:2: column "AGE": not a number: "abc"
	// nba.csv 2 AGE
}
