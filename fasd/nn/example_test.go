package nn_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/nn"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// Example trains s_θ and s_φ jointly for a few steps on a padded batch of two
// subgraphs, then saves and reloads s_φ.
func Example() {
	const b, n, d = 2, 4, 3
	rng := rand.New(rand.NewPCG(1, 2))
	sx, _ := nn.NewScoreX[float32](nn.DefaultScoreXConfig(d), rng)
	sa, _ := nn.NewScoreA[float32](nn.DefaultScoreAConfig(d), rng)
	ox := nn.NewAdam(sx.Params(), nn.AdamConfig{LR: 1e-2, WeightDecay: 1e-4})
	oa := nn.NewAdam(sa.Params(), nn.AdamConfig{LR: 1e-2, WeightDecay: 1e-4})

	// Subgraph 0 has 4 nodes, subgraph 1 has 3 (one padded row/column).
	x := tensor.New[float32](b, n, d)
	a := tensor.New[float32](b, n, n)
	mask := []float32{1, 1, 1, 1, 1, 1, 1, 0}
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64()) * mask[i/d]
	}
	for _, e := range [][3]int{{0, 0, 1}, {0, 1, 2}, {0, 2, 3}, {1, 0, 1}, {1, 0, 2}} {
		a.Data[(e[0]*n+e[1])*n+e[2]], a.Data[(e[0]*n+e[2])*n+e[1]] = 1, 1
	}
	tx := make([]float32, b*n*d) // targets T_X, T_A (here: zero)
	ta := make([]float32, b*n*n)

	workers := nn.NewWorkers[float32](2)
	defer workers.Close()
	shard := func(s *nn.Shard[float32]) *autodiff.Var[float32] {
		tp := s.Tape
		xv, av := tp.Input(x.Batch(s.Lo, s.Hi), false), tp.Input(a.Batch(s.Lo, s.Hi), false)
		m := mask[s.Lo*n : s.Hi*n]
		lx := tp.SquaredError(sx.Forward(tp, xv, av, m), tx[s.Lo*n*d:s.Hi*n*d], b)
		la := tp.SquaredError(sa.Forward(tp, xv, av, m), ta[s.Lo*n*n:s.Hi*n*n], b)
		return tp.Add(lx, la)
	}
	var first, last float32
	for step := 0; step < 20; step++ {
		nn.ZeroGrads(sx.Params())
		nn.ZeroGrads(sa.Params())
		loss := workers.Step(b, nil, shard)
		nn.ClipGradNorm(sx.Params(), 1)
		nn.ClipGradNorm(sa.Params(), 1)
		ox.Step()
		oa.Step()
		if step == 0 {
			first = loss
		}
		last = loss
	}
	fmt.Println("loss decreased:", last < first/2)

	var buf bytes.Buffer
	if err := nn.SaveParams(&buf, sa.Params()); err != nil {
		panic(err)
	}
	fresh, _ := nn.NewScoreA[float32](nn.DefaultScoreAConfig(d), rand.New(rand.NewPCG(9, 9)))
	fmt.Println("reload:", nn.LoadParams(&buf, fresh.Params()))
	// Output:
	// loss decreased: true
	// reload: <nil>
}

// ExampleGCNNet_SensitiveGrads computes the cached fairness gradients
// ∇_X L_sen and ∇_A L_sen of docs/method.md §3 with a frozen g_sen.
func ExampleGCNNet_SensitiveGrads() {
	const n, d = 3, 2
	gsen, _ := nn.NewGCNNet[float64](nn.GSenConfig(d), rand.New(rand.NewPCG(1, 1)))
	x := tensor.FromSlice([]float64{0.5, -1, 1, 0, -0.5, 0.5}, 1, n, d)
	a := tensor.FromSlice([]float64{0, 1, 0, 1, 0, 1, 0, 1, 0}, 1, n, n)
	mask := []float64{1, 1, 1}
	s := []float64{1, 0, 1}     // sensitive attribute
	known := []float64{1, 1, 1} // mask × "s is known"
	var gx, ga tensor.Dense[float64]
	tp := autodiff.NewTape[float64]()
	gsen.SensitiveGrads(tp, x, a, mask, s, known, &gx, &ga)
	fmt.Println(gx.Shape, ga.Shape, ga.Data[0] == 0, ga.Data[1] == ga.Data[3])
	// Output: (1×3×2) (1×3×3) true true
}
