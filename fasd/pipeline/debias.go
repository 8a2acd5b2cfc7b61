package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fasd-db/fasd/fasd"
)

// debiasChunk is the number of subgraphs debiased between progress
// reports, shared out among the workers, each debiasing its share as one
// padded batch. A batch's activations should stay in the core's cache: at
// 64 (32 per worker on two) the attention layers' Q, K and V of a batch of
// 21-node subgraphs take about 2 MiB and are read back from memory; at 32
// the debias benchmark's process takes 0.89 of the CPU time on two workers
// and a quarter of the memory (BENCHMARKS.md).
const debiasChunk = 32

// debiasEstimateChunks is the chunk after which the debias stage estimates
// its time (from the chunks after the first): about 250 subgraphs.
const debiasEstimateChunks = 8

// debiasAll debiases every subgraph of v with the score networks of m
// (§8, §9), each root with its own generator
// fasd.NewRand(fasd.RootSeed(seed, fasd.PurposeDebias, root)), and returns
// the debiased view. With newScratch the debiased features go to a Scratch
// it creates (the view's spill, released by view.close) instead of the
// heap; the adjacency stays in memory either way, compact.
func debiasAll(ctx context.Context, m *Models, v *view, workers int, newScratch func() (Scratch, error), rep *reporter) (out *view, err error) {
	out = &view{sgs: v.sgs, d: m.D, as: make([]fasd.SparseAdj, len(v.sgs))}
	if newScratch != nil {
		s, err := newScratch()
		if err != nil {
			return nil, fmt.Errorf("scratch for the debiased features: %w", err)
		}
		out.sp = newSpill(s, v.sgs, m.D)
		defer func() {
			if err != nil {
				err = errors.Join(err, out.close())
				out = nil
			}
		}()
	} else {
		out.xs = make([][]float32, len(v.sgs))
	}
	engines := make([]*Engine, workers)
	for i := range engines {
		e, err := m.NewEngine()
		if err != nil {
			return nil, err
		}
		engines[i] = e
	}
	start := time.Now()
	var first time.Time // the end of the first chunk
	items := make([][]fasd.DebiasItem, workers)
	// Per worker and item: the input features (when v does not hold them),
	// the debiased ones (when they are spilled), the input adjacency and
	// the debiased one (both dense while the item runs).
	x0s, dsts := make([][][]float32, workers), make([][][]float32, workers)
	a0s, dstAs := make([][][]float32, workers), make([][][]float32, workers)
	for lo := 0; lo < len(v.sgs); lo += debiasChunk {
		hi := min(len(v.sgs), lo+debiasChunk)
		sub := (hi - lo + workers - 1) / workers
		err := parallelFor(ctx, workers, workers, func(w, k int) error {
			e := engines[w]
			its := items[w][:0]
			for i := lo + k*sub; i < min(hi, lo+(k+1)*sub); i++ {
				g := v.sgs[i]
				n := g.N()
				j := len(its)
				if j == len(x0s[w]) {
					x0s[w], dsts[w] = append(x0s[w], nil), append(dsts[w], nil)
					a0s[w], dstAs[w] = append(a0s[w], nil), append(dstAs[w], nil)
				}
				x0, err := v.x(i, x0s[w][j])
				if err != nil {
					return err
				}
				if !v.holds(i) {
					x0s[w][j] = x0 // the grown buffer, for the next chunk
				}
				var dx []float32
				if out.sp != nil {
					dsts[w][j] = resizeF(dsts[w][j], n*m.D)
					dx = dsts[w][j]
					clear(dx)
				} else {
					dx = make([]float32, n*m.D)
					out.xs[i] = dx
				}
				a0, err := v.a(i, a0s[w][j])
				if err != nil {
					return err
				}
				a0s[w][j] = a0
				dstAs[w][j] = resizeF(dstAs[w][j], n*n)
				rng := fasd.NewRand(fasd.RootSeed(m.Config.Seed, fasd.PurposeDebias, g.Root()))
				its = append(its, fasd.DebiasItem{N: n, X0: x0, A0: a0, Rng: rng, DstX: dx, DstA: dstAs[w][j]})
			}
			items[w] = its
			if len(its) == 0 {
				return nil
			}
			if err := e.DebiasBatch(ctx, its); err != nil {
				return err
			}
			for j, it := range its {
				out.as[lo+k*sub+j] = fasd.CompactAdj(it.DstA, it.N)
				if out.sp != nil {
					if err := out.sp.write(lo+k*sub+j, it.DstX); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		// The stage's time from its first chunks: the first carries the
		// warm-up (the engines' tapes growing), so the rate is that of the
		// chunks after it, and only what is still to come is extrapolated.
		if lo == 0 {
			first = time.Now()
		}
		if c := debiasEstimateChunks * debiasChunk; hi == c && hi < len(v.sgs) {
			rate := float64(time.Since(first)) / float64(hi-debiasChunk)
			rep.estimate(time.Since(start) + time.Duration(rate*float64(len(v.sgs)-hi)))
		}
		rep.progress(hi)
	}
	return out, nil
}

// EditStats measure how much debiasing changed the subgraphs (§14).
type EditStats struct {
	// FeatureChange is ‖X̃ − X‖/‖X‖ over all subgraphs together.
	FeatureChange Num `json:"feature_change"`
	// FeatureRMSE is the root mean square feature change per entry.
	FeatureRMSE Num `json:"feature_rmse"`
	// Edges counts undirected node pairs over all subgraphs: present before
	// (Orig), present before and after (Kept), only before (Removed), only
	// after (Added).
	EdgesOrig    int `json:"edges_orig"`
	EdgesKept    int `json:"edges_kept"`
	EdgesRemoved int `json:"edges_removed"`
	EdgesAdded   int `json:"edges_added"`
	// Weight statistics of the surviving debiased edges.
	WeightMean Num `json:"weight_mean"`
	WeightStd  Num `json:"weight_std"`
	WeightMax  Num `json:"weight_max"`
}

func editStats(orig, deb *view) (EditStats, error) {
	var dx, nx float64
	entries := 0
	var s EditStats
	var ws, ws2, wmax float64
	nw := 0
	var bo, bd, ao, ad []float32
	for i, g := range orig.sgs {
		xo, err := orig.x(i, bo)
		if err != nil {
			return s, err
		}
		xd, err := deb.x(i, bd)
		if err != nil {
			return s, err
		}
		if !orig.holds(i) {
			bo = xo
		}
		if !deb.holds(i) {
			bd = xd
		}
		for k, v := range xo {
			e := float64(xd[k]) - float64(v)
			dx += e * e
			nx += float64(v) * float64(v)
		}
		entries += len(xo)
		n := g.N()
		if ao, err = orig.a(i, ao); err != nil {
			return s, err
		}
		if ad, err = deb.a(i, ad); err != nil {
			return s, err
		}
		for u := 0; u < n; u++ {
			for w := u + 1; w < n; w++ {
				a, b := ao[u*n+w] != 0, ad[u*n+w] != 0
				switch {
				case a && b:
					s.EdgesKept++
				case a:
					s.EdgesRemoved++
				case b:
					s.EdgesAdded++
				}
				if a {
					s.EdgesOrig++
				}
				if b {
					x := float64(ad[u*n+w])
					ws += x
					ws2 += x * x
					wmax = max(wmax, x)
					nw++
				}
			}
		}
	}
	s.FeatureChange = Num(math.Sqrt(dx) / math.Sqrt(nx))
	s.FeatureRMSE = Num(math.Sqrt(dx / float64(max(1, entries))))
	s.WeightMean, s.WeightStd, s.WeightMax = Num(math.NaN()), Num(math.NaN()), Num(math.NaN())
	if nw > 0 {
		m := ws / float64(nw)
		s.WeightMean = Num(m)
		s.WeightStd = Num(math.Sqrt(max(0, ws2/float64(nw)-m*m)))
		s.WeightMax = Num(wmax)
	}
	return s, nil
}
