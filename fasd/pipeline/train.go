package pipeline

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/autodiff"
	"github.com/fasd-db/fasd/fasd/nn"
	"github.com/fasd-db/fasd/fasd/tensor"
)

// Seed purposes of the pipeline's own random streams, derived from the run
// seed with fasd.DeriveSeed(seed, purpose, ...). They continue the numbering
// of fasd.PurposeSample (1) and fasd.PurposeDebias (2).
const (
	purposeGSenInit   = 101
	purposeGSenTrain  = 102
	purposeScoreInit  = 103
	purposeScoreOrder = 104
	purposeScoreDraw  = 105
	purposeFInit      = 106
	purposeFTrain     = 107
	purposeProbe      = 108
	purposeHeldOut    = 109
	purposeBaseline   = 110
	// purposeScoreHeldOut draws the fixed (t, ε) of the held-out score loss.
	purposeScoreHeldOut = 111
	// purposeFValSample draws the validation nodes f's budget schedule
	// validates on.
	purposeFValSample = 112
	// purposeFallback draws the bootstrap resamples of
	// classifier.fallback_fasd = "significant".
	purposeFallback = 120
	// purposeArch draws the bootstrap resamples of classifier.arch =
	// "auto" (derived from f's training seed).
	purposeArch = 121
	// purposeScope seeds the networks of sample.scope = "auto".
	purposeScope = 122
)

// padBuf is one padded batch: X (B×N×D), A (B×N×N) and the node mask,
// N = the largest subgraph of the batch.
type padBuf struct {
	X, A tensor.Dense[float32]
	mask []float32
	n    int
}

func (p *padBuf) build(v *view, idx []int, d int) error {
	n := 1
	for _, i := range idx {
		n = max(n, v.sgs[i].N())
	}
	b := len(idx)
	p.n = n
	p.X.Resize(tensor.S(b, n, d))
	p.A.Resize(tensor.S(b, n, n))
	clear(p.X.Data)
	clear(p.A.Data)
	p.mask = resizeF(p.mask, b*n)
	clear(p.mask)
	for k, i := range idx {
		gn := v.sgs[i].N()
		if err := v.fillX(i, p.X.Data[k*n*d:(k*n+gn)*d]); err != nil {
			return err
		}
		if err := v.scatterA(i, p.A.Data[k*n*n:(k+1)*n*n], n); err != nil {
			return err
		}
		for r := 0; r < gn; r++ {
			p.mask[k*n+r] = 1
		}
	}
	return nil
}

// releaseTapes ends a training stage on w: the workers' tapes, whose arenas
// are sized by the stage's largest batch (hundreds of MiB for the score
// networks), are handed back and collected at once. Without the collection
// the heap goal set while those arenas were live (twice their size) would
// let the next stages' garbage pile up to it before any collection; with it
// the peak memory of a run is that of its largest stage, not the sum.
func releaseTapes(w *nn.Workers[float32]) {
	w.Release()
	runtime.GC()
}

func resizeF(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

func resizeI(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n)
	}
	return b[:n]
}

// netKind selects what a GCNNet trainer fits.
type netKind uint8

const (
	kindSens  netKind = iota // g_sen / probe: BCE on s, per-subgraph sum, mean over batch
	kindClass                // f: CE on train labels, mean over occurrences
)

// netTrainer trains a GCNNet (g_sen, a probe or f) on a view with
// mini-batches shared across nn.Workers shards.
type netTrainer struct {
	net        *nn.GCNNet[float32]
	kind       netKind
	rootOnly   bool // kindClass: the loss reads the roots alone (ReadoutRoot)
	trainScope bool // kindSens: only train-split nodes carry s labels
	patience   int  // early-stopping patience, for the time estimate
	v          *view
	d          int
	batch      []int
	norm       float32
	shards     []netShard
	fn         nn.ShardFunc[float32]
}

type netShard struct {
	err    error // a failed read of the batch's features
	pad    padBuf
	target []float32
	weight []float32
	labels []int32
}

func newNetTrainer(net *nn.GCNNet[float32], kind netKind, v *view, d, workers int) *netTrainer {
	t := &netTrainer{net: net, kind: kind, v: v, d: d, shards: make([]netShard, workers)}
	t.fn = t.shard
	return t
}

// expectEpochs is the number of epochs EstimateRun expects the trainer
// to run: f by expectEpochs, g_sen and the probes by expectEpochsUniform.
func (t *netTrainer) expectEpochs(epochs int) float64 {
	if t.kind == kindSens {
		return expectEpochsUniform(epochs, t.patience)
	}
	return expectEpochs(epochs, t.patience)
}

// weightOf says whether local node u of subgraph g contributes to the loss.
func (t *netTrainer) weightOf(g *fasd.Subgraph, u int) bool {
	if t.kind == kindClass {
		return g.Split[u] == fasd.SplitTrain && g.Y[u] >= 0 && (u == 0 || !t.rootOnly)
	}
	return g.S[u] >= 0 && (!t.trainScope || g.Split[u] == fasd.SplitTrain)
}

func (t *netTrainer) shard(s *nn.Shard[float32]) *autodiff.Var[float32] {
	sc := &t.shards[s.Index]
	idx := t.batch[s.Lo:s.Hi]
	if err := sc.pad.build(t.v, idx, t.d); err != nil {
		sc.err = err
		return nil
	}
	n := sc.pad.n
	rows := len(idx) * n
	sc.weight = resizeF(sc.weight, rows)
	clear(sc.weight)
	has := false
	if t.kind == kindClass {
		sc.labels = resizeI(sc.labels, rows)
	} else {
		sc.target = resizeF(sc.target, rows)
		clear(sc.target)
	}
	for k, i := range idx {
		g := t.v.sgs[i]
		for u := 0; u < g.N(); u++ {
			r := k*n + u
			if t.kind == kindClass {
				sc.labels[r] = int32(g.Y[u])
			} else if g.S[u] >= 0 {
				sc.target[r] = float32(g.S[u])
			}
			if t.weightOf(g, u) {
				sc.weight[r] = 1
				has = true
			}
		}
		for u := g.N(); u < n && t.kind == kindClass; u++ {
			sc.labels[k*n+u] = -1
		}
	}
	if !has {
		return nil
	}
	tp := s.Tape
	x, a := tp.Input(sc.pad.X, false), tp.Input(sc.pad.A, false)
	z := t.net.Forward(tp, x, a, sc.pad.mask, s.Drop)
	if t.kind == kindClass {
		return tp.SoftmaxNLL(z, sc.labels, sc.weight, t.norm)
	}
	return tp.BCEWithLogits(z, sc.target, sc.weight, t.norm)
}

// batchNorm returns the loss normaliser of the current batch: the number of
// subgraphs (kindSens) or of weighted node occurrences (kindClass; 0 means
// the batch has nothing to learn from).
func (t *netTrainer) batchNorm() float32 {
	if t.kind == kindSens {
		return float32(len(t.batch))
	}
	c := 0
	for _, i := range t.batch {
		g := t.v.sgs[i]
		for u := 0; u < g.N(); u++ {
			if t.weightOf(g, u) {
				c++
			}
		}
	}
	return float32(c)
}

// trainLoop runs epochs of shuffled mini-batches over idx. After every epoch
// it calls after(epoch) (may be nil), whose returned value is reported as
// the validation accuracy and which can stop training early. The first
// batches give the stage's time estimate. It returns the last epoch's mean
// batch loss and releases the workers' tapes (releaseTapes).
func trainLoop(ctx context.Context, w *nn.Workers[float32], t *netTrainer, opt *nn.Adam[float32], idx []int,
	epochs, batch int, rng *rand.Rand, rep *reporter, after func(epoch int) (float64, bool, error)) (float64, error) {
	defer releaseTapes(w)
	params := t.net.Params()
	order := append([]int(nil), idx...)
	nb := (len(order) + batch - 1) / batch
	var last float64
	start := time.Now()
	for ep := 0; ep < epochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var sum float64
		cnt := 0
		for b := 0; b < nb; b++ {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			t.batch = order[b*batch : min(len(order), (b+1)*batch)]
			t.norm = t.batchNorm()
			if t.norm == 0 {
				continue
			}
			nn.ZeroGrads(params)
			loss := w.Step(len(t.batch), rng, t.fn)
			for k := range t.shards {
				if err := t.shards[k].err; err != nil {
					t.shards[k].err = nil
					return 0, err
				}
			}
			opt.Step()
			sum += float64(loss)
			cnt++
		}
		last = math.NaN()
		if cnt > 0 {
			last = sum / float64(cnt)
		}
		acc := math.NaN()
		stop := false
		if after != nil {
			var err error
			if acc, stop, err = after(ep); err != nil {
				return 0, err
			}
		}
		if ep == 0 {
			// The first epoch, with its held-out or validation check,
			// times the expected epochs (as EstimateRun).
			rep.estimate(time.Duration(float64(time.Since(start)) * t.expectEpochs(epochs)))
		}
		rep.epoch(ep, last, acc)
		rep.progress(ep + 1)
		if stop {
			break
		}
	}
	return last, nil
}

// patience counts epochs without improvement: observe(improved) returns
// true once limit consecutive epochs did not improve (never for limit 0).
type patience struct{ limit, bad int }

func (p *patience) observe(improved bool) bool {
	if improved {
		p.bad = 0
		return false
	}
	p.bad++
	return p.limit > 0 && p.bad >= p.limit
}
