package nn

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// ScoreXConfig describes s_θ (GDSS ScoreNetworkX, docs/method.md §6).
type ScoreXConfig struct {
	In     int                 // node features D
	Hidden int                 // GCN width (32)
	Depth  int                 // number of GCN layers (3)
	Act    autodiff.Activation // MLP_X activation: ReLU (paper, default) or ELU (GDSS)
}

// DefaultScoreXConfig is §6 with the paper's ReLU.
func DefaultScoreXConfig(d int) ScoreXConfig {
	return ScoreXConfig{In: d, Hidden: 32, Depth: 3, Act: autodiff.ReLU}
}

// Validate reports every problem of the config.
func (c ScoreXConfig) Validate() error {
	var errs []error
	if c.In <= 0 {
		errs = append(errs, fmt.Errorf("%w: In = %d", ErrConfig, c.In))
	}
	if c.Hidden <= 0 {
		errs = append(errs, fmt.Errorf("%w: Hidden = %d", ErrConfig, c.Hidden))
	}
	if c.Depth <= 0 || c.Depth > 15 {
		errs = append(errs, fmt.Errorf("%w: Depth = %d, want 1..15", ErrConfig, c.Depth))
	}
	if c.Act != autodiff.ReLU && c.Act != autodiff.ELU {
		errs = append(errs, fmt.Errorf("%w: Act = %v, want relu or elu", ErrConfig, c.Act))
	}
	return errors.Join(errs...)
}

// ScoreX is s_θ: H_l = tanh(GCN_l(H_{l−1}, A)), l = 1..Depth, then
// out = mask_x(MLP_X([H_0 | … | H_Depth])) with MLP_X F→2F→2F→D,
// F = D + Depth·Hidden.
type ScoreX[T tensor.Float] struct {
	Config ScoreXConfig
	GCNs   []*GCN[T]
	MLP    *MLP[T]
	params []*Param[T]
}

// NewScoreX builds and initialises s_θ from rng.
func NewScoreX[T tensor.Float](cfg ScoreXConfig, rng *rand.Rand) (*ScoreX[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &ScoreX[T]{Config: cfg}
	in := cfg.In
	for i := 0; i < cfg.Depth; i++ {
		m.GCNs = append(m.GCNs, NewGCN[T](fmt.Sprintf("x.gcn%d", i), in, cfg.Hidden, rng))
		in = cfg.Hidden
	}
	f := cfg.In + cfg.Depth*cfg.Hidden
	m.MLP = NewMLP[T]("x.mlp", []int{f, 2 * f, 2 * f, cfg.In}, cfg.Act, rng)
	m.params = m.collectParams()
	return m, nil
}

func (m *ScoreX[T]) collectParams() []*Param[T] {
	var ps []*Param[T]
	for _, g := range m.GCNs {
		ps = append(ps, g.Params()...)
	}
	return append(ps, m.MLP.Params()...)
}

// Forward records s_θ(x, a) on t: x (B, N, D), a (B, N, N), mask B·N; the
// result is (B, N, D) with padded rows 0.
func (m *ScoreX[T]) Forward(t *Tape[T], x, a *Var[T], mask []T) *Var[T] {
	ahat := t.GCNNorm(a)
	var hs [16]*Var[T]
	hs[0] = x
	h := x
	for i, g := range m.GCNs {
		h = t.ActInPlace(g.Forward(t, ahat, h), autodiff.Tanh)
		hs[i+1] = h
	}
	cat := t.ConcatLast(hs[:len(m.GCNs)+1]...)
	return t.MaskNodes(m.MLP.Forward(t, cat), mask)
}

// Params returns the parameters in a fixed order. The slice is owned by the
// model and the same on every call (no allocation).
func (m *ScoreX[T]) Params() []*Param[T] { return m.params }
