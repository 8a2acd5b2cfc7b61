// Package loadgen is a small HTTP/1.1 load generator for measuring the
// query server's throughput on loopback.
//
// It keeps Conns keep-alive TCP connections open and, on each, sends GET
// requests one at a time (or Pipeline at a time) and reads every response
// fully, so the server does the whole work of every request. It speaks
// only what it needs of HTTP/1.1: a request line and a Host header out; a
// status line, headers with a Content-Length, and the body in. That makes
// its own cost per request a small fraction of net/http's client (no
// per-request goroutine hand-offs, header maps or URL parsing), so more of
// the machine is left to the server under test.
//
// # Invariants
//
//   - Only loopback addresses are accepted (ErrNotLoopback): this is a
//     measuring tool, not a way to load other machines.
//   - Every run is bounded by a request count and a duration, both
//     required (ErrConfig when absent or over the caps).
//   - Results count only complete responses; a response without a
//     Content-Length (chunked or close-delimited) is an error, since the
//     query server always sends one for its small JSON answers.
//
// # Caveats
//
// Latencies are measured from the write of a request (or of a pipelined
// batch) to the end of its response, including client-side scheduling. A
// load generator in the same process as the server shares its CPUs and
// GOMAXPROCS; for a clean split run the server in another process (the
// query package's HTTP benchmark does) and read ProcessCPU on both sides.
package loadgen
