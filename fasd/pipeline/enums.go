package pipeline

import (
	"reflect"
	"slices"
	"strings"

	"github.com/fasd-db/fasd/fasd"
)

// The enumerated config values that only the pipeline knows. The values
// that select a method option of package fasd (sample.mode, debias.reverse,
// ...) are spelled by that package's enums (fasd.Named) and parsed with
// fasd.ParseName.

// ScoreSchedule is the value of score.schedule.
type ScoreSchedule string

const (
	// ScoreEpochs trains the score networks for score.epochs passes
	// (the paper).
	ScoreEpochs ScoreSchedule = "epochs"
	// ScoreBudget trains them for a budget of subgraph-steps with a
	// held-out loss and early stopping (docs/method.md §20).
	ScoreBudget ScoreSchedule = "budget"
)

// ClassSchedule is the value of classifier.schedule.
type ClassSchedule string

const (
	// ClassEpochs trains f for classifier.epochs passes over every
	// subgraph, validating on every validation node after each (§10).
	ClassEpochs ClassSchedule = "epochs"
	// ClassBudget trains f for a budget of subgraph-steps, validating
	// classifier.evals times on a fixed sample of validation nodes, with
	// early stopping (docs/method.md §17).
	ClassBudget ClassSchedule = "budget"
)

// Decision is the value of classifier.decision.
type Decision string

const (
	// DecisionHalf predicts class 1 iff P(1) > 0.5 (the paper).
	DecisionHalf Decision = "half"
	// DecisionPrior predicts class 1 iff P(1) > fasd.ShiftedPriorThreshold
	// (π_train, π_val): the training labels' positive rate corrected to the
	// validation labels' when they differ beyond sampling noise.
	DecisionPrior Decision = "prior"
	// DecisionPlatt recalibrates the selected epoch's scores on the
	// validation nodes (fasd.PlattThreshold, falling back to
	// DecisionPrior's threshold) and predicts class 1 iff the recalibrated
	// P(1) > ½.
	DecisionPlatt Decision = "platt"
	// DecisionValAcc takes the threshold with the best validation
	// accuracy at the selected epoch (fasd.AccuracyThreshold; ties closest
	// to DecisionPrior's threshold).
	DecisionValAcc Decision = "valacc"
	// DecisionRate takes the threshold at which the selected epoch
	// predicts class 1 on as large a share of the validation nodes as is
	// labelled 1 there (fasd.RateThreshold; ties closest to
	// DecisionPrior's threshold): the default profile's rule.
	DecisionRate Decision = "rate"
)

// Select is the value of classifier.select.
type Select string

const (
	// SelectAcc keeps the epoch with the best validation accuracy.
	SelectAcc Select = "acc"
	// SelectAUC keeps the epoch with the best validation ROC AUC.
	SelectAUC Select = "auc"
	// SelectFair keeps the epoch with the best validation ROC AUC less
	// classifier.select_alpha times the validation ranking gaps between
	// the groups (selectionGaps): a fairness-aware selection for the
	// FASD pipeline's classifiers; the reference baselines (gcn, mlp)
	// keep SelectAUC.
	SelectFair Select = "fair"
	// SelectEO is SelectFair with the within-label gaps only: validation
	// ROC AUC less classifier.select_alpha times the ranking gaps between
	// the groups among the nodes of label 0 and among those of label 1
	// (selectionGaps), the ranking counterpart of equalized odds. Unlike
	// SelectFair's overall gap it does not penalise a ranking that
	// separates the groups only as far as their base rates differ.
	SelectEO Select = "eo"
)

// Readout is the value of classifier.readout: where f's loss and its
// prediction for a node come from.
type Readout string

const (
	// ReadoutMean trains f on every occurrence of a training node and
	// predicts a node by averaging over the subgraphs containing it (§10).
	ReadoutMean Readout = "mean"
	// ReadoutRoot trains f on the roots alone and predicts a root from its
	// own subgraph's root output (ShaDow-GNN's readout); nodes that root
	// no subgraph keep the average. Evaluation only: the query engine
	// serves the average.
	ReadoutRoot Readout = "root"
)

// Arch is the value of classifier.arch: the layers of f (and of the
// w/o-Diffusion classifier, which always shares f's architecture).
type Arch string

const (
	// ArchGCN is the paper's f: GCN layers Â·H·W + b (§10).
	ArchGCN Arch = "gcn"
	// ArchRoot adds a root weight to every GCN layer, Â·H·W + H·R + b
	// (GraphConv, GraphSAGE): a node's own features keep a path of their
	// own however many neighbours share its subgraph.
	ArchRoot Arch = "root"
	// ArchAuto trains f both ways on the same subgraphs and seeds and
	// keeps the root weights only when the validation nodes show them
	// significantly better and no less fair (archCheck); the
	// w/o-Diffusion classifier chooses for itself the same way.
	ArchAuto Arch = "auto"
)

// Head is the value of classifier.head: the layers of f after its first
// GCN layer (f_base, g_sen and the baselines are unaffected, except that
// the w/o-Diffusion classifier shares f's architecture).
type Head string

const (
	// HeadMLP is the paper's f: GCN h → GCN h → FC h → FC 2 (§10).
	HeadMLP Head = "mlp"
	// HeadLinear drops the hidden FC layer: GCN h → GCN h → FC 2.
	HeadLinear Head = "linear"
	// HeadGCN is the GCN baseline's architecture (Kipf and Welling's
	// two-layer GCN): GCN h → GCN 2, the second layer giving the logits.
	HeadGCN Head = "gcn"
)

// ArchFair is the value of classifier.arch_fair: how classifier.arch =
// "auto" holds root weights to "no less fair" on the validation nodes.
type ArchFair string

const (
	// ArchFairPoint keeps the paper's f whenever root's ΔDP + ΔEO is the
	// larger, by any margin.
	ArchFairPoint ArchFair = "point"
	// ArchFairSignificant keeps it only when root's ΔDP + ΔEO is
	// significantly larger (paired bootstrap, one-sided 5 %).
	ArchFairSignificant ArchFair = "significant"
)

// FallbackFASD is the value of classifier.fallback_fasd: when fasd serves
// the w/o-Diffusion classifier instead of the debiased one.
type FallbackFASD string

const (
	// FallbackOff always serves the debiased classifier.
	FallbackOff FallbackFASD = "off"
	// FallbackCheck falls back unless the debiased classifier is fairer
	// on the validation nodes (ΔDP + ΔEO strictly lower) at a validation
	// AUC at most 0.02 below: fasd_gcn's check (fallBack).
	FallbackCheck FallbackFASD = "check"
	// FallbackSignificant falls back only when the validation nodes show
	// the debiased classifier significantly less fair (ΔDP + ΔEO, a
	// one-sided paired bootstrap at 5 %: lessFairOnValidation).
	FallbackSignificant FallbackFASD = "significant"
)

// GuideNet is the value of debias.guide_net: what guidance pushes to
// chance.
type GuideNet string

const (
	// GuideGSen guides with the frozen g_sen of the forward diffusion.
	GuideGSen GuideNet = "gsen"
	// GuideLinear guides with debias.guide_rounds INLP-style linear probes.
	GuideLinear GuideNet = "linear"
	// GuideLinearAgg guides with debias.guide_rounds INLP-style linear
	// probes of s on a node's features beside the mean of its own and its
	// neighbours' features in the subgraph ([x_u, m_u]), so that the push
	// reaches the neighbours whose mean gives the group away.
	GuideLinearAgg GuideNet = "linear_agg"
)

// PostMode is the value of debias.post: what becomes of the adjacency
// weights that survive pruning.
type PostMode string

const (
	PostContinuous PostMode = "continuous" // kept as they are (paper)
	PostClip01     PostMode = "clip01"     // capped at 1
	PostBinarize   PostMode = "binarize"   // set to 1 (GDSS)
)

// SensScope is the value of sens.scope: whose sensitive labels g_sen
// trains on.
type SensScope string

const (
	ScopeAll   SensScope = "all"   // every node with a known s (paper)
	ScopeTrain SensScope = "train" // training nodes only
)

// SampleScope is the value of sample.scope: whether the sampling is the
// configured one or chosen per graph before sampling (ChooseScope).
type SampleScope string

const (
	// SampleFixed samples as sample.mode, depth, fanout, max_nodes and
	// edges say.
	SampleFixed SampleScope = "fixed"
	// SampleAuto takes the wide scope (2 hops, every edge among at most
	// 50 members) where the full-graph GCN ranks the validation nodes
	// better than the MLP by a margin, and the configured sampling
	// otherwise.
	SampleAuto SampleScope = "auto"
)

// MLPAct is the value of score.mlp_act: the activation of s_θ's MLP_X.
type MLPAct string

const (
	ActReLU MLPAct = "relu" // paper
	ActELU  MLPAct = "elu"  // GDSS
)

// enums maps every enumerated config key to its values, in order; Validate,
// Choices and the error messages read it.
var enums = []struct {
	key    string
	values []string
}{
	{"sample.mode", fasd.SamplerMode(0).Names()},
	{"sample.edges", fasd.EdgeMode(0).Names()},
	{"sample.scope", names(SampleFixed, SampleAuto)},
	{"sens.scope", names(ScopeAll, ScopeTrain)},
	{"diffusion.gamma", fasd.GammaMode(0).Names()},
	{"score.mlp_act", names(ActReLU, ActELU)},
	{"score.schedule", names(ScoreEpochs, ScoreBudget)},
	{"debias.schedule", fasd.Schedule(0).Names()},
	{"debias.order", fasd.Order(0).Names()},
	{"debias.init", fasd.Init(0).Names()},
	{"debias.post", names(PostContinuous, PostClip01, PostBinarize)},
	{"debias.reverse", fasd.Reverse(0).Names()},
	{"debias.guide_net", names(GuideGSen, GuideLinear, GuideLinearAgg)},
	{"classifier.decision", names(DecisionHalf, DecisionPrior, DecisionPlatt, DecisionValAcc, DecisionRate)},
	{"classifier.select", names(SelectAcc, SelectAUC, SelectFair, SelectEO)},
	{"classifier.readout", names(ReadoutMean, ReadoutRoot)},
	{"classifier.arch", names(ArchGCN, ArchRoot, ArchAuto)},
	{"classifier.arch_fair", names(ArchFairPoint, ArchFairSignificant)},
	{"classifier.head", names(HeadMLP, HeadLinear, HeadGCN)},
	{"classifier.fallback_fasd", names(FallbackOff, FallbackCheck, FallbackSignificant)},
	{"classifier.schedule", names(ClassEpochs, ClassBudget)},
}

func names[T ~string](vs ...T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// Choices returns the allowed values of an enumerated config key (e.g.
// "debias.reverse" → sde, ode), or nil for a key that is not enumerated.
func Choices(key string) []string {
	for _, e := range enums {
		if e.key == key {
			return slices.Clone(e.values)
		}
	}
	return nil
}

// enumValue returns the string field of c named by a dotted key of enums.
func (c *Config) enumValue(key string) string {
	v := reflect.ValueOf(c).Elem()
	for _, p := range strings.Split(key, ".") {
		f, ok := fieldByTag(v, p)
		if !ok {
			panic("pipeline: enums names an unknown key " + key)
		}
		v = f
	}
	return v.String()
}
