// Package split divides the labelled nodes of a graph into training,
// validation and test sets.
//
// # The DIG protocol
//
// The default, DIG, reproduces the split of the DIG fairgraph code that
// docs/method.md §1 specifies, bit for bit: the labelled row indices in ascending
// order are shuffled with CPython's random.seed(20) followed by
// random.shuffle, then cut at ⌊a|L|⌋ and ⌊b|L|⌋; the training part is capped
// and the test part keeps only nodes with a known sensitive attribute. To
// make this exact the package ports CPython's generator: MT19937 seeded by
// init_by_array with the seed's 32-bit words, getrandbits (top bits of a
// 32-bit output), randbelow (rejection) and shuffle (i from n-1 down to 1).
// On NBA (313 labelled nodes, a=0.2, b=0.55, cap=100) it gives 62/110/141.
//
// # The NIFTY protocol
//
// NIFTY reproduces the per-class split of the NIFTY loaders (German, Bail,
// Credit) and of BIND (Income): the labelled nodes of class 0 and of class 1,
// each in ascending order, are shuffled one after the other by one generator
// seeded once (random.seed(20), then random.shuffle twice); each class is
// cut at int(0.5n) and int(0.75n), with at most label_number//2 training
// nodes per class. On German credit (300 + 700 labelled nodes, label_number
// 100) it gives 100/250/250. The published data have no unknown sensitive
// values; as in DIG, test keeps only nodes whose sensitive value is known.
//
// # The plain split
//
// Random shuffles with an injected math/rand/v2 generator and cuts by
// fractions. It is not reproducible across implementations, only across runs
// with the same seed.
//
// # Invariants
//
// The three parts are disjoint, in shuffled order, and drawn from the input;
// ids are the graph's dense uint32 node ids. No function keeps a
// reference to its input.
package split
