package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasd-db/fasd/fasd"
)

// ErrInput marks input data that the pipeline cannot run on.
var ErrInput = errors.New("pipeline: invalid input")

// Input is everything a run needs, sampled and read by the caller.
//
// Subgraphs holds one subgraph per labelled start node (train ∪ val ∪
// test), as built by fasd.BuildSubgraph; the pipeline sorts them by root and
// never modifies them. Labels, Sens and Split are the global per-node arrays
// (indexed by node id; −1 unknown label / sensitive value). Graph is needed
// only by the plain GCN baseline.
//
// A subgraph may leave X nil when Features is set: its feature rows are
// then read from Features by its node ids, wherever the pipeline needs
// them. Since every node occurs in many subgraphs, this keeps one copy of
// the features instead of one per occurrence (on a Pokec-z-sized graph
// 73 MiB instead of about 700 MiB); the results are the same bits.
//
// A subgraph may be compact (fasd.Subgraph.Compact: A nil, the adjacency
// in Adj): on a 1M-node graph the dense matrices of the subgraphs take
// 1.3 GB and their compact form about 120 MB. The results are the same
// bits either way; the pipeline holds every adjacency compactly.
type Input struct {
	NumNodes  int
	D         int
	Subgraphs []*fasd.Subgraph
	// Features are the node features, NumNodes×D row-major (optional; see
	// above).
	Features []float32
	Labels   []int8
	Sens     []int8
	Split    []fasd.Split
	// FeatureNames name the D features in order; their FeatureHash is
	// stored with the models so a query engine can check its schema.
	FeatureNames []string
	// Graph is the full graph for the GCN baseline (optional otherwise).
	Graph *FullGraph
	// Scope is what sample.scope = "auto" chose before the subgraphs were
	// sampled (ChooseScope), copied to Result.Scope; nil otherwise.
	Scope *ScopeChoice
}

// FullGraph is the whole graph for the full-graph GCN baseline: undirected
// edges (each once, no self-loops) and all features (NumNodes×D).
type FullGraph struct {
	Edges [][2]uint32
	X     []float32
}

// validate checks the input and returns the subgraphs sorted by root plus
// the node lists of the splits (ascending).
func (in *Input) validate() (sgs []*fasd.Subgraph, train, val, test []uint32, err error) {
	n := in.NumNodes
	if n < 1 || in.D < 1 || len(in.Labels) != n || len(in.Sens) != n || len(in.Split) != n {
		return nil, nil, nil, nil, fmt.Errorf("%w: %d nodes, D=%d, |labels|=%d |sens|=%d |split|=%d",
			ErrInput, n, in.D, len(in.Labels), len(in.Sens), len(in.Split))
	}
	if len(in.Subgraphs) == 0 {
		return nil, nil, nil, nil, fmt.Errorf("%w: no subgraphs", ErrInput)
	}
	if in.Features != nil && len(in.Features) != n*in.D {
		return nil, nil, nil, nil, fmt.Errorf("%w: %d features for %d nodes with D=%d", ErrInput, len(in.Features), n, in.D)
	}
	sgs = append([]*fasd.Subgraph(nil), in.Subgraphs...)
	sort.Slice(sgs, func(i, j int) bool { return sgs[i].Root() < sgs[j].Root() })
	for i, g := range sgs {
		if g.D != in.D {
			return nil, nil, nil, nil, fmt.Errorf("%w: subgraph of root %d has D=%d, want %d", ErrInput, g.Root(), g.D, in.D)
		}
		if g.X == nil && in.Features == nil {
			return nil, nil, nil, nil, fmt.Errorf("%w: subgraph of root %d has no features and the input no Features", ErrInput, g.Root())
		}
		if g.X != nil && len(g.X) != g.N()*in.D {
			return nil, nil, nil, nil, fmt.Errorf("%w: subgraph of root %d has %d features for %d nodes, D=%d", ErrInput, g.Root(), len(g.X), g.N(), in.D)
		}
		if g.A == nil && g.Adj.N != g.N() {
			return nil, nil, nil, nil, fmt.Errorf("%w: subgraph of root %d has a %d×%d compact adjacency for %d nodes", ErrInput, g.Root(), g.Adj.N, g.Adj.N, g.N())
		}
		if g.A != nil && len(g.A) != g.N()*g.N() {
			return nil, nil, nil, nil, fmt.Errorf("%w: subgraph of root %d has %d adjacency entries for %d nodes", ErrInput, g.Root(), len(g.A), g.N())
		}
		if i > 0 && sgs[i-1].Root() == g.Root() {
			return nil, nil, nil, nil, fmt.Errorf("%w: two subgraphs rooted at %d", ErrInput, g.Root())
		}
		for _, v := range g.Nodes {
			if int(v) >= n {
				return nil, nil, nil, nil, fmt.Errorf("%w: subgraph of root %d holds node %d ≥ %d", ErrInput, g.Root(), v, n)
			}
		}
	}
	train, val, test = splitNodes(in.Split)
	if len(train) == 0 || len(val) == 0 || len(test) == 0 {
		return nil, nil, nil, nil, fmt.Errorf("%w: split has %d train, %d val, %d test nodes", ErrInput, len(train), len(val), len(test))
	}
	return sgs, train, val, test, nil
}

// splitNodes returns the nodes of each split, ascending.
func splitNodes(split []fasd.Split) (train, val, test []uint32) {
	for v, s := range split {
		switch s {
		case fasd.SplitTrain:
			train = append(train, uint32(v))
		case fasd.SplitVal:
			val = append(val, uint32(v))
		case fasd.SplitTest:
			test = append(test, uint32(v))
		}
	}
	return train, val, test
}

// Stage names a step of the pipeline in callbacks and timings.
type Stage string

// The stages, in the order a full run with ablations executes them.
const (
	StageGSen         Stage = "gsen"          // train g_sen (epochs)
	StageGrads        Stage = "gsen_grads"    // mean L_sen; cache ∇_X, ∇_A for λ > 0 (subgraphs)
	StageScore        Stage = "score"         // train s_θ, s_φ (epochs)
	StageGuides       Stage = "guides"        // fit the linear guides (rounds)
	StageDebias       Stage = "debias"        // debias every subgraph (subgraphs)
	StageClassifier   Stage = "classifier"    // train f on debiased subgraphs (epochs)
	StageFairProbs    Stage = "fair_probs"    // Options.FairProbs: f on every debiased subgraph (subgraphs)
	StageDiagnostics  Stage = "diagnostics"   // §14 diagnostics
	StageNoDiffusion  Stage = "no_diffusion"  // f on the original subgraphs (epochs)
	StageScoreNoFair  Stage = "score_nofair"  // s_θ, s_φ with λ = 0 (epochs)
	StageDebiasNoFair Stage = "debias_nofair" // debias with the λ = 0 networks
	StageClassNoFair  Stage = "classifier_nofair"
	StageBaseline     Stage = "gcn"       // full-graph GCN (epochs)
	StageFASDGCN      Stage = "fasd_gcn"  // full-graph GCN on node-mean debiased features (epochs)
	StageMLP          Stage = "mlp"       // the baseline without the graph (epochs)
	StageFASDProp     Stage = "fasd_prop" // the MLP on node-mean propagated debiased features (epochs)
	StageProp         Stage = "prop"      // the MLP on node-mean propagated original features (epochs)
	StageProbe        Stage = "probe"     // fresh g_sen probes (epochs)
	StageRetune       Stage = "retune"    // Options.Retune: debias + f per setting (settings)
)

// Variant names an evaluated method.
type Variant string

// The variants of §11 plus the plain GCN baseline.
const (
	VariantFASD        Variant = "fasd"
	VariantNoDiffusion Variant = "no_diffusion"
	VariantNoFairness  Variant = "no_fairness"
	VariantGCN         Variant = "gcn"
	// VariantFASDGCN debiases every subgraph like FASD, averages each
	// node's debiased features over the subgraphs that contain it (nodes
	// in none keep their own) and trains the full-graph GCN baseline on
	// them: "debias, then classify the neighbourhood".
	VariantFASDGCN Variant = "fasd_gcn"
	// VariantFASDProp debiases every subgraph like FASD, propagates the
	// debiased features inside each subgraph ([X̃, ÂX̃, Â²X̃] with Â the
	// normalised debiased adjacency), averages each node's rows over the
	// subgraphs that contain it and trains the baseline's architecture
	// without the graph (Â = I) on them: a classifier over features
	// averaged across the debiased subgraphs, which the views can keep
	// per node.
	VariantFASDProp Variant = "fasd_prop"
	// VariantProp is VariantFASDProp on the original subgraphs (no
	// debiasing): its w/o-Diffusion counterpart.
	VariantProp Variant = "prop"
	// VariantMLP is the baseline's architecture without the graph (Â = I)
	// on the original features: does the graph help at all?
	VariantMLP Variant = "mlp"
	// VariantMajority predicts the majority class of the validation
	// labels for every node: the constant a useful model must beat.
	VariantMajority Variant = "majority"
)

// Variants lists the variants of --ablations in report order.
func Variants() []Variant {
	return []Variant{VariantFASD, VariantNoDiffusion, VariantNoFairness, VariantGCN}
}

// AllVariants lists every variant Run knows, in report order.
func AllVariants() []Variant {
	return []Variant{VariantFASD, VariantFASDGCN, VariantFASDProp, VariantNoDiffusion, VariantProp, VariantNoFairness, VariantGCN, VariantMLP, VariantMajority}
}

// Callbacks receive progress reports. Every field is optional. They are
// called from the goroutine that called Run, never concurrently, and must
// return quickly.
type Callbacks struct {
	// StageStart reports a stage starting with total units of work
	// (epochs or subgraphs).
	StageStart func(s Stage, total int)
	// Progress reports done of total units of the running stage.
	Progress func(s Stage, done, total int)
	// StageEnd reports a finished stage and its wall time.
	StageEnd func(s Stage, elapsed time.Duration)
	// Estimate reports the expected wall time of a whole stage,
	// extrapolated from its first batches, before most of it runs.
	Estimate func(s Stage, total time.Duration)
	// Epoch reports a training epoch's mean loss (and the validation
	// accuracy for classifiers, NaN elsewhere).
	Epoch func(s Stage, epoch int, loss, valAcc float64)
}

// Options select what Run does beyond the FASD pipeline.
type Options struct {
	// Variants to evaluate; empty means just VariantFASD.
	Variants []Variant
	// Diagnostics computes the §14 diagnostics (g_sen and probe AUC,
	// held-out score-loss ratios, edit statistics) for FASD.
	Diagnostics bool
	// Retune lists extra debiasing settings evaluated on the score networks
	// the run already trained, without retraining them: for each entry and
	// for each of VariantFASD and VariantNoFairness that runs, the
	// subgraphs are debiased again with the entry's settings and a fresh f
	// (same seeds) is trained on them. The results are appended as variants
	// named "<variant>@<entry name>". Only debias.* keys may be set.
	Retune []Retune
	// Probe scores every evaluated variant with a fresh probe (see
	// ProbeScore): a sensitive-attribute classifier trained from scratch on
	// the variant's own training data (debiased for FASD, w/o Fairness and
	// the retune variants, original for w/o Diffusion and the GCN) and
	// scored on the test nodes. Each distinct data set costs one g_sen-sized
	// training on the train- and validation-rooted subgraphs.
	Probe bool
	// KeepScores keeps every variant's P(1) per node at the selected
	// epoch in VariantResult.Scores (for offline analysis of decision
	// rules; N float32 per variant).
	KeepScores bool
	// Counterfactual measures every variant's counterfactual share
	// (VariantResult.Counterfactual) when a feature column encodes the
	// sensitive attribute; the debiasing variants debias the flipped
	// features once more.
	Counterfactual bool
	Callbacks      Callbacks
	// Scratch, if set, creates temporary storage for the debiased features
	// of each debiasing pass, which are then read from it (once per epoch
	// of every stage that trains or evaluates on them) instead of being held
	// in memory: on a large graph they are the largest thing a run keeps
	// (N×D float32 per subgraph). Results do not change. Each Scratch is
	// closed as soon as its pass is no longer needed, and when Run returns.
	Scratch func() (Scratch, error)
	// FairProbs, if set, receives f's class probabilities on every
	// debiased subgraph once f is trained (VariantFASD only), so that a
	// caller can keep them instead of debiasing the subgraphs again (fasd
	// train keeps them for the query engine: package runs). It is called
	// once per subgraph, in input order, from the goroutine of Run, with
	// the models as trained so far (g_sen, the score networks, the guides
	// and f are final; FBase and FellBack are set later, and a fallback
	// changes Threshold), the input
	// subgraph (compact or not) with its clean features x (N×D) and the probabilities
	// (N×2); x and probs are valid during the call only. The
	// probabilities are those of Engine.Debias with the root's generator
	// fasd.NewRand(fasd.RootSeed(seed, fasd.PurposeDebias, root)) then
	// Engine.Probs on that subgraph alone, bit for bit. It costs one
	// forward pass of f over the debiased subgraphs.
	FairProbs func(ctx context.Context, m *Models, sg *fasd.Subgraph, x, probs []float32) error

	// evals receives the evaluation timings (EstimateRun only).
	evals *[]evalTiming
}

// Retune is one debiasing setting of Options.Retune.
type Retune struct {
	// Name labels the setting in variant names; empty means the settings
	// joined with commas.
	Name string
	// Set are "key=value" config assignments, each key under "debias.".
	Set []string
}

// Label returns the name used in variant names.
func (r Retune) Label() string {
	if r.Name != "" {
		return r.Name
	}
	return strings.Join(r.Set, ",")
}

// ParseRetune parses a retuning grid: settings separated by ';', each a
// comma-separated list of key=value debias assignments, for example
// "debias.dt_rev=0.02;debias.dt_rev=0.05,debias.steps=10".
func ParseRetune(s string) ([]Retune, error) {
	var out []Retune
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var r Retune
		for _, kv := range strings.Split(part, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			r.Set = append(r.Set, kv)
		}
		if len(r.Set) > 0 {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: retune grid %q has no settings", ErrConfig, s)
	}
	return out, nil
}

// Apply returns cfg with the retune's assignments applied, validated.
func (r Retune) Apply(cfg Config) (Config, error) {
	for _, kv := range r.Set {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return cfg, fmt.Errorf("%w: retune %q: %q is not key=value", ErrConfig, r.Label(), kv)
		}
		if !strings.HasPrefix(k, "debias.") {
			return cfg, fmt.Errorf("%w: retune %q: key %q: only debias.* settings can change without retraining", ErrConfig, r.Label(), k)
		}
		if err := cfg.Set(k, v); err != nil {
			return cfg, fmt.Errorf("retune %q: %w", r.Label(), err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("retune %q: %w", r.Label(), err)
	}
	if _, _, err := debiasOptions(&cfg); err != nil {
		return cfg, fmt.Errorf("retune %q: %w", r.Label(), err)
	}
	return cfg, nil
}

func (o *Options) wants(v Variant) bool {
	if len(o.Variants) == 0 {
		return v == VariantFASD
	}
	for _, w := range o.Variants {
		if w == v {
			return true
		}
	}
	return false
}

// reporter wraps Callbacks with nil checks and stage timing.
type reporter struct {
	cb      Callbacks
	timings []StageTiming
	start   time.Time
	stage   Stage
	total   int
	epochs  int // epochs (passes) reported in the current stage
	// base is added to the progress reported in the current stage, and
	// estimates are scaled by estMul (when > 0) or dropped (when < 0):
	// a stage that trains two networks one after the other
	// (classifier.arch = "auto") reports one progress from 0 to total.
	base   int
	estMul float64
	// evals, when set, receives the timing of every held-out or
	// validation evaluation (EstimateRun calibrates on them).
	evals *[]evalTiming
}

// evalTiming is one held-out or validation evaluation of an early-stopping
// stage: n subgraphs evaluated, ending at end after d. A fixed one is the
// bookkeeping of one check whose cost does not grow with the subgraphs
// (the selection criterion over the validation nodes, keeping the best
// weights): EstimateRun counts it once per check, unscaled.
type evalTiming struct {
	stage Stage
	n     int
	fixed bool
	end   time.Time
	d     time.Duration
}

// timed runs one evaluation of n subgraphs and records its time.
func (r *reporter) timed(n int, fn func() error) error { return r.record(n, false, fn) }

// record runs fn and, in an estimate's short run, records its time.
func (r *reporter) record(n int, fixed bool, fn func() error) error {
	if r.evals == nil {
		return fn()
	}
	start := time.Now()
	err := fn()
	end := time.Now()
	*r.evals = append(*r.evals, evalTiming{stage: r.stage, n: n, fixed: fixed, end: end, d: end.Sub(start)})
	return err
}

// estimateEvalMin is the least number of subgraph evaluations one check
// of an estimate's short run makes (see reporter.evalSet).
const estimateEvalMin = 1024

// evalSet returns the subgraphs one validation check of f evaluates, idx
// (nil: all n of the view), and their number. In an estimate's short run
// (r.evals set) the set is repeated until it holds at least
// estimateEvalMin entries: a check of a hundred subgraphs lasts about a
// millisecond, too short to time against the start-up of its workers.
// The k-th repetition of subgraph i is the entry i + k·n (see
// classProbsOn), so every entry has its own slot in the caller's output.
func (r *reporter) evalSet(idx []int, n int) ([]int, int) {
	m := n
	if idx != nil {
		m = len(idx)
	}
	if r.evals == nil || m == 0 || m >= estimateEvalMin {
		return idx, m
	}
	out := make([]int, 0, estimateEvalMin+m)
	for k := 0; len(out) < estimateEvalMin; k++ {
		for j := 0; j < m; j++ {
			i := j
			if idx != nil {
				i = idx[j]
			}
			out = append(out, i+k*n)
		}
	}
	return out, len(out)
}

// timedFixed runs one check's per-check bookkeeping (see evalTiming) and
// records its time.
func (r *reporter) timedFixed(fn func() error) error { return r.record(0, true, fn) }

func (r *reporter) begin(s Stage, total int) {
	r.stage, r.total, r.start, r.epochs, r.base, r.estMul = s, total, time.Now(), 0, 0, 0
	if r.cb.StageStart != nil {
		r.cb.StageStart(s, total)
	}
}

func (r *reporter) progress(done int) {
	if r.cb.Progress != nil {
		r.cb.Progress(r.stage, r.base+done, r.total)
	}
}

func (r *reporter) estimate(d time.Duration) {
	if r.estMul < 0 {
		return
	}
	if r.estMul > 0 {
		d = time.Duration(float64(d) * r.estMul)
	}
	if r.cb.Estimate != nil {
		r.cb.Estimate(r.stage, d)
	}
}

func (r *reporter) epoch(e int, loss, acc float64) {
	r.epochs++
	if r.cb.Epoch != nil {
		r.cb.Epoch(r.stage, e, loss, acc)
	}
}

func (r *reporter) end() time.Duration {
	el := time.Since(r.start)
	r.timings = append(r.timings, StageTiming{Stage: r.stage, Seconds: el.Seconds(), Units: r.total, Epochs: r.epochs})
	if r.cb.StageEnd != nil {
		r.cb.StageEnd(r.stage, el)
	}
	return el
}

// StageTiming is the wall time of one stage.
type StageTiming struct {
	Stage   Stage   `json:"stage"`
	Seconds float64 `json:"seconds"`
	Units   int     `json:"units"` // epochs or subgraphs
	// Epochs is the number of epochs (passes) the stage ran: less than
	// Units when early stopping ended it, 0 for a stage without epochs.
	// In an Estimate, the expected number.
	Epochs int `json:"epochs,omitempty"`
	// MaxSeconds is, in an Estimate, the time of the stage if early
	// stopping never ends it (its epoch cap or full budget); 0 elsewhere.
	MaxSeconds float64 `json:"max_seconds,omitempty"`
}

// parallelFor runs fn(w, i) for i in [0, n) on workers goroutines (w is
// the worker index, for per-worker scratch). Each index is handled exactly
// once; results must be written to per-index slots, which makes them
// independent of scheduling. It returns the first error (by index order
// among the failed ones is not guaranteed; any error aborts the rest).
func parallelFor(ctx context.Context, workers, n int, fn func(w, i int) error) error {
	workers = max(1, min(workers, n))
	if workers == 1 {
		for i := 0; i < n; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(0, i); err != nil {
				return err
			}
		}
		return nil
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[w] = err
					next.Store(int64(n))
					return
				}
				if err := fn(w, i); err != nil {
					errs[w] = err
					next.Store(int64(n))
					return
				}
			}
		}(w)
	}
	wg.Wait()
	return errors.Join(errs...)
}
