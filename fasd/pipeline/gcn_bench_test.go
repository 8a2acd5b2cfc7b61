package pipeline

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/fasd-db/fasd/fasd/nn"
)

// bailSizedGCN is a random graph of the Bail size (18,876 nodes, ≈ 312k
// undirected edges, D = 18) with a 20 % train split, and its sparseGCN with
// hidden width 64.
func bailSizedGCN(b testing.TB) (*sparseGCN, []uint32, []int8) {
	const n, m, d, h = 18876, 312000, 18, 64
	rng := rand.New(rand.NewPCG(1, 2))
	edges := make([][2]uint32, m)
	for i := range edges {
		edges[i] = [2]uint32{uint32(rng.IntN(n)), uint32(rng.IntN(n))}
	}
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	labels := make([]int8, n)
	var train []uint32
	for v := range labels {
		labels[v] = int8(rng.IntN(2))
		if rng.Float64() < 0.2 {
			train = append(train, uint32(v))
		}
	}
	g, err := newSparseGCN(n, d, h, 1, edges, x, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		b.Fatal(err)
	}
	return g, train, labels
}

// BenchmarkSparseGCNEpoch is one epoch of the GCN baseline as trainFullGraph
// runs it (backward of the training forward, Adam step, then forwardBoth:
// the validation forward at the new weights and the next epoch's training
// forward with dropout, in one pass) on a Bail-sized random graph, with
// the validation product over every row (as under --scores; otherwise
// trainFullGraph declares the validation and test rows alone, setEval). It
// reports ns/epoch and the memory traffic of the epoch's model
// (gcnEpochBytes) per second. It runs GOMAXPROCS workers, as fasd train
// does with its default two.
func BenchmarkSparseGCNEpoch(b *testing.B) {
	g, train, labels := bailSizedGCN(b)
	g.workers = runtime.GOMAXPROCS(0)
	g.setTrain(train)
	opt := nn.NewAdam(g.params(), nn.AdamConfig{LR: 1e-3, WeightDecay: 1e-4})
	src := rand.NewPCG(5, 6)
	g.forward(0.3, src)
	epoch := func() {
		nn.ZeroGrads(g.params())
		g.backward(train, labels)
		opt.Step()
		g.forwardBoth(0.3, src)
	}
	epoch() // the workers' scratch is allocated on first use
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		epoch()
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns, "ns/epoch")
	b.ReportMetric(float64(gcnEpochBytes(g))/ns, "GB/s")
	b.ReportMetric(float64(gcnEpochBytes(g))/1e6, "MB/epoch")
}

// BenchmarkStreamTriad measures this machine's memory bandwidth the way
// STREAM's triad does, a[i] = b[i] + s·c[i] over three 64 MiB float32
// arrays, with GOMAXPROCS goroutines on contiguous blocks; GB/s counts
// 12 bytes per element (two reads, one write), as STREAM does.
func BenchmarkStreamTriad(b *testing.B) {
	const n = 16 << 20
	a, x, y := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), float32(n-i)
	}
	p := runtime.GOMAXPROCS(0)
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		for w := 0; w < p; w++ {
			lo, hi := w*n/p, (w+1)*n/p
			wg.Add(1)
			go func() {
				defer wg.Done()
				aa, xx, yy := a[lo:hi], x[lo:hi], y[lo:hi]
				for i := range aa {
					aa[i] = xx[i] + 3*yy[i]
				}
			}()
		}
		wg.Wait()
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(12*n/ns, "GB/s")
}

// gcnEpochBytes is the memory traffic of one epoch of BenchmarkSparseGCNEpoch
// as baseline.go computes it (after setTrain), with every array read or
// written once per pass (no reuse between passes; a worker's block of P1
// or dP1 stays in its cache):
//
//   - backward's dQ = Â·dZ: the CSR of Â's non-zeros in the training
//     columns (4 bytes per row pointer, 8 per non-zero), dZ read and dQ
//     written (n×2 each);
//   - forwardBoth's validation product Â·(H1·W2): the whole CSR, its n×2
//     source and result;
//   - its training product on the training rows alone: their row
//     pointers, non-zeros and the row list, the n×2 source, the results;
//   - the dropout mask, written (one bit per entry of H1);
//   - forwardBoth: read Â·X (n×d) and the mask, write H1 (n×h) and the
//     two n×2 products H1·W2 (training, validation);
//   - backward: read H1 and Â·X (dP1 stays in the block).
//
// Before setTrain (every product on every row and column) an epoch moved
// 24.3 MB on the Bail-sized graph; before forwardBoth, 30.9 MB.
func gcnEpochBytes(g *sparseGCN) int64 {
	n, d, h, nnz := int64(g.n), int64(g.d), int64(g.h), int64(len(g.col))
	const f = 4
	nt, nnzT := int64(len(g.trainRows)), int64(len(g.tCol))
	var nnzRows int64 // non-zeros in the training rows
	for _, u := range g.trainRows {
		nnzRows += int64(g.rowPtr[u+1] - g.rowPtr[u])
	}
	nh, nd, n2, mask := f*n*h, f*n*d, f*n*2, n*h/8
	sparse := (f*(n+1) + 8*nnzT + 2*n2) + // backward
		(f*(n+1) + 8*nnz + 2*n2) + // validation
		(3*f*nt + 8*nnzRows + n2 + 2*f*nt) // training rows
	dense := mask + // dropout mask
		nd + mask + nh + 2*n2 + // forwardBoth
		nh + nd // backward
	return sparse + dense
}

// BenchmarkNewSparseGCN builds the baseline's normalised adjacency and Â·X
// for a Bail-sized random graph (bailSizedGCN's shape) on one and on two
// workers (the rows shared out; the same bits, TestNewSparseGCN_WorkersSameBits).
func BenchmarkNewSparseGCN(b *testing.B) {
	g, _, _ := bailSizedGCN(b)
	edges := make([][2]uint32, 0, len(g.col)/2)
	for u := range g.n {
		for k := g.rowPtr[u]; k < g.rowPtr[u+1]; k++ {
			if v := g.col[k]; uint32(u) < v {
				edges = append(edges, [2]uint32{uint32(u), v})
			}
		}
	}
	x := make([]float32, g.n*g.d)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			for b.Loop() {
				if _, err := newSparseGCN(g.n, g.d, g.h, w, edges, x, rand.New(rand.NewPCG(3, 4))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
