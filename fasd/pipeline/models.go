package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/nn"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// ErrModels marks a model bundle that cannot be decoded or does not fit the
// data it is applied to.
var ErrModels = errors.New("pipeline: bad model bundle")

// ModelsFormat is the version of the bundle written by Models.MarshalBinary.
const ModelsFormat = 1

// modelsFormatFellBack is the format of a bundle with Models.FellBack set:
// a reader that predates the flag refuses it rather than serve the
// debiased classifier the run rejected.
const modelsFormatFellBack = 2

var modelsMagic = [8]byte{'F', 'A', 'S', 'D', 'M', 'D', 'L', 0}

// Models are the trained networks of one run: g_sen, s_θ, s_φ and f, with
// the effective config and the feature schema they were trained on. Any of
// GSen, ScoreX/ScoreA may be nil (w/o Fairness has no g_sen, w/o Diffusion no
// score networks); F is always set in a finished run. The score parameters
// are the ones the sampler uses (the EMA weights when score.use_ema is set,
// else the raw final weights); F holds the selected epoch's weights.
//
// Models are read-only after training: several Engines may share them.
type Models struct {
	Config Config
	// D is the number of node features; FeatureHash identifies the feature
	// names in order (FeatureHash of the caller's names).
	D           int
	FeatureHash string
	GSen        *nn.GCNNet[float32]
	ScoreX      *nn.ScoreX[float32]
	ScoreA      *nn.ScoreA[float32]
	F           *nn.GCNNet[float32]
	// FBase is the w/o-Diffusion classifier (f trained on the clean
	// subgraphs with the same seeds), or nil; query engines use it as the
	// unfair reference prediction.
	FBase *nn.GCNNet[float32]
	// Guides are the linear guides of debias.guide_net = "linear" or
	// "linear_agg" (w_r, b_r per round; w_r over D or 2D inputs), or nil.
	Guides []*nn.Param[float32]
	// Threshold is the decision threshold on P(1) the run chose
	// (classifier.decision, from training and validation labels only):
	// class 1 iff P(1) > Threshold. Zero (bundles written before it
	// existed) means 0.5.
	Threshold float64
	// FellBack says that classifier.fallback found the debiasing did not
	// pay on the validation nodes (ClassifierConfig.FallbackFASD): the served
	// FASD prediction is FBase on the clean subgraph, which the bundle
	// then must hold, and no subgraph is debiased. F and the score
	// networks stay in the bundle for inspection.
	FellBack bool
}

// ClassOf is the class the bundle's decision rule gives to P(1).
func (m *Models) ClassOf(p1 float64) int8 {
	t := m.Threshold
	if !(t > 0 && t < 1) {
		t = 0.5
	}
	return fasd.PredictAt(p1, t)
}

// FeatureHash returns the schema hash of an ordered list of feature names:
// the hex SHA-256 of the names joined by NUL bytes.
func FeatureHash(names []string) string {
	h := sha256.Sum256([]byte(strings.Join(names, "\x00")))
	return hex.EncodeToString(h[:])
}

// gsenArch is g_sen's architecture for d features under cfg (§3):
// GCN h → GCN h/2 → FC h/4 → 1 logit (64/32/16 with the default h = 64).
func gsenArch(cfg *Config, d int) nn.GCNNetConfig {
	h := cfg.Sens.Hidden
	return nn.GCNNetConfig{In: d, GCN: []int{h, max(1, h/2)}, FC: []int{max(1, h/4)}, Out: 1, Dropout: cfg.Sens.Dropout}
}

// classifierArch is f's architecture (§10): GCN h → GCN h → FC h → 2 (or
// the shorter head classifier.head names), the GCN layers with root
// weights under classifier.arch = "root" (under "auto" the paper's
// layers: the arm trained first, see trainClassifierAuto).
func classifierArch(cfg *Config, d int) nn.GCNNetConfig {
	return classifierArchRoot(cfg, d, Arch(cfg.Classifier.Arch) == ArchRoot)
}

// classifierArchRoot is classifierArch with the root weights on or off.
func classifierArchRoot(cfg *Config, d int, root bool) nn.GCNNetConfig {
	h := cfg.Classifier.Hidden
	c := nn.GCNNetConfig{In: d, GCN: []int{h, h}, FC: []int{h}, Out: 2, Dropout: cfg.Classifier.Dropout, Root: root}
	switch Head(cfg.Classifier.Head) {
	case HeadLinear:
		c.FC = nil
	case HeadGCN:
		c.GCN, c.FC, c.GCNHead = []int{h}, nil, true
	}
	return c
}

func scoreXArch(cfg *Config, d int) nn.ScoreXConfig {
	c := nn.DefaultScoreXConfig(d)
	if cfg.Score.MLPAct == ActELU {
		c.Act = autodiff.ELU
	}
	return c
}

// newModels builds freshly initialised networks for the parts named.
func newModels(cfg *Config, d int, gsen, score, f, fbase bool, rng *rand.Rand) (*Models, error) {
	m := &Models{Config: *cfg, D: d}
	var err error
	if gsen {
		if m.GSen, err = nn.NewGCNNet[float32](gsenArch(cfg, d), rng); err != nil {
			return nil, err
		}
	}
	if score {
		if m.ScoreX, err = nn.NewScoreX[float32](scoreXArch(cfg, d), rng); err != nil {
			return nil, err
		}
		if m.ScoreA, err = nn.NewScoreA[float32](nn.DefaultScoreAConfig(d), rng); err != nil {
			return nil, err
		}
	}
	if f {
		if m.F, err = nn.NewGCNNet[float32](classifierArch(cfg, d), rng); err != nil {
			return nil, err
		}
	}
	if fbase {
		if m.FBase, err = nn.NewGCNNet[float32](classifierArch(cfg, d), rng); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// bundleHeader is the JSON header of a marshalled bundle.
type bundleHeader struct {
	Format      int      `json:"format"`
	Config      string   `json:"config"` // TOML
	D           int      `json:"d"`
	FeatureHash string   `json:"feature_hash"`
	Parts       []string `json:"parts"` // subset of gsen, score_x, score_a, f, f_base, guides, in this order
	// Threshold is Models.Threshold; absent in older bundles (0.5).
	Threshold *float64 `json:"threshold,omitempty"`
	// FellBack is Models.FellBack; absent when false.
	FellBack bool `json:"fell_back,omitempty"`
	// FRoot and FBaseRoot say whether f and f_base have root weights;
	// written under classifier.arch = "auto" alone, where each network
	// made its own choice (otherwise the config says).
	FRoot     *bool `json:"f_root,omitempty"`
	FBaseRoot *bool `json:"f_base_root,omitempty"`
}

// MarshalBinary encodes the bundle:
//
//	magic   [8]byte "FASDMDL\x00"
//	hdrLen  uint32, header JSON {format, config (TOML), d, feature_hash, parts}
//	per part: len uint64, nn.SaveParams bytes
//	sha256  [32]byte of every byte above
//
// (integers little-endian).
func (m *Models) MarshalBinary() ([]byte, error) {
	if m.FellBack && m.FBase == nil {
		return nil, fmt.Errorf("%w: fell back to the w/o-Diffusion classifier, which the models lack", ErrModels)
	}
	hdr := bundleHeader{Format: ModelsFormat, Config: m.Config.TOML(), D: m.D, FeatureHash: m.FeatureHash, FellBack: m.FellBack}
	if m.FellBack {
		hdr.Format = modelsFormatFellBack
	}
	if m.Threshold > 0 && m.Threshold < 1 {
		t := m.Threshold
		hdr.Threshold = &t
	}
	if Arch(m.Config.Classifier.Arch) == ArchAuto {
		if m.F != nil {
			r := m.F.Config.Root
			hdr.FRoot = &r
		}
		if m.FBase != nil {
			r := m.FBase.Config.Root
			hdr.FBaseRoot = &r
		}
	}
	var parts [][]*nn.Param[float32]
	for _, p := range m.parts() {
		hdr.Parts = append(hdr.Parts, p.name)
		parts = append(parts, p.params)
	}
	hj, err := json.Marshal(hdr)
	if err != nil {
		return nil, fmt.Errorf("pipeline: encode models header: %w", err)
	}
	var buf bytes.Buffer
	buf.Write(modelsMagic[:])
	le := binary.LittleEndian
	buf.Write(le.AppendUint32(nil, uint32(len(hj))))
	buf.Write(hj)
	for _, ps := range parts {
		var pb bytes.Buffer
		if err := nn.SaveParams(&pb, ps); err != nil {
			return nil, fmt.Errorf("pipeline: encode models: %w", err)
		}
		buf.Write(le.AppendUint64(nil, uint64(pb.Len())))
		buf.Write(pb.Bytes())
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes(), nil
}

// resolveArch rebuilds f and f_base with the architecture the header
// records for each under classifier.arch = "auto" (newModels built the
// paper's); a header without the record for a stored network is refused.
func (m *Models) resolveArch(hdr *bundleHeader, has map[string]bool) error {
	auto := Arch(m.Config.Classifier.Arch) == ArchAuto
	if !auto {
		if hdr.FRoot != nil || hdr.FBaseRoot != nil {
			return fmt.Errorf("%w: f_root or f_base_root with classifier.arch = %q", ErrModels, m.Config.Classifier.Arch)
		}
		return nil
	}
	for _, n := range []struct {
		part string
		root *bool
		net  **nn.GCNNet[float32]
	}{{"f", hdr.FRoot, &m.F}, {"f_base", hdr.FBaseRoot, &m.FBase}} {
		if !has[n.part] {
			continue
		}
		if n.root == nil {
			return fmt.Errorf("%w: classifier.arch = \"auto\" without the architecture of %s", ErrModels, n.part)
		}
		if !*n.root {
			continue
		}
		net, err := nn.NewGCNNet[float32](classifierArchRoot(&m.Config, m.D, true), rand.New(rand.NewPCG(0, 0)))
		if err != nil {
			return fmt.Errorf("%w: %w", ErrModels, err)
		}
		*n.net = net
	}
	return nil
}

type modelPart struct {
	name   string
	params []*nn.Param[float32]
}

func (m *Models) parts() []modelPart {
	var out []modelPart
	if m.GSen != nil {
		out = append(out, modelPart{"gsen", m.GSen.Params()})
	}
	if m.ScoreX != nil {
		out = append(out, modelPart{"score_x", m.ScoreX.Params()})
	}
	if m.ScoreA != nil {
		out = append(out, modelPart{"score_a", m.ScoreA.Params()})
	}
	if m.F != nil {
		out = append(out, modelPart{"f", m.F.Params()})
	}
	if m.FBase != nil {
		out = append(out, modelPart{"f_base", m.FBase.Params()})
	}
	if r := guideRounds(&m.Config); r > 0 && len(m.Guides) >= 2*r {
		out = append(out, modelPart{"guides", m.Guides[:2*r]})
	}
	return out
}

// UnmarshalModels decodes a bundle written by MarshalBinary, rebuilding the
// networks from the stored config. Errors wrap ErrModels (or nn's loading
// errors).
func UnmarshalModels(b []byte) (*Models, error) {
	if len(b) < 8+4+32 || !bytes.Equal(b[:8], modelsMagic[:]) {
		return nil, fmt.Errorf("%w: bad magic or truncated (%d bytes)", ErrModels, len(b))
	}
	body, sum := b[:len(b)-32], b[len(b)-32:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrModels)
	}
	le := binary.LittleEndian
	hl := int(le.Uint32(body[8:12]))
	if 12+hl > len(body) {
		return nil, fmt.Errorf("%w: header length %d beyond end", ErrModels, hl)
	}
	var hdr bundleHeader
	if err := json.Unmarshal(body[12:12+hl], &hdr); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrModels, err)
	}
	if want := ModelsFormat; hdr.FellBack {
		want = modelsFormatFellBack
		if hdr.Format != want {
			return nil, fmt.Errorf("%w: format %d with fell_back, want %d", ErrModels, hdr.Format, want)
		}
	} else if hdr.Format != want {
		return nil, fmt.Errorf("%w: format %d, want %d", ErrModels, hdr.Format, want)
	}
	// Bundles written before a key existed decode with that key's
	// behaviour of the time: the paper's epochs schedule and reverse SDE.
	cfg := Config{
		Sample:     SampleConfig{Scope: string(SampleFixed)},
		Classifier: ClassifierConfig{Decision: string(DecisionHalf), Select: string(SelectAcc), Readout: string(ReadoutMean), FallbackFASD: string(FallbackOff), Arch: string(ArchGCN), Head: string(HeadMLP)},
		Score:      ScoreConfig{Schedule: "epochs", Evals: 20, HoldOut: 0.1},
		Debias:     DebiasConfig{Reverse: "sde", GuideSteps: 3, GuideTol: 0.05, GuideNet: "gsen", GuideRounds: 1},
	}
	// f's budget schedule came later still: its keys' defaults.
	cfg.Classifier.Schedule, cfg.Classifier.Evals, cfg.Classifier.EvalPatience, cfg.Classifier.ValCap = ClassEpochs, 20, 5, 2000
	if err := cfg.LoadTOML("bundle config", strings.NewReader(hdr.Config)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModels, err)
	}
	if hdr.D < 1 || hdr.D > 1<<24 {
		return nil, fmt.Errorf("%w: feature dimension %d", ErrModels, hdr.D)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModels, err)
	}
	has := map[string]bool{}
	for _, p := range hdr.Parts {
		has[p] = true
	}
	// Refuse headers whose networks could not fit in the bundle before
	// allocating them (a lower bound on the parameter bytes of each part).
	d, hs, hc := int64(hdr.D), int64(min(cfg.Sens.Hidden, 1<<24)), int64(min(cfg.Classifier.Hidden, 1<<24))
	need := 4 * d
	if has["gsen"] {
		need = max(need, 4*(d*hs+hs*max(1, hs/2)))
	}
	if has["f"] || has["f_base"] {
		need = max(need, 4*(d*hc+hc*hc))
	}
	if has["score_x"] || has["score_a"] {
		need = max(need, 16*(d+96)*(d+96))
	}
	if need > int64(len(b)) {
		return nil, fmt.Errorf("%w: header describes networks larger than the bundle (%d bytes)", ErrModels, len(b))
	}
	// Initialisation values are overwritten; any generator will do.
	m, err := newModels(&cfg, hdr.D, has["gsen"], has["score_x"] && has["score_a"], has["f"], has["f_base"], rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModels, err)
	}
	m.FeatureHash = hdr.FeatureHash
	if err := m.resolveArch(&hdr, has); err != nil {
		return nil, err
	}
	if hdr.FellBack && !has["f_base"] {
		return nil, fmt.Errorf("%w: fell_back without the w/o-Diffusion classifier f_base", ErrModels)
	}
	m.FellBack = hdr.FellBack
	if t := hdr.Threshold; t != nil {
		if !(*t > 0 && *t < 1) {
			return nil, fmt.Errorf("%w: decision threshold %v, want in (0, 1)", ErrModels, *t)
		}
		m.Threshold = *t
	}
	if has["guides"] {
		if guideRounds(&cfg) == 0 {
			return nil, fmt.Errorf("%w: guides stored but the config asks for none", ErrModels)
		}
		m.Guides = newGuideParams(guideRounds(&cfg), guideWidth(cfg.Debias.GuideNet, hdr.D))
	}
	parts := m.parts()
	if len(parts) != len(hdr.Parts) {
		return nil, fmt.Errorf("%w: parts %v", ErrModels, hdr.Parts)
	}
	off := 12 + hl
	for i, p := range parts {
		if p.name != hdr.Parts[i] {
			return nil, fmt.Errorf("%w: part %d is %q, want %q", ErrModels, i, hdr.Parts[i], p.name)
		}
		if off+8 > len(body) {
			return nil, fmt.Errorf("%w: truncated before part %q", ErrModels, p.name)
		}
		n := le.Uint64(body[off:])
		off += 8
		if n > uint64(len(body)-off) {
			return nil, fmt.Errorf("%w: part %q length %d beyond end", ErrModels, p.name, n)
		}
		if err := nn.LoadParams(bytes.NewReader(body[off:off+int(n)]), p.params); err != nil {
			return nil, fmt.Errorf("pipeline: load part %q: %w", p.name, err)
		}
		off += int(n)
	}
	if off != len(body) {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrModels, len(body)-off)
	}
	return m, nil
}

// Engine applies trained Models to single subgraphs: the debiasing of §8–§9
// and f's class probabilities of §10. The pipeline itself debiases and
// classifies through Engines, so a query engine that loads the Models gets
// exactly the same computation. An Engine keeps scratch buffers and tapes:
// it is not safe for concurrent use (make one per goroutine); the Models may
// be shared.
type Engine struct {
	m    *Models
	deb  *fasd.Debiaser
	post fasd.PostOptions
	tape *autodiff.Tape[float32]
	mask []float32
	sm   scoreModel
}

// NewEngine returns an Engine over m with the debiasing options of
// m.Config.
func (m *Models) NewEngine() (*Engine, error) {
	e := &Engine{m: m, tape: autodiff.NewTape[float32]()}
	if m.ScoreX != nil && m.ScoreA != nil {
		opt, post, err := debiasOptions(&m.Config)
		if err != nil {
			return nil, err
		}
		if e.deb, err = fasd.NewDebiaser(opt); err != nil {
			return nil, err
		}
		e.post = post
		e.sm = scoreModel{sx: m.ScoreX, sa: m.ScoreA, tape: e.tape}
		if opt.GuideWeight > 0 {
			switch {
			case linearGuideNet(m.Config.Debias.GuideNet) && len(m.Guides) >= 2*m.Config.Debias.GuideRounds:
				// The guides are fitted in sequence, so the first rounds of
				// a longer sequence are the guides of a shorter one.
				e.deb.SetGuide(newLinearGuide(m.Guides[:2*m.Config.Debias.GuideRounds], m.Config.Debias.GuideTol, m.Config.Debias.GuideNet))
			case m.Config.Debias.GuideNet == GuideGSen && m.GSen != nil:
				e.deb.SetGuide(&chanceGuide{net: m.GSen, tol: m.Config.Debias.GuideTol, tape: autodiff.NewTape[float32]()})
			default:
				return nil, fmt.Errorf("%w: debias.guide_weight > 0 with guide_net %q, but the models hold no such guide", ErrModels, m.Config.Debias.GuideNet)
			}
		}
	}
	return e, nil
}

// chanceGuide is the fairness guide of the reverse run: g_sen's output
// pushed toward chance. L = Σ_u [BCE(z_u, ½) − log 2] over the nodes whose
// P(s = 1) = σ(z_u) is more than tol away from ½ (the others are done), so
// L = 0 once every node is within tol of chance. Its gradient is g_sen's
// frozen-weight gradient in eval mode.
type chanceGuide struct {
	net          *nn.GCNNet[float32]
	tol          float64
	tape         *autodiff.Tape[float32]
	mask, s, wgt []float32
	gx, ga       tensor.Dense[float32]
}

func (g *chanceGuide) Grad(x, a []float32, n, d int, gx, ga []float32) (float64, error) {
	t := g.tape
	t.Reset()
	t.SetNoGrad(true)
	g.mask = ones(g.mask, n)
	xt, at := tensor.FromSlice(x, 1, n, d), tensor.FromSlice(a, 1, n, n)
	z := g.net.Forward(t, t.Input(xt, false), t.Input(at, false), g.mask, nil).Value.Data
	g.s, g.wgt = resizeF(g.s, n), resizeF(g.wgt, n)
	var l float64
	active := 0
	for u := 0; u < n; u++ {
		g.s[u], g.wgt[u] = 0.5, 0
		zu := float64(z[u])
		if math.Abs(1/(1+math.Exp(-zu))-0.5) > g.tol {
			g.wgt[u] = 1
			active++
			// BCE(z, ½) − log 2 = softplus(z) − z/2 − log 2 = log cosh(z/2).
			l += math.Abs(zu)/2 + math.Log1p(math.Exp(-math.Abs(zu))) - math.Ln2
		}
	}
	if active == 0 {
		return 0, nil
	}
	g.net.SensitiveGrads(t, xt, at, g.mask, g.s, g.wgt, &g.gx, &g.ga)
	copy(gx, g.gx.Data)
	copy(ga, g.ga.Data)
	return l, nil
}

// debiasOptions maps the config to the sampler and post-processing options.
func debiasOptions(cfg *Config) (fasd.DebiasOptions, fasd.PostOptions, error) {
	db := cfg.Debias
	o := fasd.DebiasOptions{
		SDEX:   fasd.VPSDE{BetaMin: cfg.Diffusion.BetaMinX, BetaMax: cfg.Diffusion.BetaMaxX, NumScales: 1000},
		SDEA:   fasd.VPSDE{BetaMin: cfg.Diffusion.BetaMinA, BetaMax: cfg.Diffusion.BetaMaxA, NumScales: 1000},
		Steps:  db.Steps,
		DtRev:  db.DtRev,
		TStart: db.TStart,
		SNRX:   db.SNRX,
		SNRA:   db.SNRA,
		// The config always holds explicit values (the presets fill
		// them), so zero means zero here, not the sampler's default.
		ScaleEps: fasd.Some(db.ScaleEps),
	}
	var errs []error
	parse := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	o.Schedule, err = fasd.ParseName[fasd.Schedule](db.Schedule)
	parse(err)
	o.Order, err = fasd.ParseName[fasd.Order](db.Order)
	parse(err)
	o.Init, err = fasd.ParseName[fasd.Init](db.Init)
	parse(err)
	o.Reverse, err = fasd.ParseName[fasd.Reverse](db.Reverse)
	parse(err)
	if err := errors.Join(errs...); err != nil {
		return o, fasd.PostOptions{}, fmt.Errorf("%w: debias: %w", ErrConfig, err)
	}
	o.GuideWeight, o.GuideSteps, o.GuideA = db.GuideWeight, db.GuideSteps, db.GuideA
	post := fasd.PostOptions{Tau: fasd.Some(db.Tau), Clip01: db.Post == PostClip01, Binarize: db.Post == PostBinarize}
	if err := o.Validate(); err != nil {
		return o, post, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return o, post, nil
}

// CanDebias reports whether the models hold score networks.
func (e *Engine) CanDebias() bool { return e.deb != nil }

// Models returns the models the engine applies.
func (e *Engine) Models() *Models { return e.m }

// Debias debiases one subgraph (n nodes, the Models' D features; x is n×D,
// a is n×n symmetric with a zero diagonal) with the reverse PC sampler and
// post-processing, writing X̃ into dstX and Ã into dstA (which may alias x
// and a). Seed rng per root with fasd.RootSeed(seed, fasd.PurposeDebias,
// root) to reproduce the pipeline's result.
func (e *Engine) Debias(x, a []float32, n int, rng *rand.Rand, dstX, dstA []float32) error {
	if e.deb == nil {
		return fmt.Errorf("%w: no score networks to debias with", ErrModels)
	}
	if err := e.deb.Run(&e.sm, x, a, n, e.m.D, rng, dstX, dstA); err != nil {
		return err
	}
	return fasd.PostProcess(dstA, n, &e.post)
}

// DebiasBatch debiases several subgraphs in lockstep with one padded
// model evaluation per sub-step (fasd.Debiaser.RunBatch); every item's
// result equals Debias on that item alone with the same generator. Each
// item is post-processed in place in its DstA.
func (e *Engine) DebiasBatch(ctx context.Context, items []fasd.DebiasItem) error {
	if e.deb == nil {
		return fmt.Errorf("%w: no score networks to debias with", ErrModels)
	}
	if err := e.deb.RunBatch(ctx, &e.sm, items, e.m.D); err != nil {
		return err
	}
	for _, it := range items {
		if err := fasd.PostProcess(it.DstA, it.N, &e.post); err != nil {
			return err
		}
	}
	return nil
}

// Probs writes f's class probabilities (n×2, row-major, softmax of the
// logits, eval mode) of one (debiased) subgraph into dst.
func (e *Engine) Probs(x, a []float32, n int, dst []float32) error {
	return e.probs(e.m.F, x, a, n, dst)
}

// BaseProbs is Probs with the w/o-Diffusion classifier FBase, meant for the
// clean subgraph.
func (e *Engine) BaseProbs(x, a []float32, n int, dst []float32) error {
	if e.m.FBase == nil {
		return fmt.Errorf("%w: no w/o-Diffusion classifier", ErrModels)
	}
	return e.probs(e.m.FBase, x, a, n, dst)
}

func (e *Engine) probs(f *nn.GCNNet[float32], x, a []float32, n int, dst []float32) error {
	if f == nil {
		return fmt.Errorf("%w: no classifier", ErrModels)
	}
	d := e.m.D
	if len(x) != n*d || len(a) != n*n || len(dst) != 2*n {
		return fmt.Errorf("%w: probs: n=%d d=%d |x|=%d |a|=%d |dst|=%d", fasd.ErrShape, n, d, len(x), len(a), len(dst))
	}
	t := e.tape
	t.Reset()
	t.SetNoGrad(true)
	e.mask = ones(e.mask, n)
	z := f.Forward(t, t.Input(tensor.FromSlice(x, 1, n, d), false), t.Input(tensor.FromSlice(a, 1, n, n), false), e.mask, nil)
	softmax2(z.Value.Data, dst)
	return nil
}

// SensLogits writes g_sen's logit per node (eval mode) into dst (len n).
func (e *Engine) SensLogits(x, a []float32, n int, dst []float32) error {
	if e.m.GSen == nil {
		return fmt.Errorf("%w: no g_sen", ErrModels)
	}
	d := e.m.D
	t := e.tape
	t.Reset()
	t.SetNoGrad(true)
	e.mask = ones(e.mask, n)
	z := e.m.GSen.Forward(t, t.Input(tensor.FromSlice(x, 1, n, d), false), t.Input(tensor.FromSlice(a, 1, n, n), false), e.mask, nil)
	copy(dst, z.Value.Data)
	return nil
}

// softmax2 turns rows of two logits into probabilities (float64 inside).
func softmax2(z, dst []float32) {
	for i := 0; i+1 < len(z); i += 2 {
		a, b := float64(z[i]), float64(z[i+1])
		m := max(a, b)
		ea, eb := math.Exp(a-m), math.Exp(b-m)
		dst[i], dst[i+1] = float32(ea/(ea+eb)), float32(eb/(ea+eb))
	}
}

func ones(buf []float32, n int) []float32 {
	if cap(buf) < n {
		buf = make([]float32, n)
	}
	buf = buf[:n]
	for i := range buf {
		buf[i] = 1
	}
	return buf
}

// scoreModel is fasd.ScoreModel over s_θ and s_φ in eval mode, one
// unpadded subgraph at a time.
type scoreModel struct {
	sx   *nn.ScoreX[float32]
	sa   *nn.ScoreA[float32]
	tape *autodiff.Tape[float32]
	mask []float32
	pad  padBuf
}

// Predict implements fasd.ScoreModel (the networks ignore t).
func (s *scoreModel) Predict(_ float64, x, a []float32, n, d int, outX, outA []float32) error {
	t := s.tape
	t.Reset()
	t.SetNoGrad(true)
	s.mask = ones(s.mask, n)
	xv := t.Input(tensor.FromSlice(x, 1, n, d), false)
	av := t.Input(tensor.FromSlice(a, 1, n, n), false)
	copy(outX, s.sx.Forward(t, xv, av, s.mask).Value.Data)
	copy(outA, s.sa.Forward(t, xv, av, s.mask).Value.Data)
	return nil
}

// PredictBatch implements fasd.BatchScoreModel: the subgraphs are padded to
// the largest one and run as one batch. Padding appends exact zeros to every
// sum, so the valid outputs equal per-subgraph Predict calls bit for bit
// (tested).
func (s *scoreModel) PredictBatch(_ float64, xs, as [][]float32, ns []int, d int, outXs, outAs [][]float32) error {
	t := s.tape
	t.Reset()
	t.SetNoGrad(true)
	n := 1
	for _, k := range ns {
		n = max(n, k)
	}
	b := len(ns)
	s.pad.X.Resize(tensor.S(b, n, d))
	s.pad.A.Resize(tensor.S(b, n, n))
	clear(s.pad.X.Data)
	clear(s.pad.A.Data)
	s.pad.mask = resizeF(s.pad.mask, b*n)
	clear(s.pad.mask)
	for k, gn := range ns {
		copy(s.pad.X.Data[k*n*d:], xs[k][:gn*d])
		for r := 0; r < gn; r++ {
			copy(s.pad.A.Data[(k*n+r)*n:(k*n+r)*n+gn], as[k][r*gn:(r+1)*gn])
			s.pad.mask[k*n+r] = 1
		}
	}
	xv, av := t.Input(s.pad.X, false), t.Input(s.pad.A, false)
	ox := s.sx.Forward(t, xv, av, s.pad.mask).Value.Data
	oa := s.sa.Forward(t, xv, av, s.pad.mask).Value.Data
	for k, gn := range ns {
		copy(outXs[k], ox[k*n*d:k*n*d+gn*d])
		for r := 0; r < gn; r++ {
			copy(outAs[k][r*gn:(r+1)*gn], oa[(k*n+r)*n:(k*n+r)*n+gn])
		}
	}
	return nil
}
