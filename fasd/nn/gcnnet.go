package nn

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// ErrConfig marks an invalid network configuration.
var ErrConfig = errors.New("nn: invalid config")

// GCNNetConfig describes a GCNNet: len(GCN) GCN layers, then len(FC) hidden
// fully connected layers, then a linear output layer of width Out. ReLU and
// dropout follow every hidden layer; the output is logits. With GCNHead the
// output layer is a GCN layer of width Out instead of the linear one (Kipf
// and Welling's two-layer GCN is GCN: {h}, GCNHead: true), and FC must be
// empty.
type GCNNetConfig struct {
	In      int     // input features D
	GCN     []int   // GCN widths
	FC      []int   // hidden FC widths
	Out     int     // output width (1 for a binary logit, 2 for class logits)
	Dropout float64 // dropout probability after each hidden layer, in [0, 1)
	// Root gives every GCN layer a root weight (Â·H·W + H·R + b, see
	// NewGCNRoot), so a node's own features reach the output undiluted
	// by its neighbours' however many it has.
	Root bool
	// GCNHead makes the output layer a GCN layer (Â·H·W + b, with a root
	// weight under Root) instead of a linear one.
	GCNHead bool
}

// GSenConfig is g_sen (docs/method.md §3): GCN D→64, GCN 64→32, FC 32→16,
// FC 16→1 logit, dropout 0.1.
func GSenConfig(d int) GCNNetConfig {
	return GCNNetConfig{In: d, GCN: []int{64, 32}, FC: []int{16}, Out: 1, Dropout: 0.1}
}

// ClassifierConfig is f (docs/method.md §10): GCN D→64, GCN 64→64, FC 64→64,
// FC 64→2 logits, dropout 0.3.
func ClassifierConfig(d int) GCNNetConfig {
	return GCNNetConfig{In: d, GCN: []int{64, 64}, FC: []int{64}, Out: 2, Dropout: 0.3}
}

// Validate reports every problem of the config.
func (c GCNNetConfig) Validate() error {
	var errs []error
	if c.In <= 0 {
		errs = append(errs, fmt.Errorf("%w: In = %d, want > 0", ErrConfig, c.In))
	}
	if c.Out <= 0 {
		errs = append(errs, fmt.Errorf("%w: Out = %d, want > 0", ErrConfig, c.Out))
	}
	if len(c.GCN) == 0 {
		errs = append(errs, fmt.Errorf("%w: no GCN layer", ErrConfig))
	}
	for i, w := range append(append([]int(nil), c.GCN...), c.FC...) {
		if w <= 0 {
			errs = append(errs, fmt.Errorf("%w: hidden width %d is %d", ErrConfig, i, w))
		}
	}
	if c.GCNHead && len(c.FC) > 0 {
		errs = append(errs, fmt.Errorf("%w: GCNHead with %d FC layers, want none", ErrConfig, len(c.FC)))
	}
	if c.Dropout < 0 || c.Dropout >= 1 {
		errs = append(errs, fmt.Errorf("%w: Dropout = %v, want [0, 1)", ErrConfig, c.Dropout))
	}
	return errors.Join(errs...)
}

// GCNNet is the GCN+FC stack used for g_sen and f.
type GCNNet[T tensor.Float] struct {
	Config GCNNetConfig
	GCNs   []*GCN[T]    // hidden layers, then the output layer under GCNHead
	FCs    []*Linear[T] // hidden layers then the output layer (none under GCNHead)
	params []*Param[T]
}

// NewGCNNet builds and initialises a GCNNet (Glorot GCNs, PyTorch-default
// Linear layers) from rng.
func NewGCNNet[T tensor.Float](cfg GCNNetConfig, rng *rand.Rand) (*GCNNet[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &GCNNet[T]{Config: cfg}
	in := cfg.In
	widths := cfg.GCN
	if cfg.GCNHead {
		widths = append(append([]int(nil), cfg.GCN...), cfg.Out)
	}
	for i, w := range widths {
		name := fmt.Sprintf("gcn%d", i)
		if cfg.Root {
			m.GCNs = append(m.GCNs, NewGCNRoot[T](name, in, w, rng))
		} else {
			m.GCNs = append(m.GCNs, NewGCN[T](name, in, w, rng))
		}
		in = w
	}
	if cfg.GCNHead {
		m.params = m.collectParams()
		return m, nil
	}
	for i, w := range append(append([]int(nil), cfg.FC...), cfg.Out) {
		m.FCs = append(m.FCs, NewLinear[T](fmt.Sprintf("fc%d", i), in, w, rng))
		in = w
	}
	m.params = m.collectParams()
	return m, nil
}

func (m *GCNNet[T]) collectParams() []*Param[T] {
	var ps []*Param[T]
	for _, g := range m.GCNs {
		ps = append(ps, g.Params()...)
	}
	for _, l := range m.FCs {
		ps = append(ps, l.Params()...)
	}
	return ps
}

// Forward records the network on t and returns the masked logits
// (B, N, Out). x is (B, N, D), a is (B, N, N), mask has B·N entries. Dropout
// is applied only when drop is non-nil (training mode), with draws from
// drop (Tape.Dropout).
func (m *GCNNet[T]) Forward(t *Tape[T], x, a *Var[T], mask []T, drop *rand.PCG) *Var[T] {
	ahat := t.GCNNorm(a)
	h := x
	hidden := m.GCNs
	if m.Config.GCNHead {
		hidden = m.GCNs[:len(m.GCNs)-1]
	}
	for _, g := range hidden {
		h = t.Dropout(t.ActInPlace(g.Forward(t, ahat, h), autodiff.ReLU), m.Config.Dropout, drop)
	}
	if m.Config.GCNHead {
		return t.MaskNodes(m.GCNs[len(hidden)].Forward(t, ahat, h), mask)
	}
	last := len(m.FCs) - 1
	for _, l := range m.FCs[:last] {
		h = t.Dropout(t.ActInPlace(l.Forward(t, h), autodiff.ReLU), m.Config.Dropout, drop)
	}
	return t.MaskNodes(m.FCs[last].Forward(t, h), mask)
}

// SensitiveGrads computes, in eval mode with frozen parameters, the gradients
// of the per-subgraph loss L_sen(X, A) = Σ_u weight_u·BCE(z_u, s_u) of
// docs/method.md §3 for every subgraph of the batch: gx (B, N, D) receives ∇_X and
// ga (B, N, N) receives ∇_A projected on symmetric matrices, ½(G + Gᵀ), with a
// zero diagonal and zero padded rows and columns. weight should be mask ×
// "s known". gx and ga are resized as needed (a zero-value Dense is fine). It
// returns the batch sum of L_sen. The network must have Out = 1. t is reset.
func (m *GCNNet[T]) SensitiveGrads(t *Tape[T], x, a tensor.Dense[T], mask, s, weight []T, gx, ga *tensor.Dense[T]) T {
	t.Reset()
	t.SetNoGrad(false)
	t.FreezeParams(true)
	defer t.FreezeParams(false)
	xv, av := t.Input(x, true), t.Input(a, true)
	z := m.Forward(t, xv, av, mask, nil)
	loss := t.BCEWithLogits(z, s, weight, 1)
	t.Backward(loss)
	gx.Resize(x.Shape)
	copy(gx.Data, xv.Grad)
	ga.Resize(a.Shape)
	bn, nn := a.Shape.Dim(0), a.Shape.Dim(1)
	for b := 0; b < bn; b++ {
		g, out, mk := av.Grad[b*nn*nn:(b+1)*nn*nn], ga.Data[b*nn*nn:(b+1)*nn*nn], mask[b*nn:(b+1)*nn]
		for i := 0; i < nn; i++ {
			for j := 0; j < nn; j++ {
				v := (g[i*nn+j] + g[j*nn+i]) / 2 * mk[i] * mk[j]
				if i == j {
					v = 0
				}
				out[i*nn+j] = v
			}
		}
	}
	return loss.Value.Data[0]
}

// Params returns the parameters in a fixed order. The slice is owned by the
// model and the same on every call (no allocation).
func (m *GCNNet[T]) Params() []*Param[T] { return m.params }
