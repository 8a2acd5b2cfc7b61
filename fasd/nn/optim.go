package nn

import (
	"math"

	"github.com/fasd-db/fasd/fasd/tensor"
)

// AdamConfig holds Adam's settings. Zero Beta1/Beta2/Eps mean the defaults
// 0.9/0.999/1e-8.
type AdamConfig struct {
	LR          float64
	Beta1       float64
	Beta2       float64
	Eps         float64
	WeightDecay float64 // classic L2: WeightDecay·θ is added to the gradient
}

// withDefaults returns a copy with every zero field replaced by its
// default.
func (c *AdamConfig) withDefaults() AdamConfig {
	d := *c
	if d.Beta1 == 0 {
		d.Beta1 = 0.9
	}
	if d.Beta2 == 0 {
		d.Beta2 = 0.999
	}
	if d.Eps == 0 {
		d.Eps = 1e-8
	}
	return d
}

// Adam is the Adam optimiser with L2 weight decay (PyTorch torch.optim.Adam
// semantics, not AdamW). It keeps its moments in T.
type Adam[T tensor.Float] struct {
	cfg    AdamConfig
	params []*Param[T]
	m, v   [][]T
	steps  int
}

// NewAdam returns an optimiser over params.
func NewAdam[T tensor.Float](params []*Param[T], cfg AdamConfig) *Adam[T] {
	cfg = cfg.withDefaults()
	o := &Adam[T]{cfg: cfg, params: params}
	for _, p := range params {
		o.m = append(o.m, make([]T, len(p.Value.Data)))
		o.v = append(o.v, make([]T, len(p.Value.Data)))
	}
	return o
}

// LR returns the current learning rate.
func (o *Adam[T]) LR() float64 { return o.cfg.LR }

// SetLR sets the learning rate.
func (o *Adam[T]) SetLR(lr float64) { o.cfg.LR = lr }

// DecayLR multiplies the learning rate by f (e.g. 0.999 after every epoch).
func (o *Adam[T]) DecayLR(f float64) { o.cfg.LR *= f }

// Steps returns the number of updates made.
func (o *Adam[T]) Steps() int { return o.steps }

// Step updates every parameter from its Grad. It does not clear Grad.
func (o *Adam[T]) Step() {
	o.steps++
	c := o.cfg
	bc1 := 1 - math.Pow(c.Beta1, float64(o.steps))
	bc2 := 1 - math.Pow(c.Beta2, float64(o.steps))
	stepSize := c.LR / bc1
	sqrtBC2 := math.Sqrt(bc2)
	b1, b2 := T(c.Beta1), T(c.Beta2)
	for i, p := range o.params {
		tensor.AdamUpdate(p.Value.Data, p.Grad, o.m[i], o.v[i], T(c.WeightDecay), b1, b2, stepSize, sqrtBC2, c.Eps)
	}
}

// ZeroGrads clears the gradients of params.
func ZeroGrads[T tensor.Float](params []*Param[T]) {
	for _, p := range params {
		clear(p.Grad)
	}
}

// GradNorm returns the global L2 norm of the gradients of params.
func GradNorm[T tensor.Float](params []*Param[T]) float64 {
	var s float64
	for _, p := range params {
		for _, g := range p.Grad {
			s += float64(g) * float64(g)
		}
	}
	return math.Sqrt(s)
}

// ClipGradNorm scales the gradients of params so that their global L2 norm
// is at most maxNorm (coefficient maxNorm/(norm+1e-6), as PyTorch's
// clip_grad_norm_) and returns the norm before clipping.
func ClipGradNorm[T tensor.Float](params []*Param[T], maxNorm float64) float64 {
	n := GradNorm(params)
	if coef := maxNorm / (n + 1e-6); coef < 1 {
		for _, p := range params {
			for j := range p.Grad {
				p.Grad[j] *= T(coef)
			}
		}
	}
	return n
}

// EMA keeps an exponential moving average ("shadow") of parameters. After
// the n-th Update the decay used is min(Beta, (1+n)/(10+n)), as in GDSS.
type EMA[T tensor.Float] struct {
	Beta    float64
	params  []*Param[T]
	shadow  [][]T
	updates int
}

// NewEMA starts the average at the current values of params.
func NewEMA[T tensor.Float](params []*Param[T], beta float64) *EMA[T] {
	e := &EMA[T]{Beta: beta, params: params}
	for _, p := range params {
		e.shadow = append(e.shadow, append([]T(nil), p.Value.Data...))
	}
	return e
}

// Update folds the current parameter values into the average.
func (e *EMA[T]) Update() {
	e.updates++
	n := float64(e.updates)
	d := T(math.Min(e.Beta, (1+n)/(10+n)))
	for i, p := range e.params {
		s := e.shadow[i]
		for j, v := range p.Value.Data {
			s[j] -= (1 - d) * (s[j] - v)
		}
	}
}

// Shadow returns the averaged values of parameter i (owned by the EMA).
func (e *EMA[T]) Shadow(i int) []T { return e.shadow[i] }

// CopyTo writes the averaged values into dst, which must have the same
// layout as the tracked parameters (e.g. the Params of a second model built
// from the same config).
func (e *EMA[T]) CopyTo(dst []*Param[T]) {
	for i, p := range dst {
		copy(p.Value.Data, e.shadow[i])
	}
}

// CopyParams copies the values of src into dst (same layout).
func CopyParams[T tensor.Float](dst, src []*Param[T]) {
	for i, p := range dst {
		copy(p.Value.Data, src[i].Value.Data)
	}
}
