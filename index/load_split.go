// The train/validation/test split a load stores.

package index

import (
	"fmt"
	"math/rand/v2"

	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/index/split"
)

// SplitMode selects how Load splits the labelled nodes.
type SplitMode uint8

const (
	// SplitDIG is the DIG protocol of docs/method.md §1 (default): CPython's
	// MT19937 shuffle seeded with SplitOptions.Seed, cut by Params.
	SplitDIG SplitMode = iota
	// SplitFractions is a plain seeded shuffle (math/rand/v2 PCG seeded
	// with SplitOptions.Seed) cut by Fractions.
	SplitFractions
	// SplitNoSplit stores no split.
	SplitNoSplit
	// SplitNIFTY is the per-class split of the NIFTY loaders (split.NIFTY):
	// each class shuffled by CPython's MT19937 seeded with SplitOptions.Seed,
	// at most LabelNumber/2 training nodes per class.
	SplitNIFTY
)

// SplitOptions configure the split Load stores.
type SplitOptions struct {
	Mode SplitMode
	// Params are the DIG cut points; the zero value means split.Pokec, or
	// the parameters named by Protocol.
	Params split.Params
	// Protocol names DIG parameters ("nba" or "pokec", see
	// split.ParamsFor); it is used when Params is zero.
	Protocol string
	// Seed seeds the shuffle; 0 means split.DefaultSeed (20). To seed with
	// 0 itself, set ZeroSeed.
	Seed     uint64
	ZeroSeed bool
	// Fractions are the train and validation fractions of SplitFractions.
	Fractions split.Fractions
	// LabelNumber is NIFTY's label_number for SplitNIFTY (> 0).
	LabelNumber int
}

// PresetSplit returns the split a dump preset records: DIG with the
// preset's cut points, or NIFTY with its label number, seeded with
// split.DefaultSeed.
func PresetSplit(p dump.Preset) SplitOptions {
	if p.Split == dump.SplitNIFTY {
		return SplitOptions{Mode: SplitNIFTY, LabelNumber: p.LabelNumber}
	}
	return SplitOptions{Mode: SplitDIG, Params: p.DIG}
}

func (s *SplitOptions) params() (split.Params, error) {
	if s.Params != (split.Params{}) {
		return s.Params, s.Params.Validate()
	}
	if s.Protocol != "" {
		return split.ParamsFor(s.Protocol)
	}
	return split.Pokec, nil
}

// describe names the split with its parameters, for the load report.
func (s *SplitOptions) describe() string {
	switch s.Mode {
	case SplitDIG:
		p, _ := s.params()
		return fmt.Sprintf("dig: a %g, b %g, cap %d, seed %d", p.A, p.B, p.Cap, s.seed())
	case SplitNIFTY:
		return fmt.Sprintf("nifty: label number %d, seed %d", s.LabelNumber, s.seed())
	case SplitFractions:
		return fmt.Sprintf("fractions: train %g, val %g, seed %d", s.Fractions.Train, s.Fractions.Val, s.seed())
	}
	return "none"
}

func (s *SplitOptions) seed() uint64 {
	if s.Seed == 0 && !s.ZeroSeed {
		return split.DefaultSeed
	}
	return s.Seed
}

func (l *loader) computeSplit(sets *nodeSets, labelled []uint32) (split.Split, error) {
	known := func(v uint32) bool { return !sets.sens[0].Contains(v) }
	so := &l.opts.Split
	switch so.Mode {
	case SplitDIG:
		p, err := so.params()
		if err != nil {
			return split.Split{}, err
		}
		return split.DIG(labelled, known, p, so.seed())
	case SplitFractions:
		return split.Random(labelled, known, so.Fractions, rand.New(rand.NewPCG(so.seed(), 0)))
	case SplitNIFTY:
		var byClass [2][]uint32
		for _, v := range labelled {
			y := 0
			if sets.label[2].Contains(v) {
				y = 1
			}
			byClass[y] = append(byClass[y], v)
		}
		return split.NIFTY(byClass[0], byClass[1], known, so.LabelNumber, so.seed())
	}
	return split.Split{}, nil
}
