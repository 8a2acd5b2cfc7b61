package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// Param is a trainable tensor (see autodiff.Param).
type Param[T tensor.Float] = autodiff.Param[T]

// Tape and Var are re-exported for convenience.
type (
	Tape[T tensor.Float] = autodiff.Tape[T]
	Var[T tensor.Float]  = autodiff.Var[T]
)

func uniformFill[T tensor.Float](d []T, bound float64, rng *rand.Rand) {
	for i := range d {
		d[i] = T((2*rng.Float64() - 1) * bound)
	}
}

// Linear is y = x·W + b with W (in×out). It is initialised like PyTorch's
// nn.Linear: W and b uniform in ±1/√in.
type Linear[T tensor.Float] struct {
	W, B *Param[T]
}

// NewLinear returns a PyTorch-default-initialised Linear layer.
func NewLinear[T tensor.Float](name string, in, out int, rng *rand.Rand) *Linear[T] {
	l := &Linear[T]{W: autodiff.NewParam[T](name+".W", in, out), B: autodiff.NewParam[T](name+".b", out)}
	bound := 1 / math.Sqrt(float64(in))
	uniformFill(l.W.Value.Data, bound, rng)
	uniformFill(l.B.Value.Data, bound, rng)
	return l
}

// Forward applies the layer to the last dimension of x.
func (l *Linear[T]) Forward(t *Tape[T], x *Var[T]) *Var[T] {
	return t.Linear(x, t.Param(l.W), t.Param(l.B))
}

// ForwardChan applies the layer across the channels of a stack (B, C, N, N).
func (l *Linear[T]) ForwardChan(t *Tape[T], x *Var[T]) *Var[T] {
	return t.ChanLinear(x, t.Param(l.W), t.Param(l.B))
}

// Params returns W and b.
func (l *Linear[T]) Params() []*Param[T] { return []*Param[T]{l.W, l.B} }

// GCN is the dense GCN layer of docs/method.md §3: Â·(H·W) + b with Â from
// Tape.GCNNorm; W is Glorot-uniform (±√(6/(in+out))), b = 0. With a root
// weight R (NewGCNRoot) it is Â·(H·W) + H·R + b: every node also keeps a
// map of its own representation that no neighbour dilutes (the root
// weight of GraphConv and GraphSAGE).
type GCN[T tensor.Float] struct {
	W, B *Param[T]
	R    *Param[T] // nil: no root path
}

// NewGCN returns a Glorot-initialised GCN layer.
func NewGCN[T tensor.Float](name string, in, out int, rng *rand.Rand) *GCN[T] {
	g := &GCN[T]{W: autodiff.NewParam[T](name+".W", in, out), B: autodiff.NewParam[T](name+".b", out)}
	uniformFill(g.W.Value.Data, math.Sqrt(6/float64(in+out)), rng)
	return g
}

// NewGCNRoot returns a Glorot-initialised GCN layer with a root weight R
// (in×out), drawn from rng after W like a PyTorch-default Linear weight
// (uniform in ±1/√in).
func NewGCNRoot[T tensor.Float](name string, in, out int, rng *rand.Rand) *GCN[T] {
	g := NewGCN[T](name, in, out, rng)
	g.R = autodiff.NewParam[T](name+".R", in, out)
	uniformFill(g.R.Value.Data, 1/math.Sqrt(float64(in)), rng)
	return g
}

// Forward computes Â·(h·W) + b, plus h·R with a root weight; ahat is the
// normalised adjacency (B, N, N).
func (g *GCN[T]) Forward(t *Tape[T], ahat, h *Var[T]) *Var[T] {
	out := t.LinearGCNProp(ahat, h, t.Param(g.W), t.Param(g.B))
	if g.R == nil {
		return out
	}
	return t.Add(out, t.Linear(h, t.Param(g.R), nil))
}

// Params returns W and b, then R if the layer has one.
func (g *GCN[T]) Params() []*Param[T] {
	if g.R == nil {
		return []*Param[T]{g.W, g.B}
	}
	return []*Param[T]{g.W, g.B, g.R}
}

// MLP is a stack of Linear layers with an activation between consecutive
// layers and none after the last.
type MLP[T tensor.Float] struct {
	Layers []*Linear[T]
	Act    autodiff.Activation
}

// NewMLP returns an MLP with the given widths: dims[0] is the input size and
// dims[len-1] the output size.
func NewMLP[T tensor.Float](name string, dims []int, act autodiff.Activation, rng *rand.Rand) *MLP[T] {
	m := &MLP[T]{Act: act}
	for i := 0; i+1 < len(dims); i++ {
		m.Layers = append(m.Layers, NewLinear[T](fmt.Sprintf("%s.%d", name, i), dims[i], dims[i+1], rng))
	}
	return m
}

// Forward applies the MLP to the last dimension of x.
func (m *MLP[T]) Forward(t *Tape[T], x *Var[T]) *Var[T] {
	for i, l := range m.Layers {
		if i > 0 {
			x = t.ActInPlace(x, m.Act)
		}
		x = l.Forward(t, x)
	}
	return x
}

// ForwardChan applies the MLP across the channels of a stack (B, C, N, N),
// entrywise.
func (m *MLP[T]) ForwardChan(t *Tape[T], x *Var[T]) *Var[T] {
	for i, l := range m.Layers {
		if i > 0 {
			x = t.ActInPlace(x, m.Act)
		}
		x = l.ForwardChan(t, x)
	}
	return x
}

// Params returns the parameters of every layer in order.
func (m *MLP[T]) Params() []*Param[T] {
	var ps []*Param[T]
	for _, l := range m.Layers {
		ps = append(ps, l.Params()...)
	}
	return ps
}
