package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/fasd/stats"
	"github.com/fasd-db/fasd/runs"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// EvalOptions are the flags of fasd eval.
type EvalOptions struct {
	DB         string
	Cfg        ConfigOptions
	Seeds      int
	FirstSeed  uint64
	Ablations  bool
	JSON       bool
	Retune     string
	Variants   []string
	References []string
	Probe      bool
	PerSeed    bool
	Spill      bool
	Scores     string
	// Counterfactual measures NIFTY's counterfactual fairness where a
	// feature encodes the sensitive attribute.
	Counterfactual bool
}

// defaultReferences are the references of the paired differences when
// --reference is not given; each is used only when it was evaluated.
var defaultReferences = []string{string(pipeline.VariantNoDiffusion), string(pipeline.VariantGCN)}

// evalLevel is the confidence level of the paired intervals.
const evalLevel = 0.95

// AddFlags registers the flags of fasd eval.
func (o *EvalOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DB, "db", "", "store directory, or postgres:// DSN of a store on PostgreSQL (required)")
	o.Cfg.AddFlags(fs)
	fs.IntVar(&o.Seeds, "seeds", 10, "number of runs (seeds first-seed, first-seed+1, …)")
	fs.Uint64Var(&o.FirstSeed, "first-seed", 0, "seed of the first run")
	fs.BoolVar(&o.Ablations, "ablations", false, "run the variants "+variantList(pipeline.Variants()))
	fs.BoolVar(&o.JSON, "json", false, "print the report as JSON (schema in the help text)")
	fs.StringSliceVar(&o.Variants, "variants", nil, "variants to evaluate instead of fasd,no_diffusion (or those of --ablations): "+variantList(pipeline.AllVariants()))
	fs.StringSliceVar(&o.References, "reference", nil, "variants to pair every other variant against (default no_diffusion,gcn, each when evaluated); a named reference must be evaluated")
	fs.BoolVar(&o.Counterfactual, "counterfactual", true, "where a feature column encodes the sensitive attribute, report the share of test predictions that change when it is flipped (--counterfactual=false skips it)")
	fs.BoolVar(&o.Probe, "probe", true, "train a fresh sensitive-attribute probe per variant and report its test AUC (--probe=false skips it)")
	addSpillFlag(fs, &o.Spill)
	fs.StringVar(&o.Scores, "scores", "", "also write every variant's P(1) per node at its selected epoch, with the split, labels and groups, to this file (JSON lines; for studying decision rules offline)")
	fs.BoolVar(&o.PerSeed, "per-seed", false, "also print the per-seed paired differences in the table")
	fs.StringVar(&o.Retune, "retune", "", "extra debiasing settings evaluated on each run's trained score networks without retraining them:\n"+
		"settings separated by ';', each a comma-separated list of debias.* assignments\n"+
		"(e.g. 'debias.dt_rev=0.05;debias.dt_rev=0.05,debias.steps=10'); reported as variants fasd@… (and no_fairness@… with --ablations)")
}

// EvalStat is one metric of one variant over the runs: Acc, ΔDP and ΔEO
// ×100, the probe AUC as a fraction. Undefined values (an empty group) are
// reported as -1.
type EvalStat struct {
	Mean    float64   `json:"mean"`
	Std     float64   `json:"std"`
	PerSeed []float64 `json:"per_seed"`
}

// EvalDiff is the paired difference variant − reference of one metric over
// the seeds (same units as EvalStat). Undefined values are null: per-seed
// differences where either value is undefined (those seeds are left out
// and N counts the rest), SD, Lo, Hi and P with fewer than two seeds.
type EvalDiff struct {
	N       int            `json:"n"`
	Mean    pipeline.Num   `json:"mean"`
	SD      pipeline.Num   `json:"sd"` // sample std of the differences (n − 1)
	Lo      pipeline.Num   `json:"lo"` // Student t confidence interval
	Hi      pipeline.Num   `json:"hi"`
	P       pipeline.Num   `json:"p"` // two-sided paired t test, H0: mean 0
	PerSeed []pipeline.Num `json:"per_seed"`
}

// EvalPaired holds a variant's paired differences against one reference.
type EvalPaired struct {
	Reference string    `json:"reference"`
	Acc       EvalDiff  `json:"acc"`
	AUC       EvalDiff  `json:"auc"`
	F1        EvalDiff  `json:"f1"`
	MacroF1   EvalDiff  `json:"macro_f1"`
	DP        EvalDiff  `json:"dp"`
	EO        EvalDiff  `json:"eo"`
	ProbeAUC  *EvalDiff `json:"probe_auc,omitempty"`
	// Counterfactual is present when the variants' are.
	Counterfactual *EvalDiff `json:"counterfactual,omitempty"`
}

// EvalVariant are the metrics of one variant.
type EvalVariant struct {
	Name    string   `json:"name"`
	Acc     EvalStat `json:"acc"`
	AUC     EvalStat `json:"auc"`
	F1      EvalStat `json:"f1"`
	MacroF1 EvalStat `json:"macro_f1"`
	DP      EvalStat `json:"dp"`
	EO      EvalStat `json:"eo"`
	// ProbeAUC is the fresh probe's test AUC (a fraction, not ×100) and
	// ProbeData the data it read ("original", or the variant whose
	// debiased subgraphs it was); both absent with --probe=false.
	ProbeAUC  *EvalStat `json:"probe_auc,omitempty"`
	ProbeData string    `json:"probe_data,omitempty"`
	// Counterfactual is the share of test predictions (×100) that change
	// when the feature encoding the sensitive attribute is flipped on
	// every node (NIFTY); absent with --counterfactual=false or when no
	// feature column encodes the attribute.
	Counterfactual *EvalStat `json:"counterfactual,omitempty"`
	// Val are the selected epochs' validation metrics per seed (×100,
	// undefined -1): what a rule that picks a predictor without test
	// labels can read.
	Val *EvalVal `json:"val,omitempty"`
	// FellBack is, per seed, whether the fallback check kept the
	// undebiased model: for fasd_gcn (classifier.fallback) the GCN on the
	// original features, for fasd (classifier.fallback_fasd) w/o
	// Diffusion's classifier.
	FellBack []bool `json:"fell_back,omitempty"`
	// Arch is, per seed, the architecture classifier.arch = "auto" chose
	// for the variant's classifier ("gcn" or "root"); absent otherwise.
	Arch []string `json:"arch,omitempty"`
	// ArchEvidence is, per seed, what that choice read on the validation
	// nodes (pipeline.ArchEvidence: the reason, both networks' AUC, the
	// bootstrap share, both ΔDP + ΔEO); absent with Arch.
	ArchEvidence []*pipeline.ArchEvidence `json:"arch_evidence,omitempty"`
	// Paired are the differences against each reference (none for a
	// reference against itself).
	Paired []EvalPaired `json:"paired,omitempty"`
}

// EvalVal are a variant's validation metrics per seed.
type EvalVal struct {
	Acc []float64 `json:"acc"`
	AUC []float64 `json:"auc"`
	DP  []float64 `json:"dp"`
	EO  []float64 `json:"eo"`
}

// EvalReport is the output of fasd eval --json (see the command's help for
// the schema).
type EvalReport struct {
	Preset     string        `json:"preset"`
	Seeds      []uint64      `json:"seeds"`
	Config     string        `json:"config"`
	Level      float64       `json:"level"`
	References []string      `json:"references"`
	Variants   []EvalVariant `json:"variants"`
	// Score holds, per seed (in the order of Seeds), FASD's score-network
	// training statistics; absent when fasd was not evaluated.
	Score []*pipeline.ScoreStats `json:"score,omitempty"`
	// Scope holds, per seed, the choice of sample.scope = "auto"; absent
	// when the sampling was fixed.
	Scope   []*pipeline.ScopeChoice `json:"scope,omitempty"`
	Seconds float64                 `json:"seconds"`
}

// cfOf is a variant's counterfactual share (NaN when not measured).
func cfOf(vr *pipeline.VariantResult) float64 {
	if vr.Counterfactual == nil {
		return math.NaN()
	}
	return float64(*vr.Counterfactual)
}

// safe maps NaN and ±Inf to -1, the EvalStat convention for undefined.
func safe(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return -1
	}
	return x
}

func stat(v []float64) EvalStat {
	s := fasd.Summarize(v)
	out := EvalStat{Mean: safe(s.Mean), Std: safe(s.Std), PerSeed: []float64{}}
	for _, x := range v {
		out.PerSeed = append(out.PerSeed, safe(x))
	}
	return out
}

func diff(x, ref []float64) EvalDiff {
	p := stats.PairedDiff(x, ref, evalLevel)
	out := EvalDiff{N: p.N, Mean: pipeline.Num(p.Mean), SD: pipeline.Num(p.SD), Lo: pipeline.Num(p.Lo), Hi: pipeline.Num(p.Hi),
		P: pipeline.Num(p.P), PerSeed: make([]pipeline.Num, len(p.Diffs))}
	for i, d := range p.Diffs {
		out.PerSeed[i] = pipeline.Num(d)
	}
	return out
}

// Metric indices of evalValues.
const (
	mAcc = iota
	mAUC
	mF1
	mMacroF1
	mDP
	mEO
	mProbe
	mCF
	nMetrics
)

// evalValues are one variant's per-seed values: Acc, ΔDP, ΔEO ×100 and the
// probe AUC (NaN where undefined or not run).
type evalValues struct {
	v         [nMetrics][]float64
	val       EvalVal
	fellBack  []bool
	arch      []string
	archEv    []*pipeline.ArchEvidence
	probeData string
}

const evalLong = `Eval runs the pipeline once per seed (nothing is stored) and prints, for
every variant, Acc, ROC AUC, F1 of class 1, macro-F1, ΔDP and ΔEO on the
test nodes ×100 as mean (population std) over the seeds, then the paired
differences against the reference variants and the per-seed values. AUC
and macro-F1 expose a constant predictor (AUC 50, macro-F1 ≤ 50) that
accuracy, ΔDP and ΔEO alone would flatter.

Variants: fasd and no_diffusion by default; --ablations runs fasd,
no_diffusion = w/o Diffusion, no_fairness = w/o Fairness and gcn = a plain
full-graph 2-layer GCN; --variants picks any of those and
  fasd_gcn   debias like fasd, average each node's debiased features over
             the subgraphs holding it, train the GCN baseline on them
             (with classifier.fallback, the default, it keeps the GCN on
             the original features unless the debiased one is fairer on
             the validation nodes at ≤ 0.02 AUC cost)
  mlp        the baseline's widths without the graph, original features
  majority   the validation labels' majority class for every node
All variants of a seed share its subgraphs and seeds, so their differences
are paired. classifier.fallback_fasd ("significant" in the default
profile) guards fasd against w/o Diffusion (trained for the check even
when not listed): "significant" drops the debiased classifier only where
a paired bootstrap of the validation nodes shows it less fair (ΔDP + ΔEO,
one-sided 5 %), "check" keeps it only where it is fairer there at ≤ 0.02
AUC cost; where it falls back, fasd reports, and train serves, w/o
Diffusion's classifier.

Decision and selection (classifier.decision, classifier.select): in the
default configuration the epoch kept is the one with the best validation
ROC AUC, and a node is of class 1 iff P(1) exceeds the threshold at which
that epoch predicts class 1 on as large a share of the validation nodes as
is labelled 1 there ("rate"); the paper presets keep 0.5 and validation
accuracy. Neither reads a test label. Other thresholds are options:
classifier.decision = "prior" (the training labels' positive rate
corrected to the validation labels'; the default before "rate"), "platt"
(logistic recalibration on the validation nodes) and "valacc" (best
validation accuracy).
classifier.select = "fair" (option) keeps the epoch with the best validation
AUC less classifier.select_alpha times the groups' ranking gaps (the
threshold-free counterparts of ΔDP and ΔEO) for the pipeline's classifiers;
gcn and mlp keep the AUC.
--scores FILE writes every variant's P(1) per node at its selected epoch
(JSON lines: per seed the split, labels and groups, then one line per
variant), so other decision rules can be studied without retraining.

Counterfactual fairness (CF, on by default): where a feature column
encodes the sensitive attribute (one value on every node of group 0,
another on every node of group 1, as NIFTY's loaders keep it), the share
of test predictions ×100 that change when that column is flipped on every
node at once, the selected model and threshold unchanged; fasd and
fasd_gcn debias the flipped features again (the group labels FASD's
fairness terms read are not flipped). Absent when no column encodes the
attribute; --counterfactual=false skips it.

Paired differences: for each variant and reference (default no_diffusion
and gcn, each when evaluated; --reference names others), the per-seed
difference variant − reference, its mean, the 95 % Student t confidence
interval on the per-seed differences (t with n − 1 degrees of freedom) and
the two-sided paired t-test p-value. In the table a '*' marks an interval
that excludes 0.

Probe AUC (on by default): for every variant a fresh sensitive-attribute
classifier (g_sen's architecture and schedule, lr ≥ 1e-3) is trained from
scratch on the variant's training data — the debiased subgraphs for fasd,
no_fairness and the --retune variants, the original ones for no_diffusion —
using the subgraphs rooted at train and validation nodes with the test
nodes' s hidden, and scored at the root of every test node's subgraph. The
ROC AUC says how much of s is left (0.5: nothing a probe can read). The
gcn reads the original graph: its probe is no_diffusion's (computed once).
It is a fraction in [0, 1], not ×100. Each probe costs about one g_sen
training on the train- and validation-rooted subgraphs; --probe=false
skips them.

JSON (--json): an object with
  preset       the config preset
  seeds        [uint]    the run seeds, in order; every per_seed array follows it
  config       the effective config (TOML)
  level        0.95      confidence level of the intervals
  references   [string]  the references used
  seconds      wall time of all runs
  scope        [object]  sample.scope = "auto": per seed, what the choice
               read and chose: wide (bool: the wide scope was taken), nets
               (GCNs and MLPs trained; 0 when label_ratio already refused
               the wide scope), gcn_auc and mlp_auc (their mean
               validation ROC AUCs, fractions; null without networks), margin (the gain the wide
               scope needs), label_ratio (the training and validation
               labels' smaller group-rate ratio over the two classes),
               min_ratio (the least the wide scope needs) and seconds (its
               wall time); absent when the sampling was fixed
  variants     [object], each with
    name        variant name (fasd, no_diffusion, gcn, fasd_gcn, fasd_prop, …, fasd@…)
    acc, auc, f1, macro_f1, dp, eo {mean, std, per_seed}  ×100; std is
                the population std; undefined values are -1
    probe_auc   {mean, std, per_seed}  fraction; absent with --probe=false
    probe_data  "original" or the variant whose debiased data the probe read
    counterfactual {mean, std, per_seed}  ×100 (see above); absent when not measured
    val         {acc, auc, dp, eo}  per seed, the selected epoch's metrics
                on the validation nodes (×100, undefined -1)
    fell_back   [bool]  fasd_gcn, fasd_prop (classifier.fallback) and fasd
                (classifier.fallback_fasd): per seed, whether the undebiased
                model was kept (the GCN on the original features for
                fasd_gcn, prop's model for fasd_prop, w/o Diffusion's
                classifier for fasd); the variant's figures are then that
                model's
    arch        [string]  classifier.arch = "auto": per seed, the
                architecture chosen for the variant's f ("gcn" or "root")
    arch_evidence [object]  per seed, what that choice read on the
                validation nodes: reason (root_better keeps the root
                weights; less_fair, auc_not_higher, not_significant and
                no_evidence keep the paper's f), root_auc and paper_auc
                (fractions), share (the share of bootstrap resamples with
                the paper's f ranking at least as well; root is
                significantly better at ≤ 0.05), root_unfair and
                paper_unfair (ΔDP + ΔEO, fractions) and, under
                classifier.arch_fair = "significant", fair_share (the share
                of resamples with root at least as fair; significantly less
                fair at ≤ 0.05); null where not reached
    paired      [object], one per reference other than the variant itself:
      reference  the reference variant
      acc, auc, f1, macro_f1, dp, eo, probe_auc, counterfactual  {n, mean, sd, lo, hi, p, per_seed}: per-seed
                 differences variant − reference (units as above), n seeds
                 with both values defined, their mean, sample std (n − 1),
                 95 % t interval [lo, hi] and p-value; null where undefined
                 (fewer than 2 seeds, or a seed's value undefined)
  score        [object]  per seed, FASD's score-network training: schedule,
               steps, subgraph_steps, final_loss_x/a and, for the budget
               schedule, budget, held_out (subgraphs), held_out_curve (the
               held-out loss at every check), held_out_best (the loss of the
               weights kept) and stopped_early; absent without fasd

A time estimate is printed before the runs start.

` + exitHelp

func newEvalCommand() *cobra.Command {
	o := &EvalOptions{}
	cmd := &cobra.Command{
		Use:   "eval --db DIR [--profile NAME] [--seeds 10] [--ablations] [--reference V,…] [--json]",
		Short: "Evaluate FASD over several seeds: Acc, ΔDP, ΔEO, probe AUC and paired differences with 95 % CIs",
		Long:  evalLong,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if o.DB == "" {
				return usagef("eval: --db DIR is required")
			}
			if o.Seeds < 1 {
				return usagef("eval: --seeds %d, want ≥ 1", o.Seeds)
			}
			cfg, err := o.Cfg.build(cmd)
			if err != nil {
				return err
			}
			variants := []pipeline.Variant{pipeline.VariantFASD, pipeline.VariantNoDiffusion}
			if o.Ablations {
				variants = pipeline.Variants()
			}
			if len(o.Variants) > 0 {
				if o.Ablations {
					return usagef("eval: --variants and --ablations exclude each other")
				}
				if variants, err = parseVariants(o.Variants, pipeline.AllVariants()); err != nil {
					return err
				}
			}
			var retune []pipeline.Retune
			if o.Retune != "" {
				if retune, err = pipeline.ParseRetune(o.Retune); err != nil {
					return usagef("eval: --retune: %v", err)
				}
				// Fail now, not after the first run's score training.
				for _, r := range retune {
					if _, err := r.Apply(cfg); err != nil {
						return usagef("eval: --retune: %v", err)
					}
				}
			}
			report := append([]pipeline.Variant(nil), variants...)
			for _, v := range []pipeline.Variant{pipeline.VariantFASD, pipeline.VariantNoFairness} {
				if !slices.Contains(variants, v) {
					continue
				}
				for _, r := range retune {
					report = append(report, pipeline.Variant(string(v)+"@"+r.Label()))
				}
			}
			refs, err := evalReferences(o.References, cmd.Flags().Changed("reference"), report)
			if err != nil {
				return err
			}
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			fmt.Fprintf(errOut, "# effective config\n%s\n", cfg.TOML())
			defer o.Cfg.applyMaxMemory(cmd.Context(), errOut)()
			s, g, err := openGraph(cmd.Context(), o.DB)
			if err != nil {
				return fmt.Errorf("eval: %w", err)
			}
			defer func() { err = errors.Join(err, s.Close()) }()
			view, err := g.View()
			if err != nil {
				return fmt.Errorf("eval: %w", err)
			}
			defer view.Close()
			withGraph := slices.ContainsFunc(variants, func(v pipeline.Variant) bool {
				return v == pipeline.VariantGCN || v == pipeline.VariantFASDGCN || v == pipeline.VariantMLP ||
					v == pipeline.VariantFASDProp || v == pipeline.VariantProp
			})
			start := time.Now()
			rep := EvalReport{Preset: cfg.Preset, Config: cfg.TOML(), Level: evalLevel, References: refs}
			vals := map[pipeline.Variant]*evalValues{}
			for _, v := range report {
				vals[v] = &evalValues{}
			}
			var scores *scoreWriter
			if o.Scores != "" {
				if scores, err = createScoreWriter(o.Scores); err != nil {
					return err
				}
				defer func() {
					if cerr := scores.close(); err == nil {
						err = cerr
					}
				}()
			}
			for k := 0; k < o.Seeds; k++ {
				c := cfg
				c.Seed = o.FirstSeed + uint64(k)
				rep.Seeds = append(rep.Seeds, c.Seed)
				fmt.Fprintf(errOut, "seed %d (%d of %d)\n", c.Seed, k+1, o.Seeds)
				in, err := runs.TrainInput(cmd.Context(), view, &c, withGraph)
				if err != nil {
					return fmt.Errorf("eval seed %d: %w", c.Seed, err)
				}
				if in.Scope != nil {
					fmt.Fprintf(errOut, "  scope: %s\n", in.Scope)
					rep.Scope = append(rep.Scope, in.Scope)
				}
				sp := &stageProgress{w: errOut}
				popt := &pipeline.Options{Variants: variants, Retune: retune, Probe: o.Probe, Callbacks: sp.callbacks(), Scratch: scratchFor(o.Spill),
					KeepScores: scores != nil, Counterfactual: o.Counterfactual}
				if scores != nil {
					if err := scores.seed(c.Seed, in); err != nil {
						return err
					}
				}
				if k == 0 {
					est, err := pipeline.EstimateRun(cmd.Context(), c, in, popt)
					if err != nil {
						return fmt.Errorf("eval seed %d: %w", c.Seed, err)
					}
					printEstimate(errOut, est, o.Seeds)
					if err := o.Cfg.checkLimits(est, o.Seeds); err != nil {
						return fmt.Errorf("eval: %w", err)
					}
				}
				res, err := pipeline.Run(cmd.Context(), c, in, popt)
				if err != nil {
					return fmt.Errorf("eval seed %d: %w", c.Seed, err)
				}
				if res.Score != nil {
					rep.Score = append(rep.Score, res.Score)
				}
				for _, vr := range res.Variants {
					if scores != nil {
						if err := scores.variant(c.Seed, &vr); err != nil {
							return err
						}
					}
					ev := vals[vr.Variant]
					if ev == nil {
						continue
					}
					auc := math.NaN()
					if vr.Probe != nil {
						auc, ev.probeData = float64(vr.Probe.AUC), vr.Probe.Data
					}
					vm := &vr.Val
					ev.val.Acc = append(ev.val.Acc, safe(100*float64(vm.Acc)))
					ev.val.AUC = append(ev.val.AUC, safe(100*float64(vm.AUC)))
					ev.val.DP = append(ev.val.DP, safe(100*float64(vm.DP)))
					ev.val.EO = append(ev.val.EO, safe(100*float64(vm.EO)))
					t := &vr.Test
					for m, x := range [nMetrics]float64{100 * float64(t.Acc), 100 * float64(t.AUC), 100 * float64(t.F1), 100 * float64(t.MacroF1),
						100 * float64(t.DP), 100 * float64(t.EO), auc, 100 * cfOf(&vr)} {
						ev.v[m] = append(ev.v[m], x)
					}
					line := fmt.Sprintf("  %-14s acc %s auc %s f1 %s macro-f1 %s dp %s eo %s", vr.Variant, pct(t.Acc), pct(t.AUC), pct(t.F1),
						pct(t.MacroF1), pct(t.DP), pct(t.EO))
					if vr.Probe != nil {
						line += " probe AUC " + frac(auc)
					}
					if vr.Counterfactual != nil {
						line += " cf " + pct(*vr.Counterfactual)
					}
					if vr.Arch != "" {
						ev.arch = append(ev.arch, vr.Arch)
						ev.archEv = append(ev.archEv, vr.ArchEvidence)
						line += " (f: " + vr.Arch + archWhy(vr.ArchEvidence) + ")"
					}
					switch vr.Variant {
					case pipeline.VariantFASDGCN, pipeline.VariantFASDProp:
						ev.fellBack = append(ev.fellBack, vr.FellBack)
						if vr.FellBack {
							line += " (fell back to the original features)"
						}
					case pipeline.VariantFASD:
						if pipeline.FallbackFASD(cfg.Classifier.FallbackFASD) != pipeline.FallbackOff {
							ev.fellBack = append(ev.fellBack, vr.FellBack)
						}
						if vr.FellBack {
							line += " (fell back to w/o Diffusion)"
						}
					}
					fmt.Fprintln(errOut, line)
				}
			}
			rep.Seconds = time.Since(start).Seconds()
			rep.Variants = evalVariants(report, vals, refs, o.Probe)
			if o.JSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			printEvalTable(out, &rep, o.PerSeed)
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// evalReferences returns the references of the paired differences: the
// named ones (each must be among the reported variants) or, by default,
// those of defaultReferences that are.
func evalReferences(named []string, explicit bool, report []pipeline.Variant) ([]string, error) {
	has := func(n string) bool { return slices.Contains(report, pipeline.Variant(n)) }
	refs := []string{}
	if !explicit {
		for _, r := range defaultReferences {
			if has(r) {
				refs = append(refs, r)
			}
		}
		return refs, nil
	}
	for _, r := range named {
		r = strings.TrimSpace(r)
		if r == "" || slices.Contains(refs, r) {
			continue
		}
		if !has(r) {
			names := make([]string, len(report))
			for i, v := range report {
				names[i] = string(v)
			}
			return nil, usagef("eval: --reference %s is not among the evaluated variants (%s); add it with --variants or --ablations",
				r, strings.Join(names, ", "))
		}
		refs = append(refs, r)
	}
	return refs, nil
}

// evalVariants summarises the per-seed values of the reported variants and
// pairs each against every reference but itself.
func evalVariants(report []pipeline.Variant, vals map[pipeline.Variant]*evalValues, refs []string, probe bool) []EvalVariant {
	var out []EvalVariant
	cf := false // some variant has a counterfactual share
	for _, v := range report {
		cf = cf || slices.ContainsFunc(vals[v].v[mCF], func(x float64) bool { return !math.IsNaN(x) })
	}
	for _, v := range report {
		a := vals[v]
		ev := EvalVariant{Name: string(v), Acc: stat(a.v[mAcc]), AUC: stat(a.v[mAUC]), F1: stat(a.v[mF1]), MacroF1: stat(a.v[mMacroF1]),
			DP: stat(a.v[mDP]), EO: stat(a.v[mEO]), FellBack: a.fellBack, Arch: a.arch, ArchEvidence: a.archEv}
		if len(a.val.Acc) > 0 {
			val := a.val
			ev.Val = &val
		}
		if probe {
			s := stat(a.v[mProbe])
			ev.ProbeAUC, ev.ProbeData = &s, a.probeData
		}
		if cf {
			s := stat(a.v[mCF])
			ev.Counterfactual = &s
		}
		for _, r := range refs {
			if r == string(v) {
				continue
			}
			b := vals[pipeline.Variant(r)]
			p := EvalPaired{Reference: r, Acc: diff(a.v[mAcc], b.v[mAcc]), AUC: diff(a.v[mAUC], b.v[mAUC]), F1: diff(a.v[mF1], b.v[mF1]),
				MacroF1: diff(a.v[mMacroF1], b.v[mMacroF1]), DP: diff(a.v[mDP], b.v[mDP]), EO: diff(a.v[mEO], b.v[mEO])}
			if probe {
				d := diff(a.v[mProbe], b.v[mProbe])
				p.ProbeAUC = &d
			}
			if cf {
				d := diff(a.v[mCF], b.v[mCF])
				p.Counterfactual = &d
			}
			ev.Paired = append(ev.Paired, p)
		}
		out = append(out, ev)
	}
	return out
}

// frac formats a probe AUC like ".870" (NaN as "n/a").
func frac(x float64) string {
	if math.IsNaN(x) || x < 0 {
		return "n/a"
	}
	return strings.Replace(fmt.Sprintf("%.3f", x), "0.", ".", 1)
}

func printEvalTable(w io.Writer, r *EvalReport, perSeed bool) {
	probe := len(r.Variants) > 0 && r.Variants[0].ProbeAUC != nil
	cf := len(r.Variants) > 0 && r.Variants[0].Counterfactual != nil
	seeds := make([]string, len(r.Seeds))
	for i, s := range r.Seeds {
		seeds[i] = fmt.Sprint(s)
	}
	fmt.Fprintf(w, "preset %s, %d seeds (%s); Acc, AUC, F1 (class 1), macro-F1, ΔDP, ΔEO ×100 as mean (population std)",
		r.Preset, len(r.Seeds), strings.Join(seeds, " "))
	if probe {
		fmt.Fprintf(w, "; probe AUC as a fraction")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	width := len("variant")
	for _, v := range r.Variants {
		width = max(width, len(v.Name))
	}
	ms := func(s EvalStat) string { return fmt.Sprintf("%.2f (%.2f)", s.Mean, s.Std) }
	fmt.Fprintf(w, "%-*s  %-14s %-14s %-14s %-14s %-14s %-14s", width, "variant", "Acc", "AUC", "F1", "macro-F1", "ΔDP", "ΔEO")
	if cf {
		fmt.Fprintf(w, " %-14s", "CF")
	}
	if probe {
		fmt.Fprintf(w, " %s", "probe AUC")
	}
	fmt.Fprintln(w)
	for _, v := range r.Variants {
		fmt.Fprintf(w, "%-*s  %-14s %-14s %-14s %-14s %-14s %-14s", width, v.Name, ms(v.Acc), ms(v.AUC), ms(v.F1), ms(v.MacroF1), ms(v.DP), ms(v.EO))
		if cf {
			fmt.Fprintf(w, " %-14s", ms(*v.Counterfactual))
		}
		if probe {
			fmt.Fprintf(w, " %s (%s)", frac(v.ProbeAUC.Mean), frac(v.ProbeAUC.Std))
			if v.ProbeData == pipeline.ProbeData {
				fmt.Fprintf(w, "  original data")
			}
		}
		fmt.Fprintln(w)
	}

	ci := func(d EvalDiff, f func(float64) string) string {
		if math.IsNaN(float64(d.Mean)) {
			return "n/a"
		}
		s := f(float64(d.Mean))
		if math.IsNaN(float64(d.Lo)) {
			return s + fmt.Sprintf(" (n=%d)", d.N)
		}
		s += " [" + f(float64(d.Lo)) + ", " + f(float64(d.Hi)) + "]"
		if d.Lo > 0 || d.Hi < 0 {
			s += "*"
		}
		return s
	}
	f2 := func(x float64) string { return fmt.Sprintf("%+.2f", x) }
	f3 := func(x float64) string { return fmt.Sprintf("%+.3f", x) }
	for _, ref := range r.References {
		paired := false
		for _, v := range r.Variants {
			for _, p := range v.Paired {
				paired = paired || p.Reference == ref
			}
		}
		if !paired {
			continue
		}
		fmt.Fprintf(w, "\npaired differences vs %s: variant − %s, mean [%.0f %% CI] over seeds (Student t); * = CI excludes 0\n",
			ref, ref, 100*r.Level)
		fmt.Fprintf(w, "%-*s  %-24s %-24s %-24s %-24s %-24s", width, "variant", "Acc", "AUC", "macro-F1", "ΔDP", "ΔEO")
		if cf {
			fmt.Fprintf(w, " %-24s", "CF")
		}
		if probe {
			fmt.Fprintf(w, " %s", "probe AUC")
		}
		fmt.Fprintln(w)
		for _, v := range r.Variants {
			for _, p := range v.Paired {
				if p.Reference != ref {
					continue
				}
				fmt.Fprintf(w, "%-*s  %-24s %-24s %-24s %-24s %-24s", width, v.Name, ci(p.Acc, f2), ci(p.AUC, f2), ci(p.MacroF1, f2), ci(p.DP, f2), ci(p.EO, f2))
				if cf && p.Counterfactual != nil {
					fmt.Fprintf(w, " %-24s", ci(*p.Counterfactual, f2))
				}
				if probe && p.ProbeAUC != nil {
					fmt.Fprintf(w, " %s", ci(*p.ProbeAUC, f3))
				}
				fmt.Fprintln(w)
			}
		}
	}

	printVerdict(w, r)

	// block prints one value per variant and seed; signed blocks hold
	// differences (NaN undefined), the others EvalStat values (-1
	// undefined).
	block := func(title string, rows func(v EvalVariant) ([]float64, bool), f string, signed bool) {
		fmt.Fprintf(w, "\n%s\n%-*s ", title, width, "seed")
		for _, s := range seeds {
			fmt.Fprintf(w, " %7s", s)
		}
		fmt.Fprintln(w)
		for _, v := range r.Variants {
			vs, ok := rows(v)
			if !ok {
				continue
			}
			fmt.Fprintf(w, "%-*s ", width, v.Name)
			for _, x := range vs {
				if math.IsNaN(x) || !signed && x < 0 {
					fmt.Fprintf(w, " %7s", "n/a")
				} else {
					fmt.Fprintf(w, " "+f, x)
				}
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintf(w, "\nper seed")
	block("Acc", func(v EvalVariant) ([]float64, bool) { return v.Acc.PerSeed, true }, "%7.2f", false)
	block("AUC", func(v EvalVariant) ([]float64, bool) { return v.AUC.PerSeed, true }, "%7.2f", false)
	block("F1 (class 1)", func(v EvalVariant) ([]float64, bool) { return v.F1.PerSeed, true }, "%7.2f", false)
	block("macro-F1", func(v EvalVariant) ([]float64, bool) { return v.MacroF1.PerSeed, true }, "%7.2f", false)
	block("ΔDP", func(v EvalVariant) ([]float64, bool) { return v.DP.PerSeed, true }, "%7.2f", false)
	block("ΔEO", func(v EvalVariant) ([]float64, bool) { return v.EO.PerSeed, true }, "%7.2f", false)
	if cf {
		block("CF (counterfactual share)", func(v EvalVariant) ([]float64, bool) { return v.Counterfactual.PerSeed, true }, "%7.2f", false)
	}
	if probe {
		block("probe AUC", func(v EvalVariant) ([]float64, bool) { return v.ProbeAUC.PerSeed, true }, "%7.3f", false)
	}
	if perSeed {
		nums := func(d EvalDiff) []float64 {
			out := make([]float64, len(d.PerSeed))
			for i, x := range d.PerSeed {
				out[i] = float64(x)
			}
			return out
		}
		for _, ref := range r.References {
			pick := func(get func(p EvalPaired) *EvalDiff) func(v EvalVariant) ([]float64, bool) {
				return func(v EvalVariant) ([]float64, bool) {
					for _, p := range v.Paired {
						if p.Reference == ref && get(p) != nil {
							return nums(*get(p)), true
						}
					}
					return nil, false
				}
			}
			block("Acc − "+ref, pick(func(p EvalPaired) *EvalDiff { return &p.Acc }), "%+7.2f", true)
			block("AUC − "+ref, pick(func(p EvalPaired) *EvalDiff { return &p.AUC }), "%+7.2f", true)
			block("macro-F1 − "+ref, pick(func(p EvalPaired) *EvalDiff { return &p.MacroF1 }), "%+7.2f", true)
			block("ΔDP − "+ref, pick(func(p EvalPaired) *EvalDiff { return &p.DP }), "%+7.2f", true)
			block("ΔEO − "+ref, pick(func(p EvalPaired) *EvalDiff { return &p.EO }), "%+7.2f", true)
			if probe {
				block("probe AUC − "+ref, pick(func(p EvalPaired) *EvalDiff { return p.ProbeAUC }), "%+7.3f", true)
			}
		}
	}
	fmt.Fprintf(w, "\ntotal %.1fs\n", r.Seconds)
}

// verdictPairs are the comparisons printVerdict puts in words, each when
// both variants were evaluated and the second is a reference: the
// debiasing against its own pipeline without it, and each fair variant
// against the plain GCN a user would otherwise run.
var verdictPairs = [][2]pipeline.Variant{
	{pipeline.VariantFASD, pipeline.VariantNoDiffusion},
	{pipeline.VariantFASD, pipeline.VariantGCN},
	{pipeline.VariantFASDGCN, pipeline.VariantGCN},
	{pipeline.VariantFASDProp, pipeline.VariantGCN},
	{pipeline.VariantFASDProp, pipeline.VariantProp},
}

// printVerdict says in words how fasd (and fasd_gcn) compare with the
// references of verdictPairs: for each measure, lower or higher when the
// confidence interval excludes 0, "no significant difference" otherwise.
func printVerdict(w io.Writer, r *EvalReport) {
	for _, pair := range verdictPairs {
		printVerdictOf(w, r, string(pair[0]), string(pair[1]))
	}
}

func printVerdictOf(w io.Writer, r *EvalReport, name, ref string) {
	for _, v := range r.Variants {
		if v.Name != name {
			continue
		}
		for _, p := range v.Paired {
			if p.Reference != ref {
				continue
			}
			word := func(d EvalDiff, unit string) string {
				switch {
				case math.IsNaN(float64(d.Lo)):
					return "not enough seeds"
				case d.Hi < 0:
					return fmt.Sprintf("lower by %.3g%s (significant)", -float64(d.Mean), unit)
				case d.Lo > 0:
					return fmt.Sprintf("higher by %.3g%s (significant)", float64(d.Mean), unit)
				}
				return fmt.Sprintf("no significant difference (%+.3g%s)", float64(d.Mean), unit)
			}
			fmt.Fprintf(w, "\nverdict, %s vs %s over %d seeds (lower ΔDP/ΔEO is fairer):\n", name, ref, len(r.Seeds))
			fmt.Fprintf(w, "  ΔDP %s\n  ΔEO %s\n  Acc %s\n  AUC %s\n", word(p.DP, " points"), word(p.EO, " points"), word(p.Acc, " points"),
				word(p.AUC, " points"))
			if p.ProbeAUC != nil {
				fmt.Fprintf(w, "  probe AUC %s\n", word(*p.ProbeAUC, ""))
			}
			fairer := p.DP.Hi < 0 || p.EO.Hi < 0
			worse := p.DP.Lo > 0 || p.EO.Lo > 0
			switch {
			case fairer && !worse:
				fmt.Fprintf(w, "  → %s is fairer than %s on this graph\n", name, ref)
			case worse && !fairer:
				fmt.Fprintf(w, "  → %s is LESS fair than %s on this graph\n", name, ref)
			default:
				fmt.Fprintf(w, "  → no clear fairness gain over %s on this graph\n", ref)
			}
		}
	}
}

// archWhy is the table's note on the choice of classifier.arch = "auto":
// the figures that decided it.
func archWhy(e *pipeline.ArchEvidence) string {
	if e == nil {
		return ""
	}
	auc := func(x pipeline.Num) string { return fmt.Sprintf("%.3f", float64(x)) }
	switch e.Reason {
	case pipeline.ArchRootBetter:
		s := fmt.Sprintf(", validation AUC root %s vs %s, share %s", auc(e.RootAUC), auc(e.PaperAUC), auc(e.Share))
		if !math.IsNaN(float64(e.FairShare)) {
			s += fmt.Sprintf("; ΔDP+ΔEO %s vs %s, not significantly larger: fair share %s", pct(e.RootUnfair), pct(e.PaperUnfair), auc(e.FairShare))
		}
		return s
	case pipeline.ArchNotSignificant:
		return fmt.Sprintf(", root's validation AUC %s vs %s not significant: share %s", auc(e.RootAUC), auc(e.PaperAUC), auc(e.Share))
	case pipeline.ArchNotHigher:
		return fmt.Sprintf(", root's validation AUC %s not above %s", auc(e.RootAUC), auc(e.PaperAUC))
	case pipeline.ArchLessFair:
		s := fmt.Sprintf(", root less fair on validation: ΔDP+ΔEO %s vs %s", pct(e.RootUnfair), pct(e.PaperUnfair))
		if !math.IsNaN(float64(e.FairShare)) {
			s += ", fair share " + auc(e.FairShare)
		}
		return s
	}
	return ", no evidence on validation"
}
