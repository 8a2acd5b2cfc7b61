package split

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// DefaultSeed is the seed of the DIG/FairGNN split (random.seed(20)).
const DefaultSeed = 20

// Params are the fractions of the DIG split (docs/method.md §1): with L the
// shuffled labelled nodes, train = L[0 : min(⌊A|L|⌋, Cap)],
// val = L[⌊A|L|⌋ : ⌊B|L|⌋] and test = L[⌊B|L|⌋ :] restricted to nodes whose
// sensitive attribute is known.
type Params struct {
	A, B float64
	// Cap bounds the training set; 0 means no bound.
	Cap int
}

// The parameters of docs/method.md §1.
var (
	NBA   = Params{A: 0.2, B: 0.55, Cap: 100}
	Pokec = Params{A: 0.1, B: 0.2, Cap: 50000}
)

// ErrParams reports invalid split parameters or input.
var ErrParams = errors.New("split: invalid parameters")

// ParamsFor returns the DIG parameters called "nba" or "pokec" (the DIG
// protocols of docs/method.md §1, as fasd load --split-protocol names them).
func ParamsFor(name string) (Params, error) {
	switch name {
	case "nba":
		return NBA, nil
	case "pokec":
		return Pokec, nil
	}
	return Params{}, fmt.Errorf("%w: unknown protocol %q (want nba or pokec)", ErrParams, name)
}

// Validate checks 0 ≤ A ≤ B ≤ 1 and Cap ≥ 0.
func (p Params) Validate() error {
	if !(p.A >= 0 && p.A <= p.B && p.B <= 1) || p.Cap < 0 {
		return fmt.Errorf("%w: want 0 ≤ A ≤ B ≤ 1 and Cap ≥ 0, got %+v", ErrParams, p)
	}
	return nil
}

// Split holds the node ids of each part, in shuffled order. The parts are
// disjoint; Test holds only nodes with a known sensitive attribute.
type Split struct {
	Train, Val, Test []uint32
}

// DIG splits the labelled nodes exactly as the DIG protocol of docs/method.md §1:
// labelled must hold the dense ids of the labelled nodes in ascending order
// (row order, as the Python reference takes them); they are shuffled with
// CPython's random.seed(seed) + random.shuffle, then cut by p. known reports
// whether a node's sensitive attribute is known; nil means all are.
//
// The cut points are int(A*|L|) and int(B*|L|) computed in float64, as Python
// computes them.
func DIG(labelled []uint32, known func(uint32) bool, p Params, seed uint64) (Split, error) {
	if err := p.Validate(); err != nil {
		return Split{}, err
	}
	for i := 1; i < len(labelled); i++ {
		if labelled[i] <= labelled[i-1] {
			return Split{}, fmt.Errorf("%w: labelled ids not strictly ascending at position %d", ErrParams, i)
		}
	}
	l := append([]uint32(nil), labelled...)
	NewMT19937(seed).Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
	n := float64(len(l))
	a, b := int(p.A*n), int(p.B*n)
	train := a
	if p.Cap > 0 {
		train = min(a, p.Cap)
	}
	return cut(l, train, a, b, known), nil
}

// NIFTY splits the labelled nodes as the NIFTY loaders (load_german,
// load_bail, load_credit, and BIND's load_income) do: class0 and class1 hold
// the dense ids of the labelled nodes of class 0 and class 1 in ascending
// order (numpy.where order). One CPython generator seeded with seed shuffles
// class0, then, continuing, class1 (random.shuffle on each). For each class
// with n nodes, cut points are int(0.5*n) and int(0.75*n) computed in
// float64: training takes the first min(int(0.5*n), labelNumber//2),
// validation the nodes from int(0.5*n) to int(0.75*n), test the rest.
// Each part lists the class-0 nodes first, then the class-1 nodes, as
// numpy.append builds them. (random.shuffle swaps the elements of a 1-D
// numpy array as it would those of a list, so the order is the same.)
//
// The published code has no unknown sensitive values and filters nothing;
// here, as in DIG, test keeps only nodes whose sensitive attribute is known
// (known nil: all are). labelNumber must be ≥ 0.
func NIFTY(class0, class1 []uint32, known func(uint32) bool, labelNumber int, seed uint64) (Split, error) {
	if labelNumber < 0 {
		return Split{}, fmt.Errorf("%w: negative label number %d", ErrParams, labelNumber)
	}
	for c, l := range [][]uint32{class0, class1} {
		for i := 1; i < len(l); i++ {
			if l[i] <= l[i-1] {
				return Split{}, fmt.Errorf("%w: class %d ids not strictly ascending at position %d", ErrParams, c, i)
			}
		}
	}
	for i, j := 0, 0; i < len(class0) && j < len(class1); {
		switch {
		case class0[i] == class1[j]:
			return Split{}, fmt.Errorf("%w: node %d is in both classes", ErrParams, class0[i])
		case class0[i] < class1[j]:
			i++
		default:
			j++
		}
	}
	g := NewMT19937(seed)
	var s Split
	for _, in := range [][]uint32{class0, class1} {
		l := append([]uint32(nil), in...)
		g.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
		n := float64(len(l))
		a, b := int(0.5*n), int(0.75*n)
		part := cut(l, min(a, labelNumber/2), a, b, known)
		s.Train = append(s.Train, part.Train...)
		s.Val = append(s.Val, part.Val...)
		s.Test = append(s.Test, part.Test...)
	}
	return s, nil
}

// Fractions are the parts of a plain random split: the first ⌊Train·n⌋
// shuffled nodes train, the next ⌊Val·n⌋ validate, the rest test.
type Fractions struct {
	Train, Val float64
}

// Random is the plain seeded split: labelled is shuffled with r (a
// math/rand/v2 generator) and cut by f. As in DIG, Test keeps only nodes
// whose sensitive attribute is known (nil known: all are).
func Random(labelled []uint32, known func(uint32) bool, f Fractions, r *rand.Rand) (Split, error) {
	if !(f.Train >= 0 && f.Val >= 0 && f.Train+f.Val <= 1) {
		return Split{}, fmt.Errorf("%w: want Train, Val ≥ 0 and Train+Val ≤ 1, got %+v", ErrParams, f)
	}
	if r == nil {
		return Split{}, fmt.Errorf("%w: nil *rand.Rand", ErrParams)
	}
	l := append([]uint32(nil), labelled...)
	r.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
	n := float64(len(l))
	a := int(math.Floor(f.Train * n))
	b := min(len(l), a+int(math.Floor(f.Val*n)))
	return cut(l, a, a, b, known), nil
}

func cut(l []uint32, train, a, b int, known func(uint32) bool) Split {
	s := Split{
		Train: l[:train:train],
		Val:   l[a:b:b],
	}
	for _, v := range l[b:] {
		if known == nil || known(v) {
			s.Test = append(s.Test, v)
		}
	}
	return s
}
