package pipeline

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/fasd-db/fasd/fasd"
)

// Parameters of sample.scope = "auto" (docs/results/scope-auto-rule.md).
const (
	// scopeNets is how many full-graph GCNs and how many MLPs ChooseScope
	// trains (each with its own seed) on a graph with at most
	// scopeSmallVal validation nodes; with more, proportionally fewer
	// (at least one of each): the spread of a network's validation AUC
	// shrinks as the splits grow.
	scopeNets     = 10
	scopeSmallVal = 500
	// scopeMargin is the mean validation ROC AUC by which the GCN must
	// beat the MLP for the wide scope to be taken.
	scopeMargin = 0.01
	// scopeMinRatio is the smallest ratio of the two groups' class rates
	// (training and validation labels; the smaller rate over the larger,
	// for each class) at which the wide scope may be taken: the
	// four-fifths rule of disparate impact, applied to the labels. Below
	// it the labels themselves differ by group, and a scope that reads
	// more of the neighbourhood reads more of that bias
	// (docs/results/scope-guard-rule.md).
	scopeMinRatio = 0.8
)

// The wide scope (ShaDow-style): every edge among at most wideMaxNodes
// members of the root's 2-hop neighbourhood, wideFanout neighbours drawn
// per node and hop.
const (
	wideMode     = "hop"
	wideDepth    = 2
	wideFanout   = 10
	wideMaxNodes = 50
	wideEdges    = "induced"
)

// ScopeChoice is what sample.scope = "auto" read and chose (ChooseScope).
// AUCs are fractions; figures it did not reach are NaN (null in JSON).
type ScopeChoice struct {
	// Wide says the wide scope was taken; otherwise the configured
	// sampling was kept.
	Wide bool `json:"wide"`
	// Nets is how many GCNs and how many MLPs were trained: none when the
	// labels' group-rate ratio already refused the wide scope.
	Nets int `json:"nets"`
	// GCNAUC and MLPAUC are the mean validation ROC AUCs of the GCNs and
	// of the MLPs, each at its selected epoch; Margin is the difference
	// the wide scope needs.
	GCNAUC Num `json:"gcn_auc"`
	MLPAUC Num `json:"mlp_auc"`
	Margin Num `json:"margin"`
	// LabelRatio is the smaller of the two classes' group-rate ratios
	// over the training and validation nodes with a known group
	// (labelRateRatio); MinRatio is the least the wide scope needs.
	LabelRatio Num `json:"label_ratio"`
	MinRatio   Num `json:"min_ratio"`
	// Seconds is the wall time the choice took.
	Seconds float64 `json:"seconds"`
	// Pending says the labels did not settle the choice and the networks
	// were not trained (PreviewScope, for estimates): the sampling stays
	// as configured until the run decides.
	Pending bool `json:"pending,omitempty"`
}

// Gain is GCNAUC − MLPAUC.
func (s *ScopeChoice) Gain() float64 { return float64(s.GCNAUC) - float64(s.MLPAUC) }

// String is a one-line account, e.g. "wide (mean validation AUC of 10
// GCNs 0.853 against 10 MLPs 0.831: +0.022 ≥ 0.010; labels' group-rate
// ratio 0.93 ≥ 0.80; 1.52s)".
func (s *ScopeChoice) String() string {
	what := "paper's sampling"
	if s.Wide {
		what = "wide"
	}
	cmp := func(ok bool) string {
		if ok {
			return "≥"
		}
		return "<"
	}
	took := time.Duration(s.Seconds * float64(time.Second)).Round(time.Millisecond)
	if s.Pending {
		return fmt.Sprintf("chosen when the run starts: the labels' group-rate ratio %.2f ≥ %.2f allows the wide scope, "+
			"and %s on the full graph will decide (not in this estimate, which is for the configured sampling; "+
			"the wide scope makes the score networks and the debiasing several times as long: docs/results/studies.md, \"The scope guarded by the labels\")",
			float64(s.LabelRatio), float64(s.MinRatio), s.NetsPhrase())
	}
	if s.Nets == 0 {
		return fmt.Sprintf("%s (labels' group-rate ratio %.2f < %.2f: no network trained; %s)",
			what, float64(s.LabelRatio), float64(s.MinRatio), took)
	}
	nets := plural(s.Nets)
	return fmt.Sprintf("%s (mean validation AUC of %d GCN%s %.3f against %d MLP%s %.3f: %+.3f %s %.3f; labels' group-rate ratio %.2f %s %.2f; %s)",
		what, s.Nets, nets, float64(s.GCNAUC), s.Nets, nets, float64(s.MLPAUC),
		s.Gain(), cmp(s.Gain() >= float64(s.Margin)), float64(s.Margin),
		float64(s.LabelRatio), cmp(float64(s.LabelRatio) >= float64(s.MinRatio)), float64(s.MinRatio), took)
}

// NetsPhrase names the networks the choice trains ("1 GCN and 1 MLP").
func (s *ScopeChoice) NetsPhrase() string {
	return fmt.Sprintf("%d GCN%s and %d MLP%s", s.Nets, plural(s.Nets), s.Nets, plural(s.Nets))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// labelRateRatio is how alike the two groups' labels are on the given
// nodes: for each class c, P(y = c | s = a) / P(y = c | s = b) with the
// smaller rate on top, and the smaller of the two classes' ratios (1:
// the same class rates in both groups; 0: a class absent from one group).
// Nodes with an unknown group are skipped; NaN when a group has no node
// or a class no node in either group.
func labelRateRatio(nodes []uint32, labels, sens []int8) float64 {
	var n, pos [2]float64
	for _, v := range nodes {
		s := sens[v]
		if s != 0 && s != 1 {
			continue
		}
		n[s]++
		if labels[v] == 1 {
			pos[s]++
		}
	}
	ratio := math.Inf(1)
	for c := 0; c < 2; c++ {
		var r [2]float64
		for g := range r {
			r[g] = pos[g] / n[g]
			if c == 0 {
				r[g] = 1 - r[g]
			}
		}
		lo, hi := min(r[0], r[1]), max(r[0], r[1])
		if n[0] == 0 || n[1] == 0 || hi == 0 {
			return math.NaN()
		}
		ratio = min(ratio, lo/hi)
	}
	return ratio
}

// NeedsScopeChoice says whether cfg asks for ChooseScope before sampling.
func (c *Config) NeedsScopeChoice() bool { return SampleScope(c.Sample.Scope) == SampleAuto }

// scopeNetCount is the number of networks per side for nval validation
// nodes: scopeNets up to scopeSmallVal, then proportionally fewer, at
// least one.
func scopeNetCount(nval int) int {
	if nval <= scopeSmallVal {
		return scopeNets
	}
	return max(1, scopeNets*scopeSmallVal/nval)
}

// labelScope starts a choice from the labels: the training and validation
// nodes, their labels' group-rate ratio and, where the ratio allows the
// wide scope, the number of networks per side (none where it refuses: the
// networks' AUCs stay NaN, which saves their cost on the graphs where it
// would be largest).
func labelScope(in *Input) (ch *ScopeChoice, train, val []uint32, err error) {
	n := in.NumNodes
	if n < 1 || len(in.Labels) != n || len(in.Sens) != n || len(in.Split) != n {
		return nil, nil, nil, fmt.Errorf("%w: %d nodes, |labels|=%d |sens|=%d |split|=%d",
			ErrInput, n, len(in.Labels), len(in.Sens), len(in.Split))
	}
	train, val, _ = splitNodes(in.Split)
	if len(train) == 0 || len(val) == 0 {
		return nil, nil, nil, fmt.Errorf("%w: split has %d train and %d val nodes", ErrInput, len(train), len(val))
	}
	ch = &ScopeChoice{Margin: scopeMargin, MinRatio: scopeMinRatio, GCNAUC: Num(math.NaN()), MLPAUC: Num(math.NaN()),
		LabelRatio: Num(labelRateRatio(append(append([]uint32(nil), train...), val...), in.Labels, in.Sens))}
	if float64(ch.LabelRatio) >= scopeMinRatio {
		ch.Nets = scopeNetCount(len(val))
	}
	return ch, train, val, nil
}

// PreviewScope settles sample.scope = "auto" from the labels alone, for
// an estimate that must not train the networks: where the labels refuse
// the wide scope the choice is final (ChooseScope would train nothing and
// keep the sampling) and cfg is resolved as ChooseScope resolves it;
// otherwise the choice is Pending and cfg is left as it is. in needs the
// labels, groups and split only. A config that does not ask for the
// choice is left alone (nil choice).
func PreviewScope(cfg *Config, in *Input) (*ScopeChoice, error) {
	if !cfg.NeedsScopeChoice() {
		return nil, nil
	}
	ch, _, _, err := labelScope(in)
	if err != nil {
		return nil, err
	}
	if ch.Nets > 0 {
		ch.Pending = true
		return ch, nil
	}
	cfg.Sample.Scope = string(SampleFixed)
	return ch, nil
}

// ChooseScope resolves sample.scope = "auto" before sampling: does the
// neighbourhood carry the label on this graph? It trains the baseline's
// network on the full graph (the gcn variant) and without it (the mlp
// variant), scopeNetCount times each with the baseline schedule and seeds
// derived from cfg.Seed, and compares their mean validation ROC AUC at the
// selected epochs. When the GCNs' is higher by at least scopeMargin and
// the training and validation labels pass the four-fifths rule between
// the groups (labelRateRatio ≥ scopeMinRatio: the labels are not
// themselves the bias), cfg's sampling becomes the wide scope (2 hops,
// every edge among at most 50 members); otherwise it keeps its sampling.
// Either way sample.scope becomes "fixed", so that cfg reproduces the
// sampling it chose. in needs the node records and Graph, not subgraphs;
// no test label is read (the networks' epochs are selected on the
// validation nodes). A config that does not ask for the choice is left
// alone (nil choice): after PreviewScope has settled it from the labels,
// ChooseScope has nothing to do.
func ChooseScope(ctx context.Context, cfg *Config, in *Input) (*ScopeChoice, error) {
	if !cfg.NeedsScopeChoice() {
		return nil, nil
	}
	if in.Graph == nil {
		return nil, fmt.Errorf("%w: sample.scope = %q needs Input.Graph", ErrInput, SampleAuto)
	}
	if n := in.NumNodes; n < 1 || in.D < 1 || len(in.Graph.X) != n*in.D {
		return nil, fmt.Errorf("%w: %d nodes, D=%d, |x|=%d", ErrInput, n, in.D, len(in.Graph.X))
	}
	start := time.Now()
	ch, train, val, err := labelScope(in)
	if err != nil {
		return nil, err
	}
	// No test node is passed: the selectors measure the nodes they are
	// given, and the choice reads only the validation metrics.
	ev := newEvalData(cfg, in, train, val, nil)
	rep := &reporter{}
	var gcn, mlp float64
	// Each network's arrays (hundreds of MiB on a 10⁶-node graph) are
	// garbage once it returns. Collected at once, as releaseTapes does,
	// they leave no heap goal of twice their size for the next network or
	// the sampling that follows to fill: on the 1M-node generated graph the
	// GCN's garbage, the MLP and the first sampled subgraphs together were
	// the run's peak resident memory.
	for i := 0; i < ch.Nets; i++ {
		seed := fasd.DeriveSeed(fasd.DeriveSeed(cfg.Seed, purposeScope), uint64(i))
		rg, err := trainFullGraph(ctx, cfg, in, in.Graph.Edges, in.Graph.X, nil, train, ev, VariantGCN, seed, rep)
		if err != nil {
			return nil, fmt.Errorf("scope choice: gcn %d: %w", i, err)
		}
		runtime.GC()
		rm, err := trainFullGraph(ctx, cfg, in, nil, in.Graph.X, nil, train, ev, VariantMLP, seed, rep)
		if err != nil {
			return nil, fmt.Errorf("scope choice: mlp %d: %w", i, err)
		}
		runtime.GC()
		gcn += float64(rg.Val.AUC)
		mlp += float64(rm.Val.AUC)
	}
	if ch.Nets > 0 {
		ch.GCNAUC, ch.MLPAUC = Num(gcn/float64(ch.Nets)), Num(mlp/float64(ch.Nets))
	}
	ch.Seconds = time.Since(start).Seconds()
	// NaN (a validation class or a group with no node) keeps the
	// configured sampling: the comparisons are false.
	ch.Wide = ch.Gain() >= scopeMargin && float64(ch.LabelRatio) >= scopeMinRatio
	if ch.Wide {
		cfg.Sample.Mode, cfg.Sample.Depth, cfg.Sample.Fanout = wideMode, wideDepth, wideFanout
		cfg.Sample.MaxNodes, cfg.Sample.Edges = wideMaxNodes, wideEdges
	}
	cfg.Sample.Scope = string(SampleFixed)
	return ch, nil
}
