package nn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// ScoreAConfig describes s_φ (GDSS ScoreNetworkA, docs/method.md §7).
type ScoreAConfig struct {
	In         int // node features D
	Layers     int // attention layers K (5)
	CInit      int // adjacency powers P in the initial stack (2)
	CHid       int // channels between layers (8)
	CFinal     int // channels out of the last layer (4)
	Hidden     int // node hidden width and V width (32)
	AttnDim    int // Q/K width (32)
	Heads      int // attention heads (4)
	NumLinears int // layers of each edge MLP (2)
}

// DefaultScoreAConfig is §7: K=5, P=2, c_hid 8, c_final 4, hidden 32,
// attention 32, 4 heads, num_linears 2.
func DefaultScoreAConfig(d int) ScoreAConfig {
	return ScoreAConfig{In: d, Layers: 5, CInit: 2, CHid: 8, CFinal: 4, Hidden: 32, AttnDim: 32, Heads: 4, NumLinears: 2}
}

// Validate reports every problem of the config.
func (c ScoreAConfig) Validate() error {
	var errs []error
	pos := func(name string, v int) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%w: %s = %d, want > 0", ErrConfig, name, v))
		}
	}
	pos("In", c.In)
	pos("CInit", c.CInit)
	pos("CHid", c.CHid)
	pos("CFinal", c.CFinal)
	pos("Hidden", c.Hidden)
	pos("AttnDim", c.AttnDim)
	pos("Heads", c.Heads)
	pos("NumLinears", c.NumLinears)
	if c.Layers < 1 || c.Layers > 14 {
		errs = append(errs, fmt.Errorf("%w: Layers = %d, want 1..14", ErrConfig, c.Layers))
	}
	if c.Heads > 0 && c.AttnDim%c.Heads != 0 {
		errs = append(errs, fmt.Errorf("%w: AttnDim %d not divisible by Heads %d", ErrConfig, c.AttnDim, c.Heads))
	}
	return errors.Join(errs...)
}

// attnLayer is one GDSS AttentionLayer with C_in per-channel DenseGMH blocks.
// The Q/K/V GCNs of all channels share one fused weight: columns
// [c·G, (c+1)·G) hold channel c's [W_q | W_k | W_v] (each block Glorot with
// its own fan-in/fan-out), G = 2·AttnDim + Hidden (no V on the last layer,
// whose node output s_φ never uses).
type attnLayer[T tensor.Float] struct {
	cin, cout, g int
	withNode     bool
	qkv          *GCN[T]
	node         *MLP[T] // C_in·Hidden → 2·max(C_in,C_out) → Hidden, ELU
	edge         *MLP[T] // 2·C_in → 2·max(C_in,C_out) → … → C_out, ELU
}

func newAttnLayer[T tensor.Float](name string, cfg ScoreAConfig, fin, cin, cout int, withNode bool, rng *rand.Rand) *attnLayer[T] {
	l := &attnLayer[T]{cin: cin, cout: cout, withNode: withNode, g: 2 * cfg.AttnDim}
	if withNode {
		l.g += cfg.Hidden
	}
	w := autodiff.NewParam[T](name+".qkv.W", fin, cin*l.g)
	b := autodiff.NewParam[T](name+".qkv.b", cin*l.g)
	for c := 0; c < cin; c++ {
		blocks := []int{cfg.AttnDim, cfg.AttnDim}
		if withNode {
			blocks = append(blocks, cfg.Hidden)
		}
		off := c * l.g
		for _, width := range blocks {
			bound := math.Sqrt(6 / float64(fin+width))
			for r := 0; r < fin; r++ {
				row := w.Value.Data[r*cin*l.g+off : r*cin*l.g+off+width]
				uniformFill(row, bound, rng)
			}
			off += width
		}
	}
	l.qkv = &GCN[T]{W: w, B: b}
	hid := 2 * max(cin, cout)
	if withNode {
		l.node = NewMLP[T](name+".node", []int{cin * cfg.Hidden, hid, cfg.Hidden}, autodiff.ELU, rng)
	}
	dims := []int{2 * cin}
	for i := 1; i < cfg.NumLinears; i++ {
		dims = append(dims, hid)
	}
	l.edge = NewMLP[T](name+".edge", append(dims, cout), autodiff.ELU, rng)
	return l
}

func (l *attnLayer[T]) params() []*Param[T] {
	ps := l.qkv.Params()
	if l.node != nil {
		ps = append(ps, l.node.Params()...)
	}
	return append(ps, l.edge.Params()...)
}

// forward returns the new node features (nil without node output) and the
// new channel stack (B, C_out, N, N).
func (l *attnLayer[T]) forward(t *Tape[T], cfg *ScoreAConfig, h, c *Var[T], mask []T) (*Var[T], *Var[T]) {
	ahat := t.GCNNorm(c)
	qkv := l.qkv.Forward(t, ahat, h)
	att := t.Attention(qkv, l.cin, cfg.Heads, cfg.AttnDim, T(1/math.Sqrt(float64(cfg.Hidden))))
	var hn *Var[T]
	if l.withNode {
		v := t.GatherCols(qkv, l.g, 2*cfg.AttnDim, cfg.Hidden)
		hn = t.ActInPlace(t.MaskNodes(l.node.Forward(t, v), mask), autodiff.Tanh)
	}
	// The edge MLP is entrywise and its input channels are symmetric, so it
	// runs on the packed upper triangle; unpacking with scale 2 is e + eᵀ.
	e := l.edge.ForwardChan(t, t.PackSym(att, c))
	return hn, t.MaskPairs(t.UnpackSym(e, c.Value.Shape.Dim(-1), 2), mask, false)
}

// ScoreA is s_φ: C⁽⁰⁾ = [A, A², …, A^P], K attention layers, readout MLP_A
// over the concatenated channels (3 layers, hidden 2·F_c, ELU), zero diagonal
// and mask_adj.
type ScoreA[T tensor.Float] struct {
	Config  ScoreAConfig
	layers  []*attnLayer[T]
	Readout *MLP[T]
	params  []*Param[T]
}

// NewScoreA builds and initialises s_φ from rng.
func NewScoreA[T tensor.Float](cfg ScoreAConfig, rng *rand.Rand) (*ScoreA[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &ScoreA[T]{Config: cfg}
	fin, cin := cfg.In, cfg.CInit
	total := cfg.CInit
	for i := 0; i < cfg.Layers; i++ {
		last := i == cfg.Layers-1
		cout := cfg.CHid
		if last {
			cout = cfg.CFinal
		}
		m.layers = append(m.layers, newAttnLayer[T](fmt.Sprintf("a.layer%d", i), cfg, fin, cin, cout, !last, rng))
		fin, cin = cfg.Hidden, cout
		total += cout
	}
	m.Readout = NewMLP[T]("a.readout", []int{total, 2 * total, 2 * total, 1}, autodiff.ELU, rng)
	m.params = m.collectParams()
	return m, nil
}

func (m *ScoreA[T]) collectParams() []*Param[T] {
	var ps []*Param[T]
	for _, l := range m.layers {
		ps = append(ps, l.params()...)
	}
	return append(ps, m.Readout.Params()...)
}

// Forward records s_φ(x, a) on t: x (B, N, D), a (B, N, N), mask B·N; the
// result is (B, N, N), exactly symmetric, with a zero diagonal and zero
// padded rows and columns. a is expected to be symmetric, as every adjacency
// in FASD: the edge MLPs and MLP_A run on the upper triangle of symmetric
// channel stacks (autodiff.PackSym), which gives bit for bit the result of
// running them on every pair; for a non-symmetric a the channels A and A² are
// symmetrised (½(X + Xᵀ)) before the pair MLPs. ∇_A is the same as that of
// the all-pairs computation at a symmetric a.
func (m *ScoreA[T]) Forward(t *Tape[T], x, a *Var[T], mask []T) *Var[T] {
	var pows [16]*Var[T]
	pows[0] = a
	for p := 1; p < m.Config.CInit; p++ {
		pows[p] = t.MatMul(pows[p-1], a)
	}
	c := a
	if m.Config.CInit > 1 {
		c = t.ConcatChan(pows[:m.Config.CInit]...)
	}
	var chans [16]*Var[T]
	chans[0] = c
	h := x
	for i, l := range m.layers {
		h, c = l.forward(t, &m.Config, h, c, mask)
		chans[i+1] = c
	}
	// MLP_A is entrywise over symmetric channels: packed upper triangle.
	s := a.Value.Shape
	all := t.PackSym(chans[:len(m.layers)+1]...)
	out := t.MaskPairs(t.UnpackSym(m.Readout.ForwardChan(t, all), s.Dim(-1), 1), mask, true)
	return t.Reshape(out, tensor.S(s.Dim(0), s.Dim(1), s.Dim(2)))
}

// Params returns the parameters in a fixed order. The slice is owned by the
// model and the same on every call (no allocation).
func (m *ScoreA[T]) Params() []*Param[T] { return m.params }
