package fasd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// ErrNonFinite reports a NaN or ±Inf produced by a computation (usually a
// diverging score model).
var ErrNonFinite = errors.New("fasd: non-finite value")

// ScoreModel gives the raw outputs of the two score networks for one
// subgraph, in eval mode (no dropout).
//
// Predict writes the ε-predictions of s_θ into outX (n×d) and of s_φ into
// outA (n×n, symmetric, zero diagonal) for the state (x, a) at diffusion
// time t. These are the quantities the loss of docs/method.md §5 trains, not
// scores: the sampler converts them with S = −out/σ_t. FASD's networks ignore
// t (GDSS has no time input); it is passed so that analytic models (the
// Gaussian oracle of the tests) fit the same interface. Predict must not
// retain x or a.
type ScoreModel interface {
	Predict(t float64, x, a []float32, n, d int, outX, outA []float32) error
}

// Schedule selects the reverse time grid of the debiasing sampler (§8).
type Schedule uint8

const (
	// ScheduleFixedDT uses t_j = j·Δt_rev for j = N_steps..1, step Δt_rev
	// (default).
	ScheduleFixedDT Schedule = iota
	// ScheduleSpan spreads N_steps steps over [0, TStart]: Δt =
	// TStart/N_steps, t_j = j·Δt.
	ScheduleSpan
	// ScheduleGDSSFull is GDSS's grid: N_steps points evenly spaced from 1
	// down to GDSSEps, each step Δt = 1/N_steps.
	ScheduleGDSSFull
)

var scheduleNames = [...]string{"fixed_dt", "span", "gdss_full"}

// Names lists the names of the values, indexed by value: fixed_dt, span, gdss_full.
func (Schedule) Names() []string { return slices.Clone(scheduleNames[:]) }

// String returns the value's name.
func (v Schedule) String() string { return enumString(scheduleNames[:], uint8(v), "Schedule") }

// Order selects the order of predictor and corrector within one iteration.
type Order uint8

const (
	// OrderPC runs the predictor, then the corrector, both at t_j (paper).
	OrderPC Order = iota
	// OrderCP runs the corrector first (GDSS).
	OrderCP
)

var orderNames = [...]string{"PC", "CP"}

// Names lists the names of the values, indexed by value: PC, CP.
func (Order) Names() []string { return slices.Clone(orderNames[:]) }

// String returns the value's name.
func (v Order) String() string { return enumString(orderNames[:], uint8(v), "Order") }

// Init selects the starting state of the reverse process.
type Init uint8

const (
	// InitClean starts from the clean subgraph as is (default, paper).
	InitClean Init = iota
	// InitForward first diffuses to the start time (SDEdit): X = m·X₀ + σ·ε,
	// A likewise with symmetric noise.
	InitForward
)

var initNames = [...]string{"clean", "forward"}

// Names lists the names of the values, indexed by value: clean, forward.
func (Init) Names() []string { return slices.Clone(initNames[:]) }

// String returns the value's name.
func (v Init) String() string { return enumString(initNames[:], uint8(v), "Init") }

// Reverse selects the reverse-time integrator.
type Reverse uint8

const (
	// ReverseSDE is the reverse SDE (Euler–Maruyama predictor with noise)
	// with the Langevin corrector (paper).
	ReverseSDE Reverse = iota
	// ReverseODE is the probability-flow ODE x ← x + Δt·(½β·x + ½β·S): no
	// noise and no corrector.
	ReverseODE
)

var reverseNames = [...]string{"sde", "ode"}

// Names lists the names of the values, indexed by value: sde, ode.
func (Reverse) Names() []string { return slices.Clone(reverseNames[:]) }

// String returns the value's name.
func (v Reverse) String() string { return enumString(reverseNames[:], uint8(v), "Reverse") }

// Guide is a differentiable fairness criterion of one subgraph state, used
// for guidance inside the reverse run: Grad returns L(x, a) ≥ 0, zero at
// the target (e.g. a sensitive-attribute predictor at chance), and writes
// ∂L/∂X into gx (n×d) and ∂L/∂A into ga (n×n, symmetric, zero diagonal).
// Grad must not retain its arguments.
type Guide interface {
	Grad(x, a []float32, n, d int, gx, ga []float32) (float64, error)
}

// Defaults of the debiasing sampler (docs/method.md §8, §12).
const (
	DefaultDtRev    = 0.01
	DefaultSNR      = 0.05
	DefaultScaleEps = 1.0
	DefaultGDSSEps  = 1e-4
	// MinScoreNorm is the norm below which the corrector skips its step.
	MinScoreNorm = 1e-12
)

// DebiasOptions configures the reverse predictor–corrector sampler of §8.
// Zero fields mean the defaults, except Steps, which must be set (NBA 5,
// Pokec-z 4, Pokec-n 2), and TStart, which ScheduleSpan needs. ScaleEps,
// for which zero is a valid setting, is an Opt: unset means the default.
type DebiasOptions struct {
	SDEX, SDEA VPSDE // zero: DefaultVPSDE
	Schedule   Schedule
	Order      Order
	Init       Init
	Steps      int          // N_steps ≥ 1
	DtRev      float64      // Δt_rev of ScheduleFixedDT; 0: 0.01
	TStart     float64      // start time of ScheduleSpan, in (0, 1]
	GDSSEps    float64      // last time of ScheduleGDSSFull; 0: 1e-4
	SNRX, SNRA float64      // Langevin r_X, r_A; 0: 0.05
	ScaleEps   Opt[float64] // corrector noise scale ≥ 0; unset: 1.0 (GDSS config: 0.7)
	// NoCorrector disables the Langevin corrector.
	NoCorrector bool
	// Reverse is ReverseSDE (the paper's reverse SDE with a Langevin
	// corrector, default) or ReverseODE (the probability-flow ODE: no
	// injected noise and no corrector; a deterministic edit).
	Reverse Reverse
	// GuideWeight, when > 0, turns on fairness guidance (see Guide): after
	// every reverse iteration, up to GuideSteps gradient steps move the state
	// toward the guide's target, each a Polyak step
	// α = GuideWeight·L/‖∇L‖² (GuideWeight 1 halves a linear guide's logit
	// per step, 2 zeroes it). The strength does not depend on σ_t.
	GuideWeight float64
	GuideSteps  int // ≥ 1 when GuideWeight > 0
	// GuideA lets guidance move A as well as X.
	GuideA bool

	// rawScore makes the sampler use the raw network output as the score
	// (the sign/scale trap of §8); only the tests set it, to prove that the
	// Gaussian-oracle test catches the mistake.
	rawScore bool
}

// withDefaults returns a copy with every zero field replaced by its default.
func (opt *DebiasOptions) withDefaults() DebiasOptions {
	o := *opt
	if o.SDEX == (VPSDE{}) {
		o.SDEX = DefaultVPSDE()
	}
	if o.SDEA == (VPSDE{}) {
		o.SDEA = DefaultVPSDE()
	}
	if o.DtRev == 0 {
		o.DtRev = DefaultDtRev
	}
	if o.GDSSEps == 0 {
		o.GDSSEps = DefaultGDSSEps
	}
	if o.SNRX == 0 {
		o.SNRX = DefaultSNR
	}
	if o.SNRA == 0 {
		o.SNRA = DefaultSNR
	}
	o.ScaleEps = Some(o.ScaleEps.Or(DefaultScaleEps))
	return o
}

// Validate reports every invalid field (after defaults), each wrapping
// ErrInvalidOptions.
func (o DebiasOptions) Validate() error {
	c := o.withDefaults()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...))
	}
	if err := c.SDEX.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("SDE of X: %w", err))
	}
	if err := c.SDEA.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("SDE of A: %w", err))
	}
	if c.Steps < 1 {
		bad("N_steps = %d, want ≥ 1", c.Steps)
	}
	if c.Order > OrderCP {
		bad("unknown order %d", c.Order)
	}
	if c.Init > InitForward {
		bad("unknown init %d", c.Init)
	}
	switch c.Schedule {
	case ScheduleFixedDT:
		if !(c.DtRev > 0) || c.Steps >= 1 && float64(c.Steps)*c.DtRev > 1+1e-12 {
			bad("Δt_rev = %v with %d steps: need Δt_rev > 0 and N_steps·Δt_rev ≤ 1", c.DtRev, c.Steps)
		}
	case ScheduleSpan:
		if !(c.TStart > 0 && c.TStart <= 1) {
			bad("span start time %v outside (0, 1]", c.TStart)
		}
	case ScheduleGDSSFull:
		if !(c.GDSSEps > 0 && c.GDSSEps < 1) {
			bad("gdss_full end time %v outside (0, 1)", c.GDSSEps)
		}
	default:
		bad("unknown schedule %d", c.Schedule)
	}
	if c.Reverse > ReverseODE {
		bad("unknown reverse integrator %d", c.Reverse)
	}
	if !(c.GuideWeight >= 0) || c.GuideWeight > 0 && c.GuideSteps < 1 {
		bad("guidance weight %v with %d steps: want weight ≥ 0 and steps ≥ 1 when guiding", c.GuideWeight, c.GuideSteps)
	}
	if scale := c.ScaleEps.Or(DefaultScaleEps); !(c.SNRX > 0) || !(c.SNRA > 0) || !(scale >= 0) || math.IsInf(scale, 0) {
		bad("r_X = %v, r_A = %v, scale_eps = %v: want r > 0, finite scale ≥ 0", c.SNRX, c.SNRA, scale)
	}
	return errors.Join(errs...)
}

// Step is one iteration of the reverse grid: the sub-steps run at time T and
// the predictor integrates over Dt.
type Step struct{ T, Dt float64 }

// grid returns the reverse time grid of validated, defaulted options.
func (o DebiasOptions) grid() []Step {
	n := o.Steps
	g := make([]Step, n)
	switch o.Schedule {
	case ScheduleSpan:
		dt := o.TStart / float64(n)
		for i := range n {
			g[i] = Step{T: float64(n-i) * dt, Dt: dt}
		}
	case ScheduleGDSSFull:
		for i := range n {
			tt := 1.0
			if n > 1 {
				tt = 1 - float64(i)*(1-o.GDSSEps)/float64(n-1)
			}
			g[i] = Step{T: tt, Dt: 1 / float64(n)}
		}
	default:
		for i := range n {
			g[i] = Step{T: float64(n-i) * o.DtRev, Dt: o.DtRev}
		}
	}
	return g
}

// BatchScoreModel is an optional extension of ScoreModel: PredictBatch
// evaluates several subgraphs at the same time t in one call (item i has
// ns[i] nodes and d features; the slices are as in Predict). Results must
// equal per-subgraph Predict calls, so that a batched run equals the
// sequential one.
type BatchScoreModel interface {
	ScoreModel
	PredictBatch(t float64, xs, as [][]float32, ns []int, d int, outXs, outAs [][]float32) error
}

// DebiasItem is one subgraph of a batched debiasing run: n nodes, the clean
// state (X0 n×d, A0 n×n), its own generator and the destinations (which may
// be X0 and A0 for an in-place update).
type DebiasItem struct {
	N          int
	X0, A0     []float32
	Rng        *rand.Rand
	DstX, DstA []float32
}

// itemBuf is the per-item scratch of a run.
type itemBuf struct {
	outX, outA []float32 // model outputs, converted to scores in place
	zX, zA     []float32 // noise
	gX, gA     []float32 // guidance gradients
}

// Debiaser runs the reverse PC sampler on one subgraph (Run) or on a batch
// of subgraphs in lockstep (RunBatch). It keeps scratch buffers: use one
// Debiaser per goroutine.
type Debiaser struct {
	opt  DebiasOptions
	grid []Step
	bufs []itemBuf
	// argument slices for PredictBatch
	xs, as, outXs, outAs [][]float32
	ns                   []int
	one                  [1]DebiasItem
	guide                Guide
}

// SetGuide sets the guide used when the options' GuideWeight is positive
// (nil: no guidance).
func (p *Debiaser) SetGuide(g Guide) { p.guide = g }

// NewDebiaser validates opt and returns a Debiaser.
func NewDebiaser(opt DebiasOptions) (*Debiaser, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	o := opt.withDefaults()
	return &Debiaser{opt: o, grid: o.grid()}, nil
}

// Options returns the effective (defaulted) options.
func (p *Debiaser) Options() DebiasOptions { return p.opt }

// Grid returns the reverse time grid, in the order it is run. The caller must
// not modify it.
func (p *Debiaser) Grid() []Step { return p.grid }

// Run debiases one subgraph with n nodes and d features, writing the result
// into dstX (n×d) and dstA (n×n). dstX may be x0 and dstA may be a0 (in-place
// update); other overlaps are not allowed. The output is the raw sampler
// state: apply PostProcess to dstA afterwards.
//
// Every iteration j of Grid() (time t, step Δt) runs, in the configured
// order:
//
//   - predictor (Euler–Maruyama, X and A from the same state): with
//     S = −out/σ_t and β = β(t),
//     X̄ = X + Δt·(½β·X + β·S_X), X ← X̄ + √(βΔt)·z_X, and A likewise on its
//     off-diagonal entries with symmetric z_A;
//   - corrector (one Langevin step, per-subgraph norms): with fresh z and
//     ω = 2α(t)·(r·‖z‖/‖S‖)², X̄ = X + ω·S_X, X ← X̄ + √(2ω)·scale_eps·z;
//     skipped when ‖S‖ < MinScoreNorm; A likewise with its own ω_A and r_A.
//
// On the last iteration neither sub-step adds noise (the means are
// returned). A single-node subgraph skips the A part entirely.
//
// Randomness: InitForward first draws ε_X then ε_A; each noisy predictor
// draws z_X then z_A; each corrector draws z_X then z_A (also on the last
// iteration, since ω needs ‖z‖). The consumption therefore depends only on
// the shapes and the options, never on the model's outputs. The caller seeds
// rng per subgraph (RootSeed with PurposeDebias).
func (p *Debiaser) Run(model ScoreModel, x0, a0 []float32, n, d int, rng *rand.Rand, dstX, dstA []float32) error {
	p.one[0] = DebiasItem{N: n, X0: x0, A0: a0, Rng: rng, DstX: dstX, DstA: dstA}
	err := p.RunBatch(context.Background(), model, p.one[:], d)
	p.one[0] = DebiasItem{}
	return err
}

// RunBatch debiases several subgraphs with d features each, in lockstep:
// every sub-step evaluates the model on all items (with one PredictBatch
// call if model implements BatchScoreModel) and then updates each item with
// its own generator. Each item's result is identical to Run on that item
// alone with the same generator state. ctx is checked between iterations.
func (p *Debiaser) RunBatch(ctx context.Context, model ScoreModel, items []DebiasItem, d int) error {
	for k := range items {
		it := &items[k]
		n := it.N
		if n < 1 || d < 0 || len(it.X0) != n*d || len(it.A0) != n*n || len(it.DstX) != n*d || len(it.DstA) != n*n || it.Rng == nil {
			return fmt.Errorf("%w: debias item %d: N=%d D=%d with |x0|=%d |a0|=%d |dstX|=%d |dstA|=%d (rng set: %t)",
				ErrShape, k, n, d, len(it.X0), len(it.A0), len(it.DstX), len(it.DstA), it.Rng != nil)
		}
	}
	o := &p.opt
	p.bufs = resize(p.bufs, len(items))
	for k := range items {
		it, b := &items[k], &p.bufs[k]
		n := it.N
		b.outX = resize(b.outX, n*d)
		b.outA = resize(b.outA, n*n)
		b.zX = resize(b.zX, n*d)
		b.zA = resize(b.zA, n*n)
		x, a := it.DstX, it.DstA
		copy(x, it.X0)
		copy(a, it.A0)
		zeroDiag(a, n)
		if o.Init == InitForward {
			t0 := p.grid[0].T
			FillNormal(it.Rng, b.zX)
			FillSymNormal(it.Rng, n, b.zA)
			mX, sX := o.SDEX.Mean(t0), o.SDEX.Std(t0)
			for i := range x {
				x[i] = float32(mX*float64(x[i]) + sX*float64(b.zX[i]))
			}
			mA, sA := o.SDEA.Mean(t0), o.SDEA.Std(t0)
			for i := range a {
				a[i] = float32(mA*float64(a[i]) + sA*float64(b.zA[i]))
			}
		}
	}
	for j, st := range p.grid {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("debias: %w", err)
		}
		noise := j < len(p.grid)-1
		var err error
		if o.Reverse == ReverseODE {
			err = p.odeStep(model, st, items, d)
		} else if o.Order == OrderCP {
			if err = p.corrector(model, st.T, items, d, noise); err == nil {
				err = p.predictor(model, st, items, d, noise)
			}
		} else {
			if err = p.predictor(model, st, items, d, noise); err == nil {
				err = p.corrector(model, st.T, items, d, noise)
			}
		}
		if err == nil {
			err = p.guideStep(items, d)
		}
		if err != nil {
			return fmt.Errorf("debias step %d (t=%g): %w", j, st.T, err)
		}
	}
	for k := range items {
		for _, v := range items[k].DstX {
			if !finite32(v) {
				return fmt.Errorf("debias item %d: %w in X", k, ErrNonFinite)
			}
		}
		for _, v := range items[k].DstA {
			if !finite32(v) {
				return fmt.Errorf("debias item %d: %w in A", k, ErrNonFinite)
			}
		}
	}
	return nil
}

// scores runs the model on every item's current state and turns the outputs
// into scores in place: S = −out/σ_t (or the raw output under the rawScore
// test switch).
func (p *Debiaser) scores(model ScoreModel, t float64, items []DebiasItem, d int) error {
	if bm, ok := model.(BatchScoreModel); ok && len(items) > 1 {
		p.xs, p.as, p.outXs, p.outAs, p.ns = p.xs[:0], p.as[:0], p.outXs[:0], p.outAs[:0], p.ns[:0]
		for k := range items {
			p.xs = append(p.xs, items[k].DstX)
			p.as = append(p.as, items[k].DstA)
			p.outXs = append(p.outXs, p.bufs[k].outX)
			p.outAs = append(p.outAs, p.bufs[k].outA)
			p.ns = append(p.ns, items[k].N)
		}
		err := bm.PredictBatch(t, p.xs, p.as, p.ns, d, p.outXs, p.outAs)
		clear(p.xs)
		clear(p.as)
		if err != nil {
			return fmt.Errorf("score model: %w", err)
		}
	} else {
		for k := range items {
			it, b := &items[k], &p.bufs[k]
			if err := model.Predict(t, it.DstX, it.DstA, it.N, d, b.outX, b.outA); err != nil {
				return fmt.Errorf("score model (item %d): %w", k, err)
			}
		}
	}
	if p.opt.rawScore {
		return nil
	}
	sX, sA := p.opt.SDEX.Std(t), p.opt.SDEA.Std(t)
	for k := range items {
		toScore(p.bufs[k].outX, sX)
		toScore(p.bufs[k].outA, sA)
	}
	return nil
}

func toScore(out []float32, sigma float64) {
	k := -1 / sigma
	for i, v := range out {
		out[i] = float32(k * float64(v))
	}
}

func (p *Debiaser) predictor(model ScoreModel, st Step, items []DebiasItem, d int, noise bool) error {
	if err := p.scores(model, st.T, items, d); err != nil {
		return err
	}
	o := &p.opt
	bX, bA := o.SDEX.Beta(st.T), o.SDEA.Beta(st.T)
	for k := range items {
		it, b := &items[k], &p.bufs[k]
		n, x, a := it.N, it.DstX, it.DstA
		eulerStep(x, b.outX, bX, st.Dt)
		if n > 1 {
			eulerStep(a, b.outA, bA, st.Dt)
			zeroDiag(a, n)
		}
		if !noise {
			continue
		}
		FillNormal(it.Rng, b.zX)
		addScaled(x, b.zX, math.Sqrt(bX*st.Dt))
		if n > 1 {
			FillSymNormal(it.Rng, n, b.zA)
			addScaled(a, b.zA, math.Sqrt(bA*st.Dt))
		}
	}
	return nil
}

func (p *Debiaser) corrector(model ScoreModel, t float64, items []DebiasItem, d int, noise bool) error {
	if p.opt.NoCorrector {
		return nil
	}
	if err := p.scores(model, t, items, d); err != nil {
		return err
	}
	o := &p.opt
	alphaX, alphaA := o.SDEX.LangevinAlpha(t), o.SDEA.LangevinAlpha(t)
	for k := range items {
		it, b := &items[k], &p.bufs[k]
		n := it.N
		FillNormal(it.Rng, b.zX)
		langevinStep(it.DstX, b.outX, b.zX, alphaX, o.SNRX, o.ScaleEps.Or(DefaultScaleEps), noise)
		if n > 1 {
			FillSymNormal(it.Rng, n, b.zA)
			langevinStep(it.DstA, b.outA, b.zA, alphaA, o.SNRA, o.ScaleEps.Or(DefaultScaleEps), noise)
			zeroDiag(it.DstA, n)
		}
	}
	return nil
}

// odeStep is one probability-flow ODE step x ← x + Δt·(½β·x + ½β·S) on
// X and A.
func (p *Debiaser) odeStep(model ScoreModel, st Step, items []DebiasItem, d int) error {
	if err := p.scores(model, st.T, items, d); err != nil {
		return err
	}
	o := &p.opt
	bX, bA := o.SDEX.Beta(st.T), o.SDEA.Beta(st.T)
	for k := range items {
		it, b := &items[k], &p.bufs[k]
		scale(b.outX, 0.5)
		eulerStep(it.DstX, b.outX, bX, st.Dt)
		if it.N > 1 {
			scale(b.outA, 0.5)
			eulerStep(it.DstA, b.outA, bA, st.Dt)
			zeroDiag(it.DstA, it.N)
		}
	}
	return nil
}

func scale(x []float32, c float32) {
	for i := range x {
		x[i] *= c
	}
}

// guideStep applies up to GuideSteps Polyak steps of the guide to every
// item: α = GuideWeight·L/(‖∇_X L‖² [+ ‖∇_A L‖²]), X ← X − α∇_X L (and A
// likewise when GuideA). It stops for an item once L = 0.
func (p *Debiaser) guideStep(items []DebiasItem, d int) error {
	o := &p.opt
	if p.guide == nil || !(o.GuideWeight > 0) {
		return nil
	}
	for k := range items {
		it, b := &items[k], &p.bufs[k]
		n := it.N
		b.gX = resize(b.gX, n*d)
		b.gA = resize(b.gA, n*n)
		for range o.GuideSteps {
			l, err := p.guide.Grad(it.DstX, it.DstA, n, d, b.gX, b.gA)
			if err != nil {
				return fmt.Errorf("guide (item %d): %w", k, err)
			}
			if !(l > 0) {
				break
			}
			g2 := Norm(b.gX)
			g2 *= g2
			if o.GuideA {
				na := Norm(b.gA)
				g2 += na * na
			}
			if !(g2 > MinScoreNorm) {
				break
			}
			alpha := o.GuideWeight * l / g2
			addScaled(it.DstX, b.gX, -alpha)
			if o.GuideA && n > 1 {
				addScaled(it.DstA, b.gA, -alpha)
				zeroDiag(it.DstA, n)
			}
		}
	}
	return nil
}

// eulerStep applies the predictor mean x ← x + dt·(½β·x + β·s).
func eulerStep(x, s []float32, beta, dt float64) {
	for i, v := range x {
		xv := float64(v)
		x[i] = float32(xv + dt*(0.5*beta*xv+beta*float64(s[i])))
	}
}

func addScaled(x, z []float32, c float64) {
	for i := range x {
		x[i] = float32(float64(x[i]) + c*float64(z[i]))
	}
}

func zeroDiag(a []float32, n int) {
	for i := range n {
		a[i*n+i] = 0
	}
}

// langevinStep applies one Langevin update to x with score s and noise z:
// ω = 2α·(r·‖z‖/‖s‖)², x ← x + ω·s (+ √(2ω)·scale·z when noise). It returns
// ω, or 0 when ‖s‖ < MinScoreNorm (x unchanged).
func langevinStep(x, s, z []float32, alpha, snr, scale float64, noise bool) float64 {
	ns := Norm(s)
	if ns < MinScoreNorm {
		return 0
	}
	r := snr * Norm(z) / ns
	omega := 2 * alpha * r * r
	if noise {
		c := math.Sqrt(2*omega) * scale
		for i, v := range x {
			x[i] = float32(float64(v) + omega*float64(s[i]) + c*float64(z[i]))
		}
	} else {
		for i, v := range x {
			x[i] = float32(float64(v) + omega*float64(s[i]))
		}
	}
	return omega
}
