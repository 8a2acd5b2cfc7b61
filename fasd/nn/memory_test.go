package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd/tensor"
)

// sameParams fails unless a and b hold bit for bit the same values.
func sameParams[T tensor.Float](t *testing.T, what string, a, b []*Param[T]) {
	t.Helper()
	for i := range a {
		for j, v := range a[i].Value.Data {
			if w := b[i].Value.Data[j]; v != w {
				t.Fatalf("%s: %s[%d] = %v, want %v", what, a[i].Name, j, w, v)
			}
		}
	}
}

// ensure that recycling intermediate gradients through the tapes' gradient
// pool changes nothing: training steps of s_θ + s_φ on tapes that keep
// every gradient (the former arena layout) and on pooled tapes give bit for
// bit the same losses and parameters, also across Workers.Release, and the
// pooled tapes hold less memory.
func TestWorkers_GradPoolBitIdentical(t *testing.T) {
	for _, workers := range []int{1, 2} {
		kept := newScoreTrainer[float32](t, 7, 9, 6, workers, 5)
		pooled := newScoreTrainer[float32](t, 7, 9, 6, workers, 5)
		released := newScoreTrainer[float32](t, 7, 9, 6, workers, 5)
		for i := 0; i < workers; i++ {
			kept.w.Tape(i).KeepGrads(true)
		}
		for step := 0; step < 4; step++ {
			lk, lp, lr := kept.step(), pooled.step(), released.step()
			if lk != lp || lk != lr {
				t.Fatalf("%d workers, step %d: loss kept %v, pooled %v, released %v", workers, step, lk, lp, lr)
			}
			released.w.Release()
			if n := released.w.ArenaBytes(); n != 0 {
				t.Fatalf("%d workers: %d bytes left after Release", workers, n)
			}
		}
		sameParams(t, "pooled", append(kept.sx.Params(), kept.sa.Params()...), append(pooled.sx.Params(), pooled.sa.Params()...))
		sameParams(t, "released", append(kept.sx.Params(), kept.sa.Params()...), append(released.sx.Params(), released.sa.Params()...))
		if k, p := kept.w.ArenaBytes(), pooled.w.ArenaBytes(); p >= k {
			t.Fatalf("%d workers: pooled tapes hold %d bytes, kept %d", workers, p, k)
		}
	}
}

// ensure that the gradients of g_sen with respect to its inputs (frozen
// parameters, the path of the fairness gradients) and a dropout training
// step of a GCNNet are bit for bit the same with pooled and kept gradients,
// on reused tapes whose batches change shape.
func TestGCNNet_GradPoolBitIdentical(t *testing.T) {
	const d = 5
	net, err := NewGCNNet[float32](GCNNetConfig{In: d, GCN: []int{8, 6}, FC: []int{4}, Out: 1, Dropout: 0.3}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	kept, pooled := NewWorkers[float32](1), NewWorkers[float32](1)
	defer kept.Close()
	defer pooled.Close()
	kept.Tape(0).KeepGrads(true)
	rng := rand.New(rand.NewPCG(3, 4))
	for step, n := range []int{6, 9, 4, 9} {
		sizes := []int{n, n - 1, n - 2}
		g := randBatch[float32](rng, n, d, sizes, 0.2)
		s := make([]float32, len(g.Mask))
		for i := range s {
			s[i] = float32(rng.IntN(2))
		}
		var gx, ga [2]tensor.Dense[float32]
		lk := net.SensitiveGrads(kept.Tape(0), g.X, g.A, g.Mask, s, g.Mask, &gx[0], &ga[0])
		lp := net.SensitiveGrads(pooled.Tape(0), g.X, g.A, g.Mask, s, g.Mask, &gx[1], &ga[1])
		if lk != lp {
			t.Fatalf("step %d: L_sen %v vs %v", step, lk, lp)
		}
		for i, v := range gx[0].Data {
			if gx[1].Data[i] != v {
				t.Fatalf("step %d: ∇X[%d] pooled %v, kept %v", step, i, gx[1].Data[i], v)
			}
		}
		for i, v := range ga[0].Data {
			if ga[1].Data[i] != v {
				t.Fatalf("step %d: ∇A[%d] pooled %v, kept %v", step, i, ga[1].Data[i], v)
			}
		}
		var grads [2][][]float32
		for k, w := range []*Workers[float32]{kept, pooled} {
			ZeroGrads(net.Params())
			w.Step(len(sizes), rand.New(rand.NewPCG(uint64(step), 9)), func(sh *Shard[float32]) *Var[float32] {
				tp := sh.Tape
				x, a := tp.Input(g.X, false), tp.Input(g.A, false)
				z := net.Forward(tp, x, a, g.Mask, sh.Drop)
				return tp.BCEWithLogits(z, s, g.Mask, 1)
			})
			for _, p := range net.Params() {
				grads[k] = append(grads[k], append([]float32(nil), p.Grad...))
			}
		}
		for i := range grads[0] {
			for j, v := range grads[0][i] {
				if grads[1][i][j] != v {
					t.Fatalf("step %d: %s grad[%d] pooled %v, kept %v", step, net.Params()[i].Name, j, grads[1][i][j], v)
				}
			}
		}
	}
}

// BenchmarkScoreStepGradPool compares, in one run, a training step of s_θ +
// s_φ (the NBA and Pokec shapes, 2 workers) on tapes with pooled
// intermediate gradients (the default) and on tapes that keep one gradient
// buffer per recorded value (the layout before the pool): time per subgraph
// and the memory the tapes hold (tape-MiB).
func BenchmarkScoreStepGradPool(b *testing.B) {
	for _, sh := range benchShapes {
		for _, keep := range []bool{false, true} {
			name := sh.name + "/grads=pooled"
			if keep {
				name = sh.name + "/grads=kept"
			}
			scoreStepGradPool(b, name, sh.b, sh.n, sh.d, keep)
		}
	}
}

func scoreStepGradPool(b *testing.B, name string, bs, n, d int, keep bool) {
	b.Run(name, func(b *testing.B) {
		s := newScoreTrainer[float32](b, bs, n, d, 2, 1)
		for i := 0; i < s.w.N(); i++ {
			s.w.Tape(i).KeepGrads(keep)
		}
		// Two warm-up steps: the gradient pool settles in the second.
		s.gradients()
		s.gradients()
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := processCPU()
		for i := 0; i < b.N; i++ {
			s.gradients()
		}
		if cpu := processCPU() - cpu0; cpu > 0 {
			b.ReportMetric(cpu.Seconds()/float64(b.N*bs)*1e3, "cpu-ms/subgraph")
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N*bs)*1e3, "ms/subgraph")
		b.ReportMetric(float64(s.w.ArenaBytes())/(1<<20), "tape-MiB")
	})
}

// ensure that the tapes stay bounded when batches change shape (a shorter
// last batch, another padded N): after both shapes were seen, alternating
// them allocates nothing and the tapes do not grow.
func TestWorkers_AlternatingShapesBounded(t *testing.T) {
	big := newScoreTrainer[float32](t, 6, 9, 11, 2, 1)
	small := newScoreTrainer[float32](t, 4, 6, 11, 2, 2)
	small.sx, small.sa, small.w, small.ox, small.oa = big.sx, big.sa, big.w, big.ox, big.oa
	for i := 0; i < 3; i++ {
		big.step()
		small.step()
	}
	held := big.w.ArenaBytes()
	if allocs := testing.AllocsPerRun(5, func() { big.step(); small.step() }); allocs != 0 {
		t.Fatalf("alternating shapes allocated %v times per pair of steps", allocs)
	}
	if n := big.w.ArenaBytes(); n != held {
		t.Fatalf("tapes grew from %d to %d bytes", held, n)
	}
}
