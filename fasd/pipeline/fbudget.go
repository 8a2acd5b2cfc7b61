package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/nn"
)

// FBudgetStats summarises a run of f under classifier.schedule = "budget".
type FBudgetStats struct {
	// Budget is the planned subgraph-steps, Steps the optimizer steps
	// taken (batches drawn) and SubgraphSteps the subgraphs they drew.
	Budget        int `json:"budget"`
	Steps         int `json:"steps"`
	SubgraphSteps int `json:"subgraph_steps"`
	// EvalEvery is the number of steps between evaluations and Evals the
	// evaluations made.
	EvalEvery int `json:"eval_every"`
	Evals     int `json:"evals"`
	// ValNodes is the number of validation nodes evaluated during training
	// and ValSubgraphs the number of subgraphs containing at least one of
	// them (what one evaluation costs).
	ValNodes     int `json:"val_nodes"`
	ValSubgraphs int `json:"val_subgraphs"`
	// BestStep is the step after which the kept weights were evaluated
	// (-1: no evaluation improved), StoppedEarly whether patience ended
	// training before the budget.
	BestStep     int  `json:"best_step"`
	StoppedEarly bool `json:"stopped_early,omitempty"`
}

// fPlan is the step schedule of f under the "budget" schedule.
type fPlan struct {
	budget    int // subgraph-steps planned
	steps     int // optimizer steps planned
	evalEvery int // steps between evaluations
	evals     int // evaluations if no early stop
}

// planClassifier sizes f's budget schedule for m subgraphs.
func planClassifier(fc *ClassifierConfig, m int) fPlan {
	p := fPlan{budget: fc.Budget}
	if p.budget == 0 {
		p.budget = ClassifierBudget(m, fc.Batch, fc.Epochs)
	}
	p.steps = max(1, (p.budget+fc.Batch-1)/fc.Batch)
	p.evalEvery = max(1, p.steps/max(1, fc.Evals))
	p.evals = (p.steps + p.evalEvery - 1) / p.evalEvery
	return p
}

// ClassifierUnits is the number of progress units of f's stage (and of
// the other stages that train f) for m subgraphs: epochs, or optimizer
// steps under the "budget" schedule.
func ClassifierUnits(cfg *Config, m int) int {
	n := 1
	if Arch(cfg.Classifier.Arch) == ArchAuto {
		n = 2 // both architectures, one after the other
	}
	return n * classifierArmUnits(cfg, m)
}

// classifierArmUnits is ClassifierUnits for one network.
func classifierArmUnits(cfg *Config, m int) int {
	if cfg.Classifier.Schedule == ClassBudget {
		return planClassifier(&cfg.Classifier, m).steps
	}
	return cfg.Classifier.Epochs
}

// expectFSteps is the number of optimizer steps EstimateRun expects the
// budget schedule to take: the evaluation it stops at is the mean stop of
// a best evaluation uniform over the schedule (expectEpochsUniform over
// evaluations), never more than the plan.
func expectFSteps(fc *ClassifierConfig, p fPlan) float64 {
	e := expectEpochsUniform(p.evals, fc.EvalPatience)
	return math.Min(float64(p.steps), e*float64(p.evalEvery))
}

// fValNodes returns the validation nodes f's budget schedule evaluates
// on: all of val (sorted ascending) when there are at most limit of them
// or limit is 0, else limit of them drawn with rng, ascending. Only
// validation nodes are read, never a label.
func fValNodes(val []uint32, limit int, rng *rand.Rand) []uint32 {
	if limit == 0 || len(val) <= limit {
		return slices.Clone(val)
	}
	perm := rng.Perm(len(val))[:limit]
	out := make([]uint32, limit)
	for k, i := range perm {
		out[k] = val[i]
	}
	slices.Sort(out)
	return out
}

// fValRand is the random stream of the validation sample of f's budget
// schedule: from the run seed, so every variant of a run (and the
// estimate) validates on the same nodes.
func fValRand(cfg *Config) *rand.Rand {
	return fasd.NewRand(fasd.DeriveSeed(cfg.Seed, purposeFValSample))
}

// coveringSubgraphs returns, ascending, the indexes of the subgraphs of
// sgs that contain at least one of nodes (numNodes bounds the node ids):
// the averaged prediction of each of nodes needs these and no other.
func coveringSubgraphs(sgs []*fasd.Subgraph, nodes []uint32, numNodes int) []int {
	mark := make([]bool, numNodes)
	for _, u := range nodes {
		mark[u] = true
	}
	var out []int
	for i, g := range sgs {
		for _, u := range g.Nodes {
			if mark[u] {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// trainClassifierBudget trains f (§10) under classifier.schedule =
// "budget" (docs/method.md §17): plan.steps mini-batches drawn from the
// subgraphs in shuffled passes (cycling), the loss as trainClassifier's;
// after every plan.evalEvery steps (and the last) the criterion of
// classifier.select on a fixed sample of at most classifier.val_cap
// validation nodes, averaged over the subgraphs that contain them (and no
// other); training stops after classifier.eval_patience evaluations
// without a strictly better criterion. The best evaluation's weights are
// then evaluated once on every subgraph: the reported validation and test
// metrics and the decision threshold come from that full pass, as under
// the "epochs" schedule. BestEpoch is the index of the best evaluation and
// ValCurve the sample's accuracy at every evaluation.
func trainClassifierBudget(ctx context.Context, cfg *Config, v *view, d int, w *nn.Workers[float32], ev *evalData,
	variant Variant, initSeed, trainSeed uint64, rep *reporter) (*nn.GCNNet[float32], VariantResult, error) {
	c, err := newClassifierRun(cfg, v, d, w, ev, variant, initSeed)
	if err != nil {
		return nil, VariantResult{}, err
	}
	net, best, t, opt, sel, fc := c.net, c.best, c.t, c.opt, c.sel, cfg.Classifier
	m := len(v.sgs)
	plan := planClassifier(&fc, m)
	st := &FBudgetStats{Budget: plan.budget, EvalEvery: plan.evalEvery, BestStep: -1}

	// The validation sample and the subgraphs that cover it, fixed for
	// the stage.
	nodes := fValNodes(ev.val, fc.ValCap, fValRand(cfg))
	cover := coveringSubgraphs(v.sgs, nodes, ev.numNodes)
	st.ValNodes, st.ValSubgraphs = len(nodes), len(cover)
	y := make([]int8, len(nodes))
	for k, u := range nodes {
		y[k] = ev.labels[u]
	}
	pred, scores := make([]int8, len(nodes)), make([]float64, len(nodes))
	evalIdx, evalN := rep.evalSet(cover, m)
	probs := make([][]float32, slotsFor(evalIdx, m))
	var curve []Num
	bestCrit, bestEval, bad := math.Inf(-1), -1, 0
	evaluate := func() (acc float64, stop bool, err error) {
		err = rep.timed(evalN, func() error {
			return classProbsOn(ctx, net, v, evalIdx, d, w.N(), probs)
		})
		if err != nil {
			return 0, false, err
		}
		err = rep.timedFixed(func() error {
			p1, err := sel.averagedOn(v, probs, cover)
			if err != nil {
				return err
			}
			var crit float64
			if acc, crit, err = sel.criterion(p1, nodes, y, pred, scores); err != nil {
				return err
			}
			curve = append(curve, Num(acc))
			if crit > bestCrit {
				bestCrit, bestEval, bad = crit, len(curve)-1, 0
				st.BestStep = st.Steps
				nn.CopyParams(best.Params(), net.Params())
			} else {
				bad++
			}
			return nil
		})
		if err != nil {
			return acc, false, err
		}
		return acc, fc.EvalPatience > 0 && bad >= fc.EvalPatience, nil
	}

	err = func() error {
		defer releaseTapes(w)
		params := net.Params()
		order := make([]int, m)
		for i := range order {
			order[i] = i
		}
		rng := fasd.NewRand(trainSeed)
		nb := (m + fc.Batch - 1) / fc.Batch
		start := time.Now()
		pass, cnt := 0, 0
		sum, acc := 0.0, math.NaN()
		for st.Steps < plan.steps {
			b := st.Steps % nb
			if b == 0 {
				rng.Shuffle(m, func(i, j int) { order[i], order[j] = order[j], order[i] })
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			t.batch = order[b*fc.Batch : min(m, (b+1)*fc.Batch)]
			t.norm = t.batchNorm()
			if t.norm != 0 {
				nn.ZeroGrads(params)
				loss := w.Step(len(t.batch), rng, t.fn)
				for k := range t.shards {
					if err := t.shards[k].err; err != nil {
						t.shards[k].err = nil
						return err
					}
				}
				opt.Step()
				sum += float64(loss)
				cnt++
			}
			st.Steps++
			st.SubgraphSteps += len(t.batch)
			stop := false
			if st.Steps%plan.evalEvery == 0 || st.Steps == plan.steps {
				var err error
				if acc, stop, err = evaluate(); err != nil {
					return fmt.Errorf("validation at step %d: %w", st.Steps, err)
				}
				if len(curve) == 1 {
					// The first evaluation times the expected steps.
					rep.estimate(time.Duration(float64(time.Since(start)) / float64(st.Steps) * expectFSteps(&fc, plan)))
				}
			}
			if b == nb-1 || st.Steps == plan.steps || stop {
				// End of a pass (or of training): the pass's mean batch
				// loss and the latest validation accuracy.
				loss := math.NaN()
				if cnt > 0 {
					loss = sum / float64(cnt)
				}
				rep.epoch(pass, loss, acc)
				pass++
				sum, cnt = 0, 0
			}
			rep.progress(st.Steps)
			if stop {
				st.StoppedEarly = st.Steps < plan.steps
				break
			}
		}
		return nil
	}()
	if err != nil {
		return nil, VariantResult{}, err
	}
	st.Evals = len(curve)
	// One pass over every subgraph with the kept weights: the reported
	// metrics and the threshold, as under the "epochs" schedule.
	var p1 []float64
	err = rep.timed(m, func() (err error) {
		if err := classProbs(ctx, best, v, d, w.N(), probs); err != nil {
			return err
		}
		p1, err = sel.averaged(v, probs[:m])
		return err
	})
	if err != nil {
		return nil, VariantResult{}, err
	}
	if bestEval >= 0 {
		if _, _, err := sel.observe(bestEval, p1); err != nil {
			return nil, VariantResult{}, err
		}
	}
	sel.res.ValCurve = curve
	sel.res.FBudget = st
	res, err := sel.result()
	return best, res, err
}
