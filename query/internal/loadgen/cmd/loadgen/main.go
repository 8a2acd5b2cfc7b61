// Command loadgen drives a running fasd server on loopback with GET
// requests for node predictions and prints the throughput, latency
// percentiles and its own CPU time per request:
//
//	fasd predict --db DB --all --json > views.jsonl   # ids with a view
//	fasd serve --db DB --addr 127.0.0.1:8080 &
//	go run ./query/internal/loadgen/cmd/loadgen -addr 127.0.0.1:8080 -ids views.jsonl -n 200000
//
// The ids file holds one node per line: a plain external id, or a JSON
// object with an "id" field (the output of fasd predict --all --json).
// Only loopback addresses are accepted; the run is bounded by -n and
// -duration.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fasd-db/fasd/query/internal/loadgen"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "server host:port (loopback only)")
	n := fs.Int("n", 100000, "number of requests")
	conns := fs.Int("c", 32, "keep-alive connections")
	dur := fs.Duration("duration", time.Minute, "time bound of the run")
	pipe := fs.Int("pipeline", 1, "requests in flight per connection")
	idsFile := fs.String("ids", "", "file of node ids (required)")
	pattern := fs.String("path", "/v1/nodes/%d/prediction", "request path, %d is the id")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *idsFile == "" {
		return errors.New("-ids FILE is required")
	}
	ids, err := readIDs(*idsFile)
	if err != nil {
		return err
	}
	paths := make([]string, len(ids))
	for i, id := range ids {
		paths[i] = fmt.Sprintf(*pattern, id)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cpu0 := loadgen.ProcessCPU()
	res, err := loadgen.Run(ctx, loadgen.Config{
		Addr: *addr, Conns: *conns, Requests: *n, Duration: *dur, Pipeline: *pipe,
		Path: func(i int) string { return paths[i%len(paths)] },
	})
	cpu := loadgen.ProcessCPU() - cpu0
	if res != nil {
		codes := make([]int, 0, len(res.Status))
		for c := range res.Status {
			codes = append(codes, c)
		}
		sort.Ints(codes)
		var st []string
		for _, c := range codes {
			st = append(st, fmt.Sprintf("%d×%d", c, res.Status[c]))
		}
		fmt.Fprintf(out, "%d requests in %s: %.0f req/s, p50 %s, p99 %s, status %s\n",
			res.Requests, res.Elapsed.Round(time.Millisecond), res.PerSec, res.P50, res.P99, strings.Join(st, " "))
		if res.Requests > 0 {
			fmt.Fprintf(out, "client CPU %.1f µs/request (%d connections, pipeline %d)\n",
				float64(cpu.Nanoseconds())/1e3/float64(res.Requests), *conns, *pipe)
		}
	}
	return err
}

// readIDs reads one id per line: an integer or a JSON object with "id".
func readIDs(name string) ([]int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" {
			continue
		}
		if t[0] == '{' {
			var v struct {
				ID *int64 `json:"id"`
			}
			if err := json.Unmarshal([]byte(t), &v); err != nil || v.ID == nil {
				return nil, fmt.Errorf("%s:%d: want a JSON object with an id (%v)", name, line, err)
			}
			ids = append(ids, *v.ID)
			continue
		}
		id, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %q is not an id", name, line, t)
		}
		ids = append(ids, id)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s: no ids", name)
	}
	return ids, nil
}
