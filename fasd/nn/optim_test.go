package nn

import (
	"math"
	"testing"

	"github.com/fasd-db/fasd/fasd/autodiff"
)

// ensure that Adam with L2 weight decay follows PyTorch's update for a few
// steps of a hand-computed scalar case, and that DecayLR multiplies the rate.
func TestAdam_MatchesHandComputation(t *testing.T) {
	p := autodiff.NewParam[float64]("p", 1)
	p.Value.Data[0] = 1
	o := NewAdam([]*Param[float64]{p}, AdamConfig{LR: 0.1, WeightDecay: 0.01})
	theta, m, v := 1.0, 0.0, 0.0
	for step := 1; step <= 3; step++ {
		grad := float64(step) - 0.5*theta
		p.Grad[0] = grad
		o.Step()
		g := grad + 0.01*theta
		m = 0.9*m + 0.1*g
		v = 0.999*v + 0.001*g*g
		bc1, bc2 := 1-math.Pow(0.9, float64(step)), 1-math.Pow(0.999, float64(step))
		theta -= 0.1 / bc1 * m / (math.Sqrt(v)/math.Sqrt(bc2) + 1e-8)
		if math.Abs(p.Value.Data[0]-theta) > 1e-15 {
			t.Fatalf("step %d: θ = %v, want %v", step, p.Value.Data[0], theta)
		}
	}
	o.DecayLR(0.999)
	if math.Abs(o.LR()-0.0999) > 1e-15 {
		t.Fatalf("LR after decay %v", o.LR())
	}
}

// ensure that ClipGradNorm rescales to the bound (PyTorch's coefficient) and
// leaves small gradients alone.
func TestClipGradNorm(t *testing.T) {
	a := autodiff.NewParam[float32]("a", 2)
	b := autodiff.NewParam[float32]("b", 1)
	copy(a.Grad, []float32{3, 0})
	b.Grad[0] = 4
	ps := []*Param[float32]{a, b}
	if n := ClipGradNorm(ps, 1); math.Abs(n-5) > 1e-6 {
		t.Fatalf("norm %v want 5", n)
	}
	if got := GradNorm(ps); math.Abs(got-1) > 1e-6 {
		t.Fatalf("clipped norm %v want 1", got)
	}
	ClipGradNorm(ps, 10)
	if got := GradNorm(ps); math.Abs(got-1) > 1e-6 {
		t.Fatalf("small gradient changed: %v", got)
	}
}

// ensure that the EMA uses decay min(β, (1+n)/(10+n)) on the n-th update.
func TestEMA_Decay(t *testing.T) {
	p := autodiff.NewParam[float64]("p", 1)
	e := NewEMA([]*Param[float64]{p}, 0.999)
	shadow := 0.0
	for n := 1; n <= 2000; n++ {
		p.Value.Data[0] = float64(n % 7)
		e.Update()
		d := math.Min(0.999, float64(1+n)/float64(10+n))
		shadow = d*shadow + (1-d)*p.Value.Data[0]
		if math.Abs(e.Shadow(0)[0]-shadow) > 1e-12 {
			t.Fatalf("update %d: shadow %v want %v", n, e.Shadow(0)[0], shadow)
		}
	}
	q := autodiff.NewParam[float64]("p", 1)
	e.CopyTo([]*Param[float64]{q})
	if q.Value.Data[0] != e.Shadow(0)[0] {
		t.Fatal("CopyTo did not copy the shadow")
	}
}
