package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fasd-db/fasd/fasd/tensor"
)

// scoreTrainer is one joint training step of s_θ and s_φ (docs/method.md §5) on a
// padded batch with fixed targets, the way the pipeline runs it.
type scoreTrainer[T tensor.Float] struct {
	sx     *ScoreX[T]
	sa     *ScoreA[T]
	ox, oa *Adam[T]
	w      *Workers[T]
	g      graphBatch[T]
	tx, ta []T
	b, n   int
	d      int
	fn     ShardFunc[T] // made once: a fresh closure per step would allocate
}

func newScoreTrainer[T tensor.Float](tb testing.TB, b, n, d, workers int, seed uint64) *scoreTrainer[T] {
	rng := rand.New(rand.NewPCG(seed, 1))
	sizes := make([]int, b)
	for i := range sizes {
		sizes[i] = n - i%3 // some padding, like real batches
	}
	s := &scoreTrainer[T]{g: randBatch[T](rng, n, d, sizes, 0.3), b: b, n: n, d: d, w: NewWorkers[T](workers)}
	var err error
	if s.sx, err = NewScoreX[T](DefaultScoreXConfig(d), rng); err != nil {
		tb.Fatal(err)
	}
	if s.sa, err = NewScoreA[T](DefaultScoreAConfig(d), rng); err != nil {
		tb.Fatal(err)
	}
	s.ox = NewAdam(s.sx.Params(), AdamConfig{LR: 1e-2, WeightDecay: 1e-4})
	s.oa = NewAdam(s.sa.Params(), AdamConfig{LR: 1e-2, WeightDecay: 1e-4})
	s.tx = make([]T, b*n*d)
	s.ta = make([]T, b*n*n)
	for i := range s.tx {
		s.tx[i] = T(rng.NormFloat64()) * s.g.Mask[i/d]
	}
	for bi := 0; bi < b; bi++ {
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				v := T(rng.NormFloat64()) * s.g.Mask[bi*n+i] * s.g.Mask[bi*n+j]
				s.ta[(bi*n+i)*n+j], s.ta[(bi*n+j)*n+i] = v, v
			}
		}
	}
	s.fn = s.shard
	tb.Cleanup(func() { s.w.Close() })
	return s
}

func (s *scoreTrainer[T]) shard(sh *Shard[T]) *Var[T] {
	tp := sh.Tape
	n, d := s.n, s.d
	x := tp.Input(s.g.X.Batch(sh.Lo, sh.Hi), false)
	a := tp.Input(s.g.A.Batch(sh.Lo, sh.Hi), false)
	mask := s.g.Mask[sh.Lo*n : sh.Hi*n]
	lx := tp.SquaredError(s.sx.Forward(tp, x, a, mask), s.tx[sh.Lo*n*d:sh.Hi*n*d], T(s.b))
	la := tp.SquaredError(s.sa.Forward(tp, x, a, mask), s.ta[sh.Lo*n*n:sh.Hi*n*n], T(s.b))
	return tp.Add(lx, la)
}

// gradients runs forward+backward only and leaves the gradients in Params.
func (s *scoreTrainer[T]) gradients() T {
	ZeroGrads(s.sx.Params())
	ZeroGrads(s.sa.Params())
	return s.w.Step(s.b, nil, s.fn)
}

// step is a full optimiser step: gradients, clipping per model, Adam.
func (s *scoreTrainer[T]) step() T {
	loss := s.gradients()
	ClipGradNorm(s.sx.Params(), 1)
	ClipGradNorm(s.sa.Params(), 1)
	s.ox.Step()
	s.oa.Step()
	return loss
}

func (s *scoreTrainer[T]) flops() int64 {
	var f int64
	for i := 0; i < s.w.N(); i++ {
		f += s.w.Tape(i).Flops()
	}
	return f
}

// ensure that a steady-state training step of s_θ + s_φ (2 workers, padded
// batch, Adam, clipping) allocates nothing.
func TestWorkers_StepNoAlloc(t *testing.T) {
	s := newScoreTrainer[float32](t, 6, 9, 11, 2, 1)
	s.step()
	s.step()
	if allocs := testing.AllocsPerRun(3, func() { s.step() }); allocs != 0 {
		t.Fatalf("training step allocated %v times", allocs)
	}
}

// ensure that splitting a batch across workers gives the gradient of the
// whole batch (float64, up to summation order) and that a fixed worker count
// is bitwise deterministic (float32) whatever the scheduling.
func TestWorkers_DeterministicEquivalent(t *testing.T) {
	one := newScoreTrainer[float64](t, 5, 7, 6, 1, 3)
	two := newScoreTrainer[float64](t, 5, 7, 6, 2, 3)
	three := newScoreTrainer[float64](t, 5, 7, 6, 3, 3)
	l1, l2, l3 := one.gradients(), two.gradients(), three.gradients()
	if math.Abs(l1-l2) > 1e-12*math.Abs(l1) || math.Abs(l1-l3) > 1e-12*math.Abs(l1) {
		t.Fatalf("losses differ: %v %v %v", l1, l2, l3)
	}
	p1 := append(one.sx.Params(), one.sa.Params()...)
	for k, other := range []*scoreTrainer[float64]{two, three} {
		p2 := append(other.sx.Params(), other.sa.Params()...)
		for i, p := range p1 {
			scale := math.Max(GradNorm([]*Param[float64]{p}), 1e-3)
			for j, g := range p.Grad {
				// Summation order only: 1e-12 relative to the parameter's gradient norm.
				if math.Abs(g-p2[i].Grad[j]) > 1e-12*scale {
					t.Fatalf("%d workers: %s grad[%d] = %v, 1 worker %v", k+2, p.Name, j, p2[i].Grad[j], g)
				}
			}
		}
	}
	a := newScoreTrainer[float32](t, 7, 8, 5, 2, 4)
	b := newScoreTrainer[float32](t, 7, 8, 5, 2, 4)
	for i := 0; i < 3; i++ {
		if la, lb := a.step(), b.step(); la != lb {
			t.Fatalf("step %d: loss %v vs %v", i, la, lb)
		}
	}
	pa, pb := a.sa.Params(), b.sa.Params()
	for i := range pa {
		for j, v := range pa[i].Value.Data {
			if v != pb[i].Value.Data[j] {
				t.Fatalf("%s[%d] differs after 3 steps: %v vs %v", pa[i].Name, j, v, pb[i].Value.Data[j])
			}
		}
	}
}

// Benchmark shapes of docs/method.md: NBA (N ≤ 21, D = 95) and Pokec (N ≤ 31,
// D = 270), batches of 128 subgraphs.
var benchShapes = []struct {
	name    string
	b, n, d int
}{
	{"NBA_B128_N21_D95", 128, 21, 95},
	{"Pokec_B128_N31_D270", 128, 31, 270},
}

// benchKernels are the float32 GEMM kernels the benchmarks compare in one
// run: the default (the AVX2+FMA kernel where available) and gonum's blas32.
var benchKernels = []string{"asm", "gonum"}

// useBenchKernel selects a kernel for one sub-benchmark and restores the
// previous choice when it ends; it skips "asm" where there is none.
func useBenchKernel(b *testing.B, kern string) {
	prev := tensor.ForceGonumGemm(kern == "gonum")
	b.Cleanup(func() { tensor.ForceGonumGemm(prev) })
	if kern == "asm" && tensor.GemmKernel() == "gonum" {
		b.Skip("no assembly GEMM kernel in this build")
	}
}

// BenchmarkScoreStep measures forward+backward of s_θ + s_φ (gradients only,
// as in the issue) on a batch with each GEMM kernel; ms/subgraph and GFLOP/s
// (matrix-product FLOPs counted by the tapes) are reported.
func BenchmarkScoreStep(b *testing.B) {
	for _, sh := range benchShapes {
		for _, workers := range []int{1, 2} {
			for _, kern := range benchKernels {
				b.Run(fmt.Sprintf("%s/workers=%d/kernel=%s", sh.name, workers, kern), func(b *testing.B) {
					useBenchKernel(b, kern)
					s := newScoreTrainer[float32](b, sh.b, sh.n, sh.d, workers, 1)
					s.gradients()
					f0 := s.flops()
					b.ReportAllocs()
					b.ResetTimer()
					cpu0 := processCPU()
					for i := 0; i < b.N; i++ {
						s.gradients()
					}
					sec := b.Elapsed().Seconds()
					if cpu := processCPU() - cpu0; cpu > 0 {
						b.ReportMetric(cpu.Seconds()/float64(b.N*sh.b)*1e3, "cpu-ms/subgraph")
					}
					b.ReportMetric(sec/float64(b.N*sh.b)*1e3, "ms/subgraph")
					b.ReportMetric(float64(s.flops()-f0)/sec/1e9, "GFLOP/s")
					b.ReportMetric(float64(s.flops()-f0)/float64(b.N*sh.b)/1e6, "MFLOP/subgraph")
				})
			}
		}
	}
}

// BenchmarkSgemm measures the float32 GEMM kernels (through tensor.Gemm,
// single goroutine) on the shapes that dominate the score networks, as the
// reference for the GFLOP/s above: m×n×k, with tA/tB the transposes.
func BenchmarkSgemm(b *testing.B) {
	for _, s := range []struct {
		m, n, k int
		tA, tB  bool
	}{
		{21, 382, 191, false, false}, {441, 76, 38, false, false}, {76, 441, 38, true, false},
		{38, 76, 441, false, true}, {21, 96, 32, false, false}, {256, 256, 256, false, false},
	} {
		m, n, k := s.m, s.n, s.k
		for _, kern := range benchKernels {
			b.Run(fmt.Sprintf("%dx%dx%d_tA=%v_tB=%v/kernel=%s", m, n, k, s.tA, s.tB, kern), func(b *testing.B) {
				useBenchKernel(b, kern)
				a, bb, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
				for i := range a {
					a[i] = float32(i%7) * 0.1
				}
				for i := range bb {
					bb[i] = float32(i%5) * 0.1
				}
				lda, ldb := k, n
				if s.tA {
					lda = m
				}
				if s.tB {
					ldb = k
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					tensor.Gemm(s.tA, s.tB, m, n, k, 1, a, lda, bb, ldb, 0, c, n)
				}
				b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
