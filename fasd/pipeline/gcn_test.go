package pipeline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/nn"
)

// gcnCase is a small random graph for the GCN baseline's tests.
type gcnCase struct {
	name    string
	n, d, h int
	m       int // random edges (self-loops and duplicates included); 0: Â = I
	seed    uint64
	dropout float64
}

func (c gcnCase) build(t *testing.T) (edges [][2]uint32, x []float32, train []uint32, labels []int8) {
	t.Helper()
	rng := rand.New(rand.NewPCG(c.seed, 1))
	for i := 0; i < c.m; i++ {
		edges = append(edges, [2]uint32{uint32(rng.IntN(c.n)), uint32(rng.IntN(c.n))})
	}
	x = make([]float32, c.n*c.d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	labels = make([]int8, c.n)
	for v := range labels {
		labels[v] = int8(rng.IntN(2))
		if rng.IntN(3) == 0 {
			train = append(train, uint32(v))
		}
	}
	return edges, x, train, labels
}

var gcnCases = []gcnCase{
	{name: "tiny", n: 7, d: 3, h: 4, m: 9, seed: 1},
	{name: "dropout", n: 60, d: 5, h: 8, m: 200, seed: 2, dropout: 0.3},
	{name: "no edges (MLP)", n: 40, d: 4, h: 6, seed: 3, dropout: 0.5},
	{name: "several blocks", n: 1300, d: 18, h: 16, m: 9000, seed: 4, dropout: 0.3},
	// the default width: the masks' words filled by whole rows
	{name: "hidden 64", n: 1100, d: 18, h: 64, m: 8000, seed: 5, dropout: 0.3},
}

func closeTo(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*max(1, math.Abs(a), math.Abs(b))
}

// TestSparseGCNMatchesReference compares the baseline's forward logits,
// loss and gradients with the straightforward implementation (refGCN, which
// multiplies Â by X·W1 every epoch): the same initial weights and dropout
// masks, results within 1e-5.
func TestSparseGCNMatchesReference(t *testing.T) {
	for _, c := range gcnCases {
		t.Run(c.name, func(t *testing.T) {
			edges, x, train, labels := c.build(t)
			ref, err := newRefGCN(c.n, c.d, c.h, edges, x, rand.New(rand.NewPCG(c.seed, 9)))
			if err != nil {
				t.Fatal(err)
			}
			g, err := newSparseGCN(c.n, c.d, c.h, 1, edges, x, rand.New(rand.NewPCG(c.seed, 9)))
			if err != nil {
				t.Fatal(err)
			}
			g.workers = 3
			for step := 0; step < 3; step++ {
				nn.ZeroGrads(ref.params())
				nn.ZeroGrads(g.params())
				ref.forward(c.dropout, rand.New(rand.NewPCG(uint64(step), 5)))
				g.forward(c.dropout, rand.NewPCG(uint64(step), 5))
				for i := range g.z {
					if !closeTo(float64(g.z[i]), float64(ref.z[i]), 1e-5) {
						t.Fatalf("step %d: z[%d] = %g, reference %g", step, i, g.z[i], ref.z[i])
					}
				}
				lr, lg := ref.backward(train, labels), g.backward(train, labels)
				if !closeTo(lr, lg, 1e-5) {
					t.Fatalf("step %d: loss %g, reference %g", step, lg, lr)
				}
				rp := ref.params()
				for k, p := range g.params() {
					for i := range p.Grad {
						if !closeTo(float64(p.Grad[i]), float64(rp[k].Grad[i]), 1e-5) {
							t.Fatalf("step %d: %s grad[%d] = %g, reference %g", step, p.Name, i, p.Grad[i], rp[k].Grad[i])
						}
					}
					// Both take the same step, so that the next one compares
					// the same weights.
					for i := range p.Value.Data {
						p.Value.Data[i] -= 0.5 * p.Grad[i]
						rp[k].Value.Data[i] = p.Value.Data[i]
					}
				}
			}
		})
	}
}

// TestSparseGCNWorkersBitIdentical checks that the worker count changes no
// bit of the logits, the loss or the gradients.
func TestSparseGCNWorkersBitIdentical(t *testing.T) {
	c := gcnCases[3]
	edges, x, train, labels := c.build(t)
	run := func(workers int) ([]float32, float64, [][]float32) {
		g, err := newSparseGCN(c.n, c.d, c.h, 1, edges, x, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		g.workers = workers
		g.forward(c.dropout, rand.NewPCG(3, 4))
		loss := g.backward(train, labels)
		var grads [][]float32
		for _, p := range g.params() {
			grads = append(grads, append([]float32(nil), p.Grad...))
		}
		g.forward(0, nil)
		return append([]float32(nil), g.z...), loss, grads
	}
	z1, l1, g1 := run(1)
	for _, w := range []int{2, 5} {
		z, l, gr := run(w)
		if l != l1 {
			t.Fatalf("%d workers: loss %v, 1 worker %v", w, l, l1)
		}
		for i := range z {
			if math.Float32bits(z[i]) != math.Float32bits(z1[i]) {
				t.Fatalf("%d workers: z[%d] = %v, 1 worker %v", w, i, z[i], z1[i])
			}
		}
		for k := range gr {
			for i := range gr[k] {
				if math.Float32bits(gr[k][i]) != math.Float32bits(g1[k][i]) {
					t.Fatalf("%d workers: grad %d[%d] = %v, 1 worker %v", w, k, i, gr[k][i], g1[k][i])
				}
			}
		}
	}
}

// TestSparseGCNGradientFD checks backward against central finite
// differences of the loss (no dropout), on every parameter entry whose
// ±eps step switches no ReLU.
func TestSparseGCNGradientFD(t *testing.T) {
	for _, c := range gcnCases[:3] {
		t.Run(c.name, func(t *testing.T) {
			edges, x, train, labels := c.build(t)
			g, err := newSparseGCN(c.n, c.d, c.h, 1, edges, x, rand.New(rand.NewPCG(c.seed, 9)))
			if err != nil {
				t.Fatal(err)
			}
			// Non-zero biases, so that the ReLU sees both signs off zero.
			for i := range g.b1.Value.Data {
				g.b1.Value.Data[i] = 0.1 * float32(i%3-1)
			}
			var kink bool // the last loss() saw another ReLU pattern
			var pattern []bool
			noDrop := rand.NewPCG(0, 0) // p = 0 draws nothing
			loss := func() float64 {
				g.forward(0, noDrop) // keeps H1 = ReLU(P1)
				for i, v := range g.h1 {
					if pattern != nil && (v > 0) != pattern[i] {
						kink = true
					}
				}
				var l float64
				for _, u := range train {
					a, b := float64(g.z[2*u]), float64(g.z[2*u+1])
					m := max(a, b)
					lse := m + math.Log(math.Exp(a-m)+math.Exp(b-m))
					if labels[u] == 1 {
						l += lse - b
					} else {
						l += lse - a
					}
				}
				return l / float64(len(train))
			}
			nn.ZeroGrads(g.params())
			g.forward(0, noDrop)
			g.backward(train, labels)
			for _, v := range g.h1 {
				pattern = append(pattern, v > 0)
			}
			const eps = 1e-3
			checked := 0
			for _, p := range g.params() {
				grad := append([]float32(nil), p.Grad...)
				for i := range p.Value.Data {
					kink = false
					fd := fdEntry(p, i, eps, loss)
					if kink {
						continue // a ReLU switched within ±eps: no derivative to compare
					}
					checked++
					if math.Abs(fd-float64(grad[i])) > 2e-3+2e-2*math.Abs(fd) {
						t.Errorf("%s[%d]: backward %g, finite difference %g", p.Name, i, grad[i], fd)
					}
				}
			}
			if total := len(g.w1.Value.Data) + len(g.b1.Value.Data) + len(g.w2.Value.Data) + len(g.b2.Value.Data); checked < total/2 {
				t.Fatalf("only %d of %d entries checked (ReLU kinks)", checked, total)
			}
		})
	}
}

// fdEntry is the central difference of loss in entry i of p.
func fdEntry(p *autodiff.Param[float32], i int, eps float64, loss func() float64) float64 {
	v := p.Value.Data[i]
	p.Value.Data[i] = v + float32(eps)
	up := loss()
	p.Value.Data[i] = v - float32(eps)
	down := loss()
	p.Value.Data[i] = v
	return (up - down) / (2 * eps)
}

// TestDropMaskSequential checks the parallel dropout mask of the GCN
// baseline against the sequential definition — entry (u, j) of H1 kept
// when the (u·h + j)-th rand.New(src).Float64() is not below p — for one
// and several workers and a width that spans two mask words, and that src
// is left n·h draws on.
func TestDropMaskSequential(t *testing.T) {
	// n: one row; blocks of an even and of an odd number of rows, each
	// drawn in several runs of whole rows
	for _, n := range []int{1, 3, 1300, 1301} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testDropMaskSequential(t, n) })
	}
}

func testDropMaskSequential(t *testing.T, n int) {
	const h, p = 70, 0.3
	edges := [][2]uint32{{0, 0}}
	x := make([]float32, n)
	for _, workers := range []int{1, 2, 3} {
		g, err := newSparseGCN(n, 1, h, 1, edges, x, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		g.workers = workers
		src, ref := rand.NewPCG(7, 8), rand.New(rand.NewPCG(7, 8))
		for round := 0; round < 2; round++ {
			g.dropMask(p, src)
			wpr := (h + 63) / 64
			for u := 0; u < n; u++ {
				for j := 0; j < h; j++ {
					want := !(ref.Float64() < p)
					if got := g.keep[u*wpr+j/64]>>(j%64)&1 == 1; got != want {
						t.Fatalf("workers %d round %d: entry (%d, %d) kept %v, want %v", workers, round, u, j, got, want)
					}
				}
			}
		}
		if got, want := src.Uint64(), ref.Uint64(); got != want {
			t.Errorf("workers %d: src continues with %#x, want %#x", workers, got, want)
		}
	}
}

// TestProp2Order checks prop2 (two rows side by side) and prop2x2 (two
// sources in one pass) against the plain row loop, bit for bit: each row
// summed in CSR order from the bias (or +0), for graphs whose blocks have
// an even and an odd number of rows and rows of unequal lengths.
func TestProp2Order(t *testing.T) {
	for _, c := range []struct{ n, m int }{{1, 0}, {2, 1}, {7, 9}, {1301, 9000}} {
		t.Run(fmt.Sprint(c.n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(c.n), 3))
			var edges [][2]uint32
			for i := 0; i < c.m; i++ {
				edges = append(edges, [2]uint32{uint32(rng.IntN(c.n)), uint32(rng.IntN(c.n))})
			}
			g, err := newSparseGCN(c.n, 1, 4, 1, edges, make([]float32, c.n), rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			g.workers = 2
			srcA, srcB := make([]float32, 2*c.n), make([]float32, 2*c.n)
			for i := range srcA {
				srcA[i], srcB[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			}
			plain := func(src, bias []float32) []float32 {
				out := make([]float32, 2*c.n)
				for u := 0; u < c.n; u++ {
					var s0, s1 float32
					if bias != nil {
						s0, s1 = bias[0], bias[1]
					}
					for k := g.rowPtr[u]; k < g.rowPtr[u+1]; k++ {
						s0 += g.val[k] * src[2*g.col[k]]
						s1 += g.val[k] * src[2*g.col[k]+1]
					}
					out[2*u], out[2*u+1] = s0, s1
				}
				return out
			}
			same := func(what string, got, want []float32) {
				t.Helper()
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
					}
				}
			}
			for _, bias := range [][]float32{nil, {0.25, -1.5}} {
				got, gotB := make([]float32, 2*c.n), make([]float32, 2*c.n)
				g.prop2(srcA, bias, got)
				same("prop2", got, plain(srcA, bias))
				g.prop2x2(srcA, srcB, bias, got, gotB)
				same("prop2x2 A", got, plain(srcA, bias))
				same("prop2x2 B", gotB, plain(srcB, bias))
			}
		})
	}
}

// TestForwardBothSequence checks the training loop's fused pass: training
// forward, backward and step, then forwardBoth (the new weights' validation
// logits and the next training forward in one) gives the validation
// logits, losses and gradients of the plain sequence — training forward,
// backward, step, validation forward — bit for bit, epoch after epoch.
//
// With setTrain on the second network (the training rows declared: Z on
// them alone, dQ from their columns of Â) the losses, gradients and
// validation logits are still the plain sequence's bit for bit; with
// setEval (evaluation rows declared) the validation logits of those rows
// are, and so are a plain evaluation forward's.
func TestForwardBothSequence(t *testing.T) {
	for _, c := range gcnCases {
		for _, declared := range []bool{false, true} {
			for _, evalRows := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/setTrain=%v/setEval=%v", c.name, declared, evalRows), func(t *testing.T) {
					testForwardBothSequence(t, c, declared, evalRows)
				})
			}
		}
	}
}

func testForwardBothSequence(t *testing.T, c gcnCase, declared, evalRows bool) {
	{
		{
			edges, x, train, labels := c.build(t)
			mk := func() (*sparseGCN, *nn.Adam[float32]) {
				g, err := newSparseGCN(c.n, c.d, c.h, 1, edges, x, rand.New(rand.NewPCG(c.seed, 9)))
				if err != nil {
					t.Fatal(err)
				}
				g.workers = 2
				return g, nn.NewAdam(g.params(), nn.AdamConfig{LR: 0.01, WeightDecay: 5e-4})
			}
			ga, oa := mk()
			gb, ob := mk()
			if declared {
				gb.setTrain(train)
			}
			rows := make([]bool, c.n) // the rows compared
			for u := range rows {
				rows[u] = !evalRows || u%3 == 1
			}
			if evalRows {
				var list []uint32
				for u := c.n - 1; u >= 0; u-- { // in reverse, one repeated
					if rows[u] {
						list = append(list, uint32(u), uint32(u))
					}
				}
				gb.setEval(list)
			}
			sa, sb := rand.NewPCG(c.seed, 5), rand.NewPCG(c.seed, 5)
			gb.forward(c.dropout, sb)
			for ep := 0; ep < 4; ep++ {
				nn.ZeroGrads(ga.params())
				ga.forward(c.dropout, sa)
				la := ga.backward(train, labels)
				gradA := [][]float32{}
				for _, p := range ga.params() {
					gradA = append(gradA, append([]float32(nil), p.Grad...))
				}
				oa.Step()
				ga.forward(0, nil)
				nn.ZeroGrads(gb.params())
				lb := gb.backward(train, labels)
				for k, p := range gb.params() {
					for i, v := range p.Grad {
						if math.Float32bits(v) != math.Float32bits(gradA[k][i]) {
							t.Fatalf("epoch %d: %s grad[%d] = %v, plain %v", ep, p.Name, i, v, gradA[k][i])
						}
					}
				}
				ob.Step()
				gb.forwardBoth(c.dropout, sb)
				if la != lb {
					t.Fatalf("epoch %d: loss %v, plain %v", ep, lb, la)
				}
				for i, v := range ga.z {
					if rows[i/2] && math.Float32bits(gb.zv[i]) != math.Float32bits(v) {
						t.Fatalf("epoch %d: validation z[%d] = %v, plain %v", ep, i, gb.zv[i], v)
					}
				}
			}
			gb.forward(0, nil)
			for i, v := range ga.z {
				if rows[i/2] && math.Float32bits(gb.z[i]) != math.Float32bits(v) {
					t.Fatalf("evaluation forward: z[%d] = %v, plain %v", i, gb.z[i], v)
				}
			}
		}
	}
}

// TestNewSparseGCN_WorkersSameBits: building the normalised adjacency and
// Â·X on several workers gives the one-worker build bit for bit (rows are
// independent), as do the initial weights.
func TestNewSparseGCN_WorkersSameBits(t *testing.T) {
	for _, c := range gcnCases {
		t.Run(c.name, func(t *testing.T) {
			edges, x, _, _ := c.build(t)
			one, err := newSparseGCN(c.n, c.d, c.h, 1, edges, x, rand.New(rand.NewPCG(c.seed, 9)))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []int{2, 3} {
				g, err := newSparseGCN(c.n, c.d, c.h, w, edges, x, rand.New(rand.NewPCG(c.seed, 9)))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(g.rowPtr, one.rowPtr) || !slices.Equal(g.col, one.col) {
					t.Fatalf("%d workers: the adjacency's structure differs", w)
				}
				for name, p := range map[string][2][]float32{"Â": {g.val, one.val}, "Â·X": {g.ax, one.ax},
					"w1": {g.w1.Value.Data, one.w1.Value.Data}, "w2": {g.w2.Value.Data, one.w2.Value.Data}} {
					for i := range p[1] {
						if math.Float32bits(p[0][i]) != math.Float32bits(p[1][i]) {
							t.Fatalf("%d workers: %s[%d] = %g, one worker %g", w, name, i, p[0][i], p[1][i])
						}
					}
				}
			}
		})
	}
}
